//! The agent's `ask_user` question as a small form in the page, and a running turn stopped
//! with the Stop button.

use crate::browser::{Browser, Test, click, element, type_into, until_text};
use crate::common::{BASH_ALLOWED, ask};
use crate::page::{Dash, open, prompt};
use zeroclaw_testkit::openai;

pub const TESTS: &[Test] = &[
    (
        "questions::an_ask_user_question_is_answered_in_a_form_and_the_answer_reaches_the_model",
        an_ask_user_question_is_answered_in_a_form_and_the_answer_reaches_the_model,
    ),
    (
        "questions::the_stop_button_cancels_a_running_turn",
        the_stop_button_cancels_a_running_turn,
    ),
];

fn an_ask_user_question_is_answered_in_a_form_and_the_answer_reaches_the_model(b: &Browser) {
    let dash = Dash::new();
    let id = dash.session("questions");
    dash.env.fake.push(ask("call_q", "Which colour?", None));
    dash.env.fake.push(openai::text(&["Blue it is."]));
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        prompt(c, "pick a colour").await;
        until_text(c, "form.question", "Which colour?").await;
        type_into(c, "form.question input[name='answer']", "blue\u{E007}").await;
        until_text(c, ".note", "Answered: blue").await;
        until_text(c, ".tool[data-call='call_q'] .tool-result", "blue").await;
        until_text(c, ".msg.assistant", "Blue it is.").await;
    });
    let requests = dash.env.fake.wait_for_requests(2);
    assert_eq!(
        crate::common::tool_content(&requests[1].body, "call_q"),
        "blue"
    );
}

fn the_stop_button_cancels_a_running_turn(b: &Browser) {
    let dash = Dash::with(&format!(
        "[gateway]\nlisten = \"127.0.0.1:0\"\n{BASH_ALLOWED}"
    ));
    let id = dash.session("stop");
    dash.env
        .fake
        .push(crate::common::bash_call("call_long", "sleep 300", 2));
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        prompt(c, "run something long").await;
        element(c, ".tool[data-call='call_long'][data-state='running']").await;
        click(c, "#stop:not([hidden])").await;
        until_text(c, ".turn-end.cancelled", "stopped").await;
        element(c, "#stop[hidden]").await;
        until_text(c, ".tool[data-call='call_long'] .tool-result", "").await;
    });
}

//! The keyboard alone runs a turn: Enter sends the prompt, an approval's "Allow once"
//! takes the focus when it arrives, and Enter allows the call.

use crate::browser::{Browser, Test, count, element, until, until_text};
use crate::common::bash_call;
use crate::page::{Dash, open, prompt};
use serde_json::json;
use zeroclaw_testkit::openai;

pub const TESTS: &[Test] = &[(
    "keyboard::an_approval_takes_the_focus_and_enter_allows_it_once",
    an_approval_takes_the_focus_and_enter_allows_it_once,
)];

fn an_approval_takes_the_focus_and_enter_allows_it_once(b: &Browser) {
    let dash = Dash::new();
    let id = dash.session("keyboard");
    dash.env.fake.push(bash_call("call_k", "echo typed", 2));
    dash.env.fake.push(openai::text(&["Done by keyboard."]));
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        prompt(c, "run it").await;
        element(c, ".tool[data-call='call_k'] .approval").await;
        until(
            c,
            "document.activeElement && document.activeElement.dataset.decision === 'allow_once'",
            json!(null),
        )
        .await;
        c.active_element()
            .await
            .unwrap()
            .send_keys("\u{E007}")
            .await
            .unwrap();
        until_text(c, ".tool[data-call='call_k'] .tool-result", "typed").await;
        until_text(c, ".msg.assistant", "Done by keyboard.").await;
        assert_eq!(count(c, ".approval").await, 0);
    });
}

//! The sandbox on the dashboard: the session's head names its sandbox mode, and an
//! approval to run outside the sandbox says so, with the model's reason, and offers no
//! "always".

use crate::browser::{Browser, Test, click, count, texts, until_text};
use crate::common::tool_call;
use crate::page::{Dash, open, prompt};
use serde_json::json;
use zeroclaw_testkit::openai;

pub const TESTS: &[Test] = &[(
    "sandbox::the_head_names_the_mode_and_an_escape_approval_says_what_and_why",
    the_head_names_the_mode_and_an_escape_approval_says_what_and_why,
)];

fn the_head_names_the_mode_and_an_escape_approval_says_what_and_why(b: &Browser) {
    let dash = Dash::new();
    let id = dash.session("sandboxed");
    let made = dash.env.work.join("escaped");
    dash.env.fake.push(tool_call(
        "call_1",
        "bash",
        json!({
            "command": format!("touch {}", made.display()),
            "sandbox": "escape",
            "justification": "the <b>cache</b> is outside",
        }),
        2,
    ));
    dash.env.fake.push(openai::text(&["Escaped once."]));
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        until_text(c, "#session-meta", "sandbox workspace-write").await;
        prompt(c, "escape").await;
        let card = ".tool[data-call='call_1'] .approval.escape";
        until_text(c, &format!("{card} .escape-what"), "outside the sandbox").await;
        until_text(
            c,
            &format!("{card} .escape-why"),
            "Why (the model's words): the <b>cache</b> is outside",
        )
        .await;
        // The reason is text, never markup.
        assert_eq!(count(c, &format!("{card} .escape-why b")).await, 0);
        assert_eq!(
            texts(c, &format!("{card} button")).await,
            ["Run outside the sandbox, once", "Reject"]
        );
        click(c, &format!("{card} button[data-decision='allow_once']")).await;
        until_text(c, ".msg.assistant", "Escaped once.").await;
    });
    assert!(made.exists(), "allowed once, the command ran");
}

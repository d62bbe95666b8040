//! Two windows on one session see the same events live; a bash call's approval is clicked
//! in one, its buttons leave the other, and both show the result card.

use crate::browser::{Browser, Test, click, count, element, screenshot, until, until_text};
use crate::common::bash_call;
use crate::page::{Dash, connected, open, prompt};
use serde_json::json;
use zeroclaw_testkit::{Gate, openai};

pub const TESTS: &[Test] = &[(
    "approvals::two_windows_see_one_turn_and_an_approval_clicked_in_one_leaves_both",
    two_windows_see_one_turn_and_an_approval_clicked_in_one_leaves_both,
)];

fn two_windows_see_one_turn_and_an_approval_clicked_in_one_leaves_both(b: &Browser) {
    let dash = Dash::new();
    let id = dash.session("approvals");
    dash.env
        .fake
        .push(bash_call("call_1", "echo marker-$((6*7))", 3));
    // The answer after the tool waits for the test: the turn is still running while the
    // second window is checked.
    let gate = Gate::new();
    dash.env.fake.push(
        openai::Builder::new()
            .wait_for(&gate)
            .text("The shell said ")
            .text("marker-42.")
            .build(),
    );
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        let first = c.window().await.unwrap();
        // A second window, signed in by the first (which hands it the session's proof), on
        // the same session.
        let second = c.new_window(false).await.unwrap().handle;
        c.switch_to_window(second.clone()).await.unwrap();
        c.goto(&dash.url).await.unwrap();
        connected(c).await;
        open(c, &id).await;

        c.switch_to_window(first.clone()).await.unwrap();
        open(c, &id).await;
        prompt(c, "what is six times seven?").await;
        let card = ".tool[data-call='call_1']";
        element(
            c,
            &format!("{card} .approval button[data-decision='allow_once']"),
        )
        .await;
        until_text(c, &format!("{card} pre"), "echo marker-$((6*7))").await;
        screenshot(c, "approval-desktop").await;

        // The other window shows the same request, live.
        c.switch_to_window(second.clone()).await.unwrap();
        element(
            c,
            &format!("{card} .approval button[data-decision='allow_once']"),
        )
        .await;

        // Allowed once in the first window...
        c.switch_to_window(first.clone()).await.unwrap();
        click(c, &format!("{card} button[data-decision='allow_once']")).await;
        until_text(c, &format!("{card} .tool-result"), "marker-42").await;
        assert_eq!(count(c, ".approval").await, 0);

        // ...the second window's buttons are gone while the turn still runs, and it has
        // the result, then the answer.
        c.switch_to_window(second.clone()).await.unwrap();
        until_text(c, &format!("{card} .tool-result"), "marker-42").await;
        until(
            c,
            "document.querySelectorAll('.approval').length === 0",
            json!(null),
        )
        .await;
        element(c, "#stop:not([hidden])").await;
        gate.open();
        until_text(c, ".msg.assistant", "The shell said marker-42.").await;
        until_text(c, ".turn-end", "done").await;
        assert_eq!(
            element(c, card).await.attr("data-state").await.unwrap(),
            Some("done".into())
        );
    });
    // The daemon ran it once, as the model was told.
    let requests = dash.env.fake.wait_for_requests(2);
    let content = crate::common::tool_content(&requests[1].body, "call_1");
    assert!(content.contains("marker-42"), "{content}");
}

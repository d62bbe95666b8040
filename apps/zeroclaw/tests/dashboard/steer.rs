//! Two windows on one session: an approval answered in one leaves the other at once — on
//! `approval_resolved`, while the call still runs and before its result — and the list
//! shows the session "waiting" meanwhile; a message typed while the turn runs steers it
//! (Enter), reaching the model at its next step and shown in both windows.

use crate::browser::{Browser, Test, click, count, element, until, until_text};
use crate::common::bash_call;
use crate::page::{Dash, connected, open, prompt};
use serde_json::json;
use zeroclaw_testkit::openai;

pub const TESTS: &[Test] = &[(
    "steer::an_approval_answered_in_one_window_leaves_the_other_before_the_result_and_enter_steers",
    an_approval_answered_in_one_window_leaves_the_other_before_the_result_and_enter_steers,
)];

fn an_approval_answered_in_one_window_leaves_the_other_before_the_result_and_enter_steers(
    b: &Browser,
) {
    let dash = Dash::new();
    let id = dash.session("steering");
    // The command blocks on a FIFO until the test writes to it: the call is still running
    // while the windows are checked.
    let fifo = dash.env.work.join("go.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    dash.env.fake.push(bash_call("call_1", "cat go.fifo", 2));
    dash.env.fake.push(openai::text(&["Done, and noted."]));
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        let first = c.window().await.unwrap();
        let second = c.new_window(false).await.unwrap().handle;
        c.switch_to_window(second.clone()).await.unwrap();
        c.goto(&dash.url).await.unwrap();
        connected(c).await;
        open(c, &id).await;

        c.switch_to_window(first.clone()).await.unwrap();
        open(c, &id).await;
        prompt(c, "read the pipe").await;
        let card = ".tool[data-call='call_1']";
        let allow = format!("{card} .approval button[data-decision='allow_once']");
        element(c, &allow).await;

        // The second window shows the request, and its list shows the session waiting.
        c.switch_to_window(second.clone()).await.unwrap();
        element(c, &allow).await;
        element(c, &format!(".session-item[data-id='{id}'] .waiting-label")).await;

        // Allowed in the first window...
        c.switch_to_window(first.clone()).await.unwrap();
        click(c, &allow).await;

        // ...the second window's buttons go while the call still runs (no result yet).
        c.switch_to_window(second.clone()).await.unwrap();
        until(
            c,
            "document.querySelectorAll('.approval').length === 0",
            json!(null),
        )
        .await;
        assert_eq!(count(c, &format!("{card} .tool-result")).await, 0);
        until_text(c, &format!("{card} .tool-state"), "allowed").await;
        until(
            c,
            &format!(
                "document.querySelector(\".session-item[data-id='{id}'] .waiting-label\") === null"
            ),
            json!(null),
        )
        .await;

        // Enter while the turn runs steers it.
        element(c, "#send").await;
        until_text(c, "#send", "Steer").await;
        prompt(c, "also say noted").await;
        // The call ends; the turn takes the steer at its next step.
        let opened = tokio::task::spawn_blocking(move || std::fs::write(fifo, "from the pipe\n"));
        opened.await.unwrap().unwrap();
        until_text(c, &format!("{card} .tool-result"), "from the pipe").await;
        until_text(c, ".msg.user", "also say noted").await;
        until_text(c, ".msg.assistant", "Done, and noted.").await;
        c.switch_to_window(first.clone()).await.unwrap();
        until_text(c, ".msg.user", "also say noted").await;
        until_text(c, ".turn-end", "done").await;
    });
    let requests = dash.env.fake.wait_for_requests(2);
    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    assert_eq!(messages.last().unwrap()["content"], "also say noted");
}

//! Subagents: a `task` call's child session shows inside the call's card — its calls
//! nested in a folded block, never in the conversation's flow; its approval asked as the
//! subagent's, answered in one window and gone from the other at once (before its call's
//! result); its text its own answer, not the parent's — and a link opens the child's
//! session (which the list does not show), whose head links back. Reopened from the
//! history (no tagged events are replayed), the call still links to it.

use crate::browser::{Browser, Test, click, count, element, screenshot, texts, until, until_text};
use crate::common::{bash_call, tool_call, tool_content};
use crate::page::{Dash, connected, loaded, open, prompt};
use serde_json::json;
use zeroclaw_testkit::openai;

pub const TESTS: &[Test] = &[(
    "subagents::a_subagents_call_and_approval_show_inside_its_task_card_and_the_link_opens_its_session",
    a_subagents_call_and_approval_show_inside_its_task_card_and_the_link_opens_its_session,
)];

fn a_subagents_call_and_approval_show_inside_its_task_card_and_the_link_opens_its_session(
    b: &Browser,
) {
    let dash = Dash::new();
    let agents = dash.env.work.join(".zeroclaw").join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("runner.md"),
        "---\ndescription: Runs commands\ntools: bash\n---\nRun what you are told.\n",
    )
    .unwrap();
    let id = dash.session("delegating");
    // The child's command blocks on a FIFO until the test writes to it: its call is still
    // running while the second window is checked.
    let fifo = dash.env.work.join("go.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // The parent hands the work to `runner`; the child runs a bash call (which asks) and
    // answers; the parent then answers.
    dash.env.fake.push(tool_call(
        "call_task",
        "task",
        json!({"description": "Check the tree", "prompt": "run the check", "agent": "runner"}),
        2,
    ));
    dash.env.fake.push(bash_call("call_bash", "cat go.fifo", 1));
    dash.env
        .fake
        .push(openai::text(&["CHILD-ANSWER: ", "it printed child-ran"]));
    dash.env
        .fake
        .push(openai::text(&["PARENT-ANSWER: all checked"]));
    let task = ".tool[data-call='call_task']";
    let nested = format!("{task} .subagent details.subagent-block .tool[data-call='call_bash']");
    let row = format!("{task} .subagent-asks .approval.subagent-approval");
    let allow = format!("{row} button[data-decision='allow_once']");
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
        prompt(c, "delegate the check").await;

        // The child's call is a card inside the task card's folded block, not in the flow.
        element(c, &nested).await;
        assert_eq!(
            count(c, "#transcript > .tool[data-call='call_bash']").await,
            0
        );
        assert_eq!(
            count(c, &format!("{task} details.subagent-block[open]")).await,
            0,
            "the subagent's block is folded"
        );
        // Its approval is asked outside the fold, as the subagent's.
        until_text(c, &row, "The subagent “Check the tree” asks to run bash").await;
        until_text(c, &row, "cat go.fifo").await;
        until_text(c, &format!("{task} .subagent-count"), "Subagent · 1 step").await;
        until_text(
            c,
            &format!("{task} .subagent-latest"),
            "waiting for approval: bash: cat go.fifo",
        )
        .await;
        screenshot(c, "subagent-desktop").await;

        // The second window asks too; allowed in the first, it leaves the second while the
        // child's call still runs.
        c.switch_to_window(second.clone()).await.unwrap();
        element(c, &allow).await;
        c.switch_to_window(first.clone()).await.unwrap();
        click(c, &allow).await;
        c.switch_to_window(second.clone()).await.unwrap();
        until(
            c,
            "document.querySelectorAll('.approval').length === 0",
            json!(null),
        )
        .await;
        assert_eq!(count(c, &format!("{nested} .tool-result")).await, 0);
        until_text(c, &format!("{nested} .tool-state"), "allowed").await;
        until_text(c, &format!("{task} .subagent-latest"), "bash: cat go.fifo").await;
        let written = tokio::task::spawn_blocking(move || std::fs::write(fifo, "child-ran\n"));
        written.await.unwrap().unwrap();
        until_text(c, ".msg.assistant", "PARENT-ANSWER: all checked").await;
        c.switch_to_window(first.clone()).await.unwrap();

        // The child's call ran; its text is its answer in the block, the parent's after it.
        until_text(c, ".msg.assistant", "PARENT-ANSWER: all checked").await;
        until_text(
            c,
            &format!("{task} .subagent-answer"),
            "CHILD-ANSWER: it printed child-ran",
        )
        .await;
        until_text(c, &format!("{task} > .tool-result"), "CHILD-ANSWER").await;
        until_text(
            c,
            &format!("{task} .subagent-count"),
            "Subagent · 1 step · done",
        )
        .await;
        for answer in texts(c, ".msg.assistant").await {
            assert!(!answer.contains("CHILD-ANSWER"), "{answer}");
        }
        assert_eq!(count(c, ".approval").await, 0);
        until_text(c, ".turn-end", "done").await;
        // Unfolded, the block shows the child's call with its result.
        click(c, &format!("{task} details.subagent-block > summary")).await;
        element(c, &format!("{task} details.subagent-block[open]")).await;
        until_text(c, &format!("{nested} .tool-result"), "child-ran").await;
    });

    // The child session, as the daemon knows it; the list does not show it.
    let all = dash
        .env
        .daemon
        .client()
        .call("session/list", json!({"includeChildren": true}));
    let child = all["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["parentToolCallId"] == "call_task")
        .expect("the child session is stored")["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let requests = dash.env.fake.wait_for_requests(4);
    assert!(tool_content(&requests[2].body, "call_bash").contains("child-ran"));

    b.block(async {
        assert_eq!(
            count(c, &format!(".session-item[data-id='{child}']")).await,
            0
        );
        // The link opens the child's session: its prompt, its call, its answer.
        click(c, &format!("{task} a.child-link[data-session='{child}']")).await;
        loaded(c, &child).await;
        until_text(c, "#session-title", "Check the tree").await;
        until_text(c, ".msg.user", "run the check").await;
        element(c, "#transcript > .tool[data-call='call_bash']").await;
        until_text(c, ".msg.assistant", "CHILD-ANSWER: it printed child-ran").await;
        // Its head links back to the parent, whose replay has the call and its link again.
        click(c, &format!("#parent-link[data-session='{id}']")).await;
        loaded(c, &id).await;
        until_text(c, &format!("{task} > .tool-result"), "CHILD-ANSWER").await;
        element(c, &format!("{task} a.child-link[data-session='{child}']")).await;
        until_text(c, ".msg.assistant", "PARENT-ANSWER: all checked").await;
    });
}

//! Subagents: a `task` call's child session shows inside the call's card — its calls
//! nested in a folded block, never in the conversation's flow; its approval asked as the
//! subagent's and answered in the page; its text its own answer, not the parent's — and a
//! link opens the child's session (which the list does not show), whose head links back.
//! Reopened from the history (no tagged events are replayed), the call still links to it.

use crate::browser::{Browser, Test, click, count, element, screenshot, texts, until_text};
use crate::common::{bash_call, tool_call, tool_content};
use crate::page::{Dash, loaded, open, prompt};
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
    // The parent hands the work to `runner`; the child runs a bash call (which asks) and
    // answers; the parent then answers.
    dash.env.fake.push(tool_call(
        "call_task",
        "task",
        json!({"description": "Check the tree", "prompt": "run the check", "agent": "runner"}),
        2,
    ));
    dash.env
        .fake
        .push(bash_call("call_bash", "echo child-ran", 1));
    dash.env
        .fake
        .push(openai::text(&["CHILD-ANSWER: ", "it printed child-ran"]));
    dash.env
        .fake
        .push(openai::text(&["PARENT-ANSWER: all checked"]));
    let task = ".tool[data-call='call_task']";
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        prompt(c, "delegate the check").await;

        // The child's call is a card inside the task card's folded block, not in the flow.
        let nested =
            format!("{task} .subagent details.subagent-block .tool[data-call='call_bash']");
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
        // Its approval is asked outside the fold, as the subagent's, and Allow lets it run.
        let row = format!("{task} .subagent-asks .approval.subagent-approval");
        until_text(c, &row, "The subagent “Check the tree” asks to run bash").await;
        until_text(c, &row, "echo child-ran").await;
        until_text(c, &format!("{task} .subagent-count"), "Subagent · 1 step").await;
        until_text(
            c,
            &format!("{task} .subagent-latest"),
            "waiting for approval: bash: echo child-ran",
        )
        .await;
        screenshot(c, "subagent-desktop").await;
        click(c, &format!("{row} button[data-decision='allow_once']")).await;

        // The child's call ran; its text is its answer in the block, the parent's after it.
        until_text(c, ".msg.assistant", "PARENT-ANSWER: all checked").await;
        until_text(c, &format!("{nested} .tool-result"), "child-ran").await;
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
        until_text(
            c,
            &format!("{task} .subagent-body .tool-result"),
            "child-ran",
        )
        .await;
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

//! Approvals: our `approval_request` is the editor's `session/request_permission` (the
//! tool call with its kind, title and location; options whose id is their kind), and the
//! editor's choice is our `session/approve`.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{StopReason, ToolCallStatus};
use serde_json::json;
use zeroclaw_testkit::openai;

/// A command whose output shows a shell ran it.
const COMMAND: &str = if cfg!(windows) {
    "set /a x=6*7 >nul && call echo marker-%x%"
} else {
    "echo marker-$((6*7))"
};

#[test]
fn an_allowed_tool_call_runs_and_its_result_is_a_completed_update() {
    let env = Env::new("", "");
    env.fake.push(bash_call("call_1", COMMAND, 3));
    env.fake.push(openai::text(&["It printed 42."]));
    let editor = Editor::new(Permission::Select("allow_once"));
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        cx.send_request(text_prompt(&session, "compute"))
            .block_task()
            .await
    }));
    assert_eq!(exit.outcome.unwrap().stop_reason, StopReason::EndTurn);

    let seen = editor.seen();
    assert_eq!(
        seen.kinds(),
        ["tool_call", "tool_call_update", "agent_message_chunk"]
    );
    let updates = seen.json();
    assert_eq!(updates[0]["toolCallId"], "call_1");
    assert_eq!(updates[0]["title"], format!("bash: `{COMMAND}`"));
    assert_eq!(updates[0]["kind"], "execute");
    assert_eq!(seen.status(0), Some(ToolCallStatus::Pending));
    assert_eq!(updates[0]["rawInput"], json!({"command": COMMAND}));
    assert_eq!(updates[1]["toolCallId"], "call_1");
    assert_eq!(updates[1]["status"], "completed");
    let text = updates[1]["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("marker-42"), "{}", updates[1]);
    assert_eq!(updates[1]["content"][0]["type"], "content");

    assert_eq!(seen.permissions.len(), 1);
    let asked = serde_json::to_value(&seen.permissions[0]).unwrap();
    assert_eq!(asked["toolCall"]["toolCallId"], "call_1");
    assert_eq!(asked["toolCall"]["kind"], "execute");
    assert_eq!(asked["toolCall"]["title"], format!("bash: `{COMMAND}`"));
    let options: Vec<(String, String)> = asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["optionId"].as_str().unwrap().into(),
                o["kind"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        options,
        [
            ("allow_once".into(), "allow_once".into()),
            ("allow_always".into(), "allow_always".into()),
            ("reject_once".into(), "reject_once".into())
        ]
    );
    let body = &env.fake.wait_for_requests(2)[1].body;
    assert!(tool_content(body, "call_1").contains("marker-42"));
}

#[test]
fn a_rejected_tool_call_does_not_run_and_fails() {
    let env = Env::new("", "");
    let marker = env.work.join("ran");
    env.fake
        .push(bash_call("call_1", &touch_command(&marker), 2));
    env.fake.push(openai::text(&["Understood."]));
    let editor = Editor::new(Permission::Select("reject_once"));
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        cx.send_request(text_prompt(&session, "touch it"))
            .block_task()
            .await
    }));
    assert_eq!(exit.outcome.unwrap().stop_reason, StopReason::EndTurn);
    assert!(!marker.exists(), "a rejected call ran");
    let seen = editor.seen();
    let updates = seen.json();
    assert_eq!(updates[1]["sessionUpdate"], "tool_call_update");
    assert_eq!(updates[1]["status"], "failed", "{}", updates[1]);
    let body = &env.fake.wait_for_requests(2)[1].body;
    let content = tool_content(body, "call_1");
    assert!(content.contains("reject"), "{content}");
}

#[test]
fn a_file_tool_call_has_its_kind_and_an_absolute_location() {
    let env = Env::new("", "");
    std::fs::write(env.work.join("notes.txt"), "on disk\n").unwrap();
    env.fake.push(tool_call(
        "call_1",
        "read_file",
        json!({"path": "notes.txt"}),
        2,
    ));
    env.fake.push(openai::text(&["Read."]));
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        cx.send_request(text_prompt(&session, "read notes"))
            .block_task()
            .await
    }));
    assert_eq!(exit.outcome.unwrap().stop_reason, StopReason::EndTurn);
    let seen = editor.seen();
    let call = &seen.json()[0];
    assert_eq!(call["kind"], "read");
    assert_eq!(call["title"], "read_file notes.txt");
    assert_eq!(
        call["locations"],
        json!([{"path": env.work.join("notes.txt")}])
    );
    // read_file needs no approval.
    assert!(seen.permissions.is_empty());
}

#[test]
fn the_editors_permission_request_is_withdrawn_when_another_client_answers() {
    let env = Env::new("", "");
    env.fake.push(bash_call("call_1", COMMAND, 2));
    env.fake.push(openai::text(&["Answered elsewhere."]));
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        let prompt = cx.send_request(text_prompt(&session, "compute"));
        editor
            .wait("the permission request", |seen| seen.permissions.len() == 1)
            .await;
        // Another client (a terminal, the dashboard) attaches and approves.
        tokio::task::block_in_place(|| {
            let mut other = env.daemon.client();
            other.call("session/load", json!({"sessionId": session}));
            let ask = other.wait_event("approval_request");
            other.call(
                "session/approve",
                json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
            );
        });
        editor
            .wait("the permission request withdrawn", |seen| seen.withdrawn == 1)
            .await;
        guard("the prompt's answer", prompt.block_task()).await
    }));
    assert_eq!(exit.outcome.unwrap().stop_reason, StopReason::EndTurn);
    let seen = editor.seen();
    assert_eq!(seen.permissions.len(), 1);
    let updates = seen.json();
    let result = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update")
        .unwrap();
    assert_eq!(result["status"], "completed", "{result}");
}

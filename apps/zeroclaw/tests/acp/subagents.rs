//! A subagent's events (tagged `parentToolCallId`) reach the editor as tool calls of their
//! own under the `task` call (ids unique under it, titles saying so, `_meta.zeroclaw`
//! naming the task call and the child session); the child's text is never the parent's
//! answer, and its approval is asked of the editor and answered on the parent session.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::StopReason;
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn a_subagents_calls_are_tool_calls_under_the_task_and_its_text_is_not_the_answer() {
    let env = Env::new("", "");
    let agents = env.work.join(".zeroclaw").join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("runner.md"),
        "---\ndescription: Runs commands\ntools: bash\n---\nRun what you are told.",
    )
    .unwrap();
    env.fake.push(tool_call(
        "call_1",
        "task",
        json!({"description": "Run it", "prompt": "run echo", "agent": "runner"}),
        2,
    ));
    // The child's model reuses the parent's call id: the editor still tells them apart.
    env.fake.push(bash_call("call_1", "echo child-ran", 1));
    env.fake
        .push(openai::text(&["CHILD-TEXT it printed child-ran"]));
    env.fake.push(openai::text(&["parent done"]));
    let editor = Editor::new(Permission::Select("allow_once"));
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        cx.send_request(text_prompt(&session, "delegate"))
            .block_task()
            .await
    }));
    assert_eq!(exit.outcome.unwrap().stop_reason, StopReason::EndTurn);
    assert!(exit.status.success(), "{}", exit.stderr);

    let seen = editor.seen();
    assert_eq!(
        seen.kinds(),
        [
            "tool_call",
            "tool_call",
            "tool_call_update",
            "tool_call_update",
            "agent_message_chunk"
        ]
    );
    let updates = seen.json();
    assert_eq!(updates[0]["toolCallId"], "call_1");
    assert_eq!(updates[1]["toolCallId"], "call_1/call_1");
    assert_eq!(updates[1]["title"], "subagent · bash: `echo child-ran`");
    assert_eq!(
        updates[1]["_meta"]["zeroclaw"]["parentToolCallId"],
        "call_1"
    );
    assert!(updates[1]["_meta"]["zeroclaw"]["childSessionId"].is_string());
    assert_eq!(updates[2]["toolCallId"], "call_1/call_1");
    assert_eq!(updates[2]["status"], "completed");
    assert_eq!(updates[3]["toolCallId"], "call_1");
    assert_eq!(updates[3]["status"], "completed");
    // The child's answer is the task's result, not a message of the parent's.
    let text = updates[3]["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("CHILD-TEXT"), "{}", updates[3]);
    assert_eq!(seen.text_of("agent_message_chunk"), "parent done");

    // The child's approval was asked of the editor, as the subagent's.
    assert_eq!(seen.permissions.len(), 1);
    let asked = serde_json::to_value(&seen.permissions[0]).unwrap();
    assert_eq!(asked["toolCall"]["toolCallId"], "call_1/call_1");
    assert_eq!(
        asked["toolCall"]["title"],
        "subagent · bash: `echo child-ran`"
    );
    let body = &env.fake.wait_for_requests(3)[2].body;
    assert!(tool_content(body, "call_1").contains("child-ran"));
}

//! The agent's plan: a `todo_write` call is a `plan` event with its entries, stored and
//! replayed in order, asked about by no one (it changes nothing).

use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn a_todo_write_call_is_a_plan_event_with_its_entries_live_and_in_the_replay() {
    let env = Env::new("", "");
    let todos = json!({"todos": [
        {"content": "Read the code", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending", "priority": "high"},
    ]});
    env.fake.push(tool_call("call_1", "todo_write", todos, 2));
    env.fake.push(openai::text(&["planned"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "plan it", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert_eq!(
        turn.types(),
        [
            "tool_call",
            "tool_result",
            "plan",
            "agent_message_chunk",
            "turn_complete"
        ]
    );
    let entries = json!([
        {"content": "Read the code", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress"},
        {"content": "Run the tests", "status": "pending", "priority": "high"},
    ]);
    let plan = turn.one("plan");
    assert_eq!(plan["entries"], entries);
    assert_eq!(plan["turnId"], turn.result()["turnId"]);
    assert!(output(turn.one("tool_result")).contains("[~] Fix the bug"));

    // The model is sent the call and its result, not the plan message.
    env.fake.push(openai::text(&["ok"]));
    client.prompt(&session, "next", no_questions).result();
    let body = &env.fake.wait_for_requests(3)[2].body;
    assert_eq!(
        roles(body),
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );

    // Another client's replay carries the plan where it happened.
    let mut other = env.daemon.client();
    let (replay, _) = other.load_with_replay(&session);
    let plans: Vec<_> = replay.iter().filter(|e| e["type"] == "plan").collect();
    assert_eq!(plans.len(), 1);
    assert_eq!(plans[0]["entries"], entries);
    let stored = other.messages(&session);
    let kinds_stored = kinds(&stored);
    assert!(kinds_stored.contains(&"plan"), "{kinds_stored:?}");
}

#[test]
fn a_refused_todo_write_call_sends_no_plan() {
    let env = Env::new("", "");
    env.fake.push(tool_call(
        "call_1",
        "todo_write",
        json!({"todos": [{"content": "x", "status": "done"}]}),
        1,
    ));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "plan it", no_questions);
    assert!(turn.of_type("plan").is_empty());
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    assert!(
        output(result).contains("must be one of"),
        "{}",
        output(result)
    );
}

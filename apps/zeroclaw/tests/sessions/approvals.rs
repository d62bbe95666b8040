//! Approvals of bash calls: asked for with an `approval_request` event and answered with
//! `session/approve` (allow once, allow always, reject), or decided by the config (allow,
//! deny), or refused when nobody answers in time. The model is told what happened.

use crate::common::*;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

/// A command whose output shows a shell ran it: 6 × 7 computed, in bash or in `cmd` (the
/// Windows shell tool; `call` expands `%x%` after `set` ran).
const MARKER_COMMAND: &str = if cfg!(windows) {
    "set /a x=6*7 >nul && call echo marker-%x%"
} else {
    "echo marker-$((6*7))"
};

#[test]
fn an_approved_bash_call_runs_and_its_output_goes_back_to_the_model() {
    let env = Env::new("", "");
    env.fake.push(bash_call("call_1", MARKER_COMMAND, 8));
    env.fake.push(openai::text(&["The answer ", "is 42."]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(
        &session,
        "what is six times seven?",
        decide_all("allow_once"),
    );

    assert_eq!(
        turn.types(),
        [
            "tool_call",
            "approval_request",
            "approval_resolved",
            "tool_result",
            "agent_message_chunk",
            "agent_message_chunk",
            "turn_complete"
        ]
    );
    let call = turn.one("tool_call");
    assert_eq!(call["toolCallId"], "call_1");
    assert_eq!(call["name"], "bash");
    assert_eq!(call["rawInput"], json!({"command": MARKER_COMMAND}));
    let ask = turn.one("approval_request");
    assert_eq!(ask["toolCallId"], "call_1");
    assert_eq!(ask["name"], "bash");
    assert_eq!(ask["rawInput"], call["rawInput"]);
    assert_eq!(
        ask["options"],
        json!(["allow_once", "allow_always", "reject"])
    );
    assert!(!ask["requestId"].as_str().unwrap().is_empty());
    let result = turn.one("tool_result");
    assert_eq!(result["toolCallId"], "call_1");
    assert_eq!(result["name"], "bash");
    assert_eq!(result["isError"], false, "{result}");
    let output = output(result);
    assert!(output.contains("marker-42"), "{output}");

    let answer = turn.result();
    assert_eq!(answer["stopReason"], "end_turn");
    assert_eq!(answer["text"], "The answer is 42.");
    // Usage sums both model calls: 5+10 in, 2+2 out.
    assert_eq!(
        answer["usage"],
        json!({"inputTokens": 15, "outputTokens": 4})
    );

    let requests = env.fake.wait_for_requests(2);
    assert_eq!(requests.len(), 2);
    let body = &requests[1].body;
    let content = tool_content(body, "call_1");
    assert!(content.contains("marker-42"), "{content}");
    let messages = body["messages"].as_array().unwrap();
    let assistant = messages
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("the assistant's tool call is sent back");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_1");
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "bash");
    let args: Value = serde_json::from_str(
        assistant["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(args, json!({"command": MARKER_COMMAND}));

    // The approval request is gone once answered.
    let stale = client.fail(
        "session/approve",
        json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
    );
    assert_eq!(stale["code"], -32602, "{stale}");

    assert_eq!(
        kinds(&client.messages(&session)),
        ["user", "tool_call", "tool_result", "assistant"]
    );
}

#[test]
fn a_rejected_bash_call_does_not_run_and_the_model_is_told() {
    let env = Env::new("", "");
    env.fake.push(bash_call("call_1", "touch ran.txt", 3));
    env.fake.push(openai::text(&["Understood."]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "make a file", decide_all("reject"));
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true, "{result}");
    let output = output(result);
    assert!(output.contains("rejected"), "{output}");
    assert!(!env.work.join("ran.txt").exists(), "the command ran");
    let requests = env.fake.wait_for_requests(2);
    let content = tool_content(&requests[1].body, "call_1");
    assert!(content.contains("rejected"), "{content}");
}

#[test]
fn allow_always_covers_later_calls_in_the_turn_later_turns_and_a_restart() {
    let mut env = Env::new("", "");
    env.fake.push(bash_call("call_1", "echo one", 2));
    env.fake.push(bash_call("call_2", "echo two", 2));
    env.fake.push(openai::text(&["done"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let mut asked = 0;
    let turn = client.prompt(&session, "twice", |frame: &Value| {
        assert_eq!(frame["type"], "approval_request");
        asked += 1;
        assert_eq!(asked, 1, "asked again after allow_always: {frame}");
        Act::Decide("allow_always")
    });
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let results = turn.of_type("tool_result");
    assert_eq!(results.len(), 2);
    assert!(output(results[0]).contains("one"));
    assert!(output(results[1]).contains("two"));
    assert_eq!(turn.of_type("approval_request").len(), 1);

    env.fake.push(bash_call("call_3", "echo three", 2));
    env.fake.push(openai::text(&["done"]));
    let turn = client.prompt(&session, "again", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert!(output(turn.one("tool_result")).contains("three"));

    // The decision is stored with the session.
    drop(client);
    env.kill_and_restart();
    let mut client = env.daemon.client();
    client.call("session/load", json!({"sessionId": session}));
    env.fake.push(bash_call("call_4", "echo four", 2));
    env.fake.push(openai::text(&["done"]));
    let turn = client.prompt(&session, "after restart", no_questions);
    assert!(output(turn.one("tool_result")).contains("four"));

    // Another session is not covered.
    let other = client.new_session(&env.work);
    env.fake.push(bash_call("call_5", "echo five", 2));
    env.fake.push(openai::text(&["done"]));
    let turn = client.prompt(&other, "elsewhere", decide_all("allow_once"));
    assert_eq!(turn.of_type("approval_request").len(), 1);
}

/// Runs one bash call under this `[approvals]` table with a client that answers nothing:
/// the config alone decides, so no approval request is sent.
fn bash_decided_by_config(approvals: &str, command: &str) -> (Env, TurnLog) {
    let env = Env::new("", approvals);
    env.fake.push(bash_call("call_1", command, 4));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "run it", no_questions);
    assert_eq!(
        turn.types(),
        [
            "tool_call",
            "tool_result",
            "agent_message_chunk",
            "turn_complete"
        ]
    );
    (env, turn)
}

#[test]
fn bash_allow_in_the_config_runs_without_asking() {
    let (_env, turn) = bash_decided_by_config(BASH_ALLOWED, "echo allowed-by-config");
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], false);
    assert!(output(result).contains("allowed-by-config"));
}

#[test]
fn bash_deny_in_the_config_refuses_without_asking() {
    let (env, turn) = bash_decided_by_config("[approvals]\nbash = \"deny\"", "touch ran.txt");
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    let output = output(result);
    assert!(output.contains("deny"), "{output}");
    assert!(!env.work.join("ran.txt").exists());
    let content = tool_content(&env.fake.wait_for_requests(2)[1].body, "call_1");
    assert!(content.contains("deny"), "{content}");
}

#[test]
fn an_unanswered_approval_request_is_refused_after_its_timeout() {
    let env = Env::new("", "[approvals]\ntimeout_secs = 1");
    env.fake.push(bash_call("call_1", "touch ran.txt", 2));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "run it", ignore_all);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let ask = turn.one("approval_request");
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    let output = output(result);
    assert!(
        output.contains("nobody answered") && output.contains("refused"),
        "{output}"
    );
    assert!(!env.work.join("ran.txt").exists());
    let late = client.fail(
        "session/approve",
        json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
    );
    assert_eq!(late["code"], -32602, "{late}");
}

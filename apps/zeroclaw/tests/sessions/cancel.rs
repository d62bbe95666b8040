//! `session/cancel` wherever the turn is: running bash (the command is killed), streaming,
//! waiting to retry the provider, before the first text, waiting on an approval or on
//! `ask_user`. The prompt answers `cancelled`, and what happened so far is stored, marked.

use crate::common::*;
use serde_json::{Value, json};
use zeroclaw_testkit::{Gate, Reply, openai};

/// Cancels the session's running turn, then drives its prompt to the answer, which must
/// be `cancelled`; `policy` answers the questions that arrive meanwhile.
fn cancel_and_drive(
    client: &mut Client,
    session: &str,
    prompt: &Value,
    policy: impl FnMut(&Value) -> Act,
) -> TurnLog {
    let cancel = client.call("session/cancel", json!({"sessionId": session}));
    assert_eq!(cancel, json!({"cancelled": true}));
    let turn = client.drive(prompt, policy);
    assert_eq!(turn.result()["stopReason"], "cancelled");
    turn
}

/// The one `tool_result` of a cancelled turn: an error that says so.
fn cancelled_tool_result(turn: &TurnLog) -> &Value {
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    assert!(output(result).contains("cancelled"), "{result}");
    result
}

#[test]
#[cfg(unix)]
fn cancel_while_bash_runs_kills_the_command_and_answers_cancelled() {
    let env = Env::new("", BASH_ALLOWED);
    env.fake.push(bash_call(
        "call_1",
        "echo $$ > pid.tmp && mv pid.tmp pid && exec sleep 60",
        4,
    ));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "sleep");
    let pid = wait_for_pid_file(&env.work.join("pid"));
    assert!(!process_gone(pid));
    let turn = cancel_and_drive(&mut client, &session, &prompt, no_questions);
    let result = turn.result();
    assert_eq!(turn.types(), ["tool_call", "tool_result", "turn_complete"]);
    assert_eq!(turn.events[2]["stopReason"], "cancelled");
    cancelled_tool_result(&turn);
    poll_until("the sleep process to be gone", || process_gone(pid));
    // Only the one model call happened.
    assert_eq!(env.fake.request_count(), 1);

    let messages = client.messages(&session);
    assert_eq!(kinds(&messages), ["user", "tool_call", "tool_result"]);
    for m in &messages {
        assert_eq!(m["turnId"], result["turnId"]);
    }
    assert_eq!(messages[2]["cancelled"], true, "{:#}", messages[2]);
    assert_eq!(messages[2]["isError"], true);

    // Nothing left to cancel; the session takes the next prompt, and the model sees the
    // cancelled call answered.
    let cancel = client.call("session/cancel", json!({"sessionId": session}));
    assert_eq!(cancel, json!({"cancelled": false}));
    env.fake.push(openai::text(&["fine"]));
    let turn = client.prompt(&session, "next", no_questions);
    assert_eq!(turn.result()["text"], "fine");
    let body = &env.fake.wait_for_requests(2)[1].body;
    assert!(tool_content(body, "call_1").contains("cancelled"));
}

#[test]
fn cancel_during_a_streamed_answer_keeps_the_partial_text_marked_cancelled() {
    let env = Env::new("", "");
    env.fake.push(
        openai::Builder::new()
            .text("partial ")
            .text("answer")
            .stall()
            .build(),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "talk");
    client.wait_for(|f| is_update(f) && f["params"]["text"] == "answer");
    let turn = cancel_and_drive(&mut client, &session, &prompt, no_questions);
    let result = turn.result();
    assert_eq!(result["text"], "partial answer");
    assert_eq!(turn.events.last().unwrap()["type"], "turn_complete");
    assert_eq!(turn.events.last().unwrap()["stopReason"], "cancelled");
    let messages = client.messages(&session);
    assert_eq!(messages.len(), 2, "{messages:#?}");
    assert_eq!(messages[1]["kind"], "assistant");
    assert_eq!(messages[1]["text"], "partial answer");
    assert_eq!(messages[1]["cancelled"], true);
}

#[test]
fn cancel_while_a_failed_provider_call_waits_to_be_retried_records_the_prompt() {
    let env = Env::new("max_retries = 3", "");
    // The daemon waits (at most 10 s) before retrying; the cancel lands in that wait.
    env.fake
        .push(Reply::server_error().with_header("retry-after", "30"));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = cancel_before_any_text(&env, &mut client, &session);
    // The retry's `provider_retry` (issue 34) is sent before its wait: the cancel may land
    // before or after the daemon has read the 500, so it is there or not.
    let types: Vec<&str> = turn
        .types()
        .into_iter()
        .filter(|t| *t != "provider_retry")
        .collect();
    assert_eq!(types, ["turn_complete"]);
    assert!(
        turn.of_type("provider_retry").len() <= 1,
        "{:#?}",
        turn.events
    );
    assert_eq!(env.fake.request_count(), 1);
}

/// Prompts "hello?" and cancels once the provider has been asked, before any text: the
/// prompt answers `cancelled` with no text, and only the prompt is stored.
fn cancel_before_any_text(env: &Env, client: &mut Client, session: &str) -> TurnLog {
    let prompt = client.start_prompt(session, "hello?");
    env.fake.wait_for_requests(1);
    let turn = cancel_and_drive(client, session, &prompt, no_questions);
    assert_eq!(turn.result()["text"], "");
    let messages = client.messages(session);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert_eq!(messages[0]["text"], "hello?");
    turn
}

#[test]
fn cancel_after_the_stream_opened_and_before_any_text_records_only_the_prompt() {
    let env = Env::new("", "");
    let gate = Gate::new();
    env.fake.push(
        openai::Builder::new()
            .wait_for(&gate)
            .text("too late")
            .build(),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = cancel_before_any_text(&env, &mut client, &session);
    gate.open();
    assert!(turn.of_type("agent_message_chunk").is_empty());
}

#[test]
fn cancel_while_an_approval_request_is_pending_refuses_the_call_and_answers_cancelled() {
    let env = Env::new("", "");
    env.fake.push(bash_call("call_1", "touch ran.txt", 2));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "make a file");
    let ask = client.wait_event("approval_request");
    let turn = cancel_and_drive(&mut client, &session, &prompt, ignore_all);
    cancelled_tool_result(&turn);
    assert!(!env.work.join("ran.txt").exists());
    let late = client.fail(
        "session/approve",
        json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
    );
    assert_eq!(late["code"], -32602, "{late}");
    assert_eq!(env.fake.request_count(), 1);
    let messages = client.messages(&session);
    assert_eq!(messages[2]["kind"], "tool_result");
    assert_eq!(messages[2]["cancelled"], true);
}

#[test]
fn cancel_while_ask_user_waits_answers_cancelled_and_a_late_answer_is_ignored() {
    let env = Env::new("", "");
    env.fake.push(ask("call_1", "Well?", None));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "ask me");
    let question = client.wait_for(|f| f["method"] == "elicitation/create");
    let turn = cancel_and_drive(&mut client, &session, &prompt, ignore_all);
    cancelled_tool_result(&turn);
    client.conn.send(&json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"answer": "late"}}}));
    assert_eq!(
        client.call("session/cancel", json!({"sessionId": session}))["cancelled"],
        false
    );
}

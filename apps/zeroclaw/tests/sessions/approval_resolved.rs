//! `approval_resolved`: when an approval request is settled — answered by any client,
//! timed out, or dropped by a cancellation — every attached client is told, before the
//! call's `tool_result`, so each removes the prompt at once.

use crate::common::*;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

/// The one `approval_resolved` in `events`, checked to come before the `tool_result`.
fn resolved_before_the_result(events: &[Value]) -> &Value {
    let kinds = types(events);
    let resolved = kinds.iter().position(|k| *k == "approval_resolved");
    let result = kinds.iter().position(|k| *k == "tool_result");
    let (Some(resolved), Some(result)) = (resolved, result) else {
        panic!("no approval_resolved or no tool_result: {kinds:?}");
    };
    assert!(resolved < result, "{kinds:?}");
    assert_eq!(
        kinds.iter().filter(|k| **k == "approval_resolved").count(),
        1
    );
    &events[resolved]
}

#[test]
fn when_one_client_approves_the_other_gets_approval_resolved_before_the_tool_result() {
    let env = Env::new("", "");
    env.fake.push(bash_call("call_1", "echo approved", 2));
    env.fake.push(openai::text(&["ok"]));
    let mut a = env.daemon.client();
    let mut b = env.daemon.client();
    let session = a.new_session(&env.work);
    b.call("session/load", json!({"sessionId": session}));
    let prompt = a.start_prompt(&session, "run it");
    let ask = b.wait_event("approval_request");

    a.call(
        "session/approve",
        json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
    );
    b.wait_event("turn_complete");
    let seen = b.take_events();
    let resolved = resolved_before_the_result(&seen);
    assert_eq!(resolved["requestId"], ask["requestId"]);
    assert_eq!(resolved["decision"], "allow_once");
    assert_eq!(resolved["by"], "client");
    assert_eq!(resolved["turnId"], ask["turnId"]);

    let turn = a.drive(&prompt, ignore_all);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    resolved_before_the_result(&turn.events);
}

#[test]
fn an_approval_nobody_answers_is_resolved_by_timeout() {
    let env = Env::new("", "[approvals]\ntimeout_secs = 1");
    env.fake.push(bash_call("call_1", "touch ran.txt", 2));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "run it", ignore_all);
    let resolved = resolved_before_the_result(&turn.events);
    assert_eq!(resolved["decision"], "reject");
    assert_eq!(resolved["by"], "timeout");
    assert_eq!(
        resolved["requestId"],
        turn.one("approval_request")["requestId"]
    );
    assert!(!env.work.join("ran.txt").exists());
}

#[test]
fn an_approval_pending_when_the_turn_is_cancelled_is_resolved_by_cancelled() {
    let env = Env::new("", "");
    env.fake.push(bash_call("call_1", "touch ran.txt", 2));
    let mut a = env.daemon.client();
    let mut b = env.daemon.client();
    let session = a.new_session(&env.work);
    b.call("session/load", json!({"sessionId": session}));
    let prompt = a.start_prompt(&session, "make a file");
    let ask = b.wait_event("approval_request");
    b.call("session/cancel", json!({"sessionId": session}));
    let turn = a.drive(&prompt, ignore_all);
    assert_eq!(turn.result()["stopReason"], "cancelled");
    let resolved = resolved_before_the_result(&turn.events);
    assert_eq!(resolved["requestId"], ask["requestId"]);
    assert_eq!(resolved["decision"], "reject");
    assert_eq!(resolved["by"], "cancelled");
    assert!(!env.work.join("ran.txt").exists());
}

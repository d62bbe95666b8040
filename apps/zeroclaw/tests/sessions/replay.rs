//! Several connections on one session: each attached connection gets every event of a
//! turn exactly once, live or replayed by `session/load`, and any of them may approve or
//! cancel.

use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::{Gate, openai};

#[test]
fn every_attached_connection_gets_the_events_and_any_of_them_may_approve() {
    let env = Env::new("", "");
    env.fake.push(bash_call("call_1", "echo shared", 3));
    env.fake.push(openai::text(&["done"]));
    let mut a = env.daemon.client();
    let mut b = env.daemon.client();
    let session = a.new_session(&env.work);
    b.call("session/load", json!({"sessionId": session}));
    let prompt = a.start_prompt(&session, "run it");
    let ask = b.wait_event("approval_request");

    // A connection that loads mid-turn is sent the pending approval request again.
    let mut c = env.daemon.client();
    let loaded = c.call("session/load", json!({"sessionId": session}));
    assert_eq!(loaded["running"], true);
    assert_eq!(loaded["turnId"], ask["turnId"]);
    let resent = c.wait_event("approval_request");
    assert_eq!(resent["requestId"], ask["requestId"]);

    b.call(
        "session/approve",
        json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
    );
    let turn = a.drive(&prompt, ignore_all);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert!(output(turn.one("tool_result")).contains("shared"));

    let done = b.wait_event("turn_complete");
    assert_eq!(done["stopReason"], "end_turn");
    let b_events = b.take_events();
    assert_eq!(b_events, turn.events, "B saw what A saw");
    let done = c.wait_event("turn_complete");
    assert_eq!(done["turnId"], turn.result()["turnId"]);
    let c_events = c.take_events();
    assert_eq!(
        types(&c_events),
        [
            "approval_request",
            "approval_resolved",
            "tool_result",
            "agent_message_chunk",
            "turn_complete"
        ]
    );

    // B can cancel A's turn too.
    env.fake
        .push(openai::Builder::new().text("long").stall().build());
    let prompt = a.start_prompt(&session, "talk");
    b.wait_event("agent_message_chunk");
    assert_eq!(
        b.call("session/cancel", json!({"sessionId": session}))["cancelled"],
        true
    );
    let turn = a.drive(&prompt, no_questions);
    assert_eq!(turn.result()["stopReason"], "cancelled");
}

/// A client that loads a session while its turn is streaming a message gets the message's
/// text so far in the replay, then the rest live. (Before, the text so far was in neither.)
#[test]
fn a_load_in_the_middle_of_a_streamed_message_gets_the_text_so_far_then_the_rest_live() {
    let env = Env::new("", "");
    let gate = Gate::new();
    env.fake.push(
        openai::Builder::new()
            .text("Hel")
            .text("lo ")
            .wait_for(&gate)
            .text("wor")
            .text("ld")
            .build(),
    );
    let mut a = env.daemon.client();
    let session = a.new_session(&env.work);
    let prompt = a.start_prompt(&session, "greet");
    let seen = a.wait_for(|f| is_update(f) && f["params"]["text"] == "lo ");
    let turn_id = seen["params"]["turnId"].clone();

    let mut b = env.daemon.client();
    let (replay, loaded) = b.load_with_replay(&session);
    assert_eq!(loaded["turnId"], turn_id);
    let got: Vec<(&str, &str)> = replay
        .iter()
        .map(|e| (e["type"].as_str().unwrap(), e["text"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("user_message_chunk", "greet"),
            ("agent_message_chunk", "Hello ")
        ]
    );
    assert_eq!(replay[1]["turnId"], turn_id);

    gate.open();
    let mut live = String::new();
    loop {
        let frame = b.read();
        if !is_update(&frame) {
            continue;
        }
        match frame["params"]["type"].as_str().unwrap() {
            "agent_message_chunk" => live.push_str(frame["params"]["text"].as_str().unwrap()),
            "usage_update" => {}
            "turn_complete" => break,
            other => panic!("unexpected {other}: {frame}"),
        }
    }
    assert_eq!(live, "world");
    let turn = a.drive(&prompt, no_questions);
    assert_eq!(turn.result()["text"], "Hello world");
}

/// Loads racing a turn that keeps storing tool calls and results: whatever the timing
/// (before, during or after the turn), each loading client gets every stored event of the
/// turn exactly once, counting the replay and what arrives live after it.
#[test]
fn loads_racing_a_turn_get_every_stored_event_exactly_once() {
    const CALLS: usize = 12;
    let env = Env::new("", BASH_ALLOWED);
    for i in 0..CALLS {
        env.fake
            .push(bash_call(&format!("call_{i}"), &format!("echo {i}"), 1));
    }
    env.fake.push(openai::text(&["done"]));
    let mut a = env.daemon.client();
    let session = a.new_session(&env.work);
    let prompt = a.start_prompt(&session, "many steps");
    let mut loaders = Vec::new();
    for _ in 0..6 {
        let mut b = env.daemon.client();
        let (replay, _) = b.load_with_replay(&session);
        loaders.push((b, replay));
    }
    let turn = a.drive(&prompt, no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    for (mut b, replay) in loaders {
        // A barrier: the turn is over, and an answer never overtakes events queued before
        // its request, so every live event has arrived once `status` is answered.
        let barrier = b.send("status", json!({}));
        let mut events = replay;
        loop {
            let frame = b.read();
            if is_update(&frame) {
                events.push(frame["params"].clone());
            } else if is_response(&frame) && frame["id"] == barrier {
                break;
            }
        }
        for kind in ["tool_call", "tool_result"] {
            let mut ids: Vec<&str> = events
                .iter()
                .filter(|e| e["type"] == kind)
                .map(|e| e["toolCallId"].as_str().unwrap())
                .collect();
            ids.sort();
            let mut want: Vec<String> = (0..CALLS).map(|i| format!("call_{i}")).collect();
            want.sort();
            assert_eq!(ids, want, "{kind} events: {events:#?}");
        }
    }
}

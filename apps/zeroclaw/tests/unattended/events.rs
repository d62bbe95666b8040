//! A client that attaches to a run's session sees its events live.

use crate::harness::*;
use serde_json::json;
use zeroclaw_testkit::{Gate, openai};

#[test]
fn an_attached_socket_client_sees_the_runs_events_as_they_happen() {
    let hooks = Hooks::start(|work| hook(work, ""), &[]);
    let gate = Gate::new();
    hooks.fake.push(
        openai::Builder::new()
            .wait_for(&gate)
            .text("investigating ")
            .text("the failure")
            .finish(Some("stop"))
            .build(),
    );
    let (status, answer) = hooks.deliver("ci", r#"{"ref":"main"}"#, "e-1");
    assert_eq!(status, 202);
    let session = answer["sessionId"].as_str().unwrap();
    hooks.fake.wait_for_requests(1);
    let mut client = hooks.daemon.client();
    let loaded = client.call("session/load", json!({"sessionId": session}));
    assert!(
        loaded["turnId"].is_string(),
        "the run's turn is running: {loaded}"
    );
    gate.open();
    let complete = client.wait_event("turn_complete");
    assert_eq!(complete["stopReason"], "end_turn");
    assert_eq!(complete["sessionId"], session);
    let text: String = client
        .take_events()
        .iter()
        .filter(|e| e["type"] == "agent_message_chunk")
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(text, "investigating the failure");
    assert_eq!(
        hooks.wait_finished(answer["runId"].as_str().unwrap())["status"],
        "done"
    );
}

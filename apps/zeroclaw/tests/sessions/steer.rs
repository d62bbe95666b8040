//! `session/steer`: a message added to the running turn reaches the model at the turn's
//! next step (the next provider request), is shown to every attached client as a
//! `user_message` event and is stored in order; with no turn running it is refused with
//! `-32005`; its size and the number waiting are bounded (`-32602`).

use crate::common::*;
use serde_json::{Value, json};
use zeroclaw_testkit::{Gate, openai};

/// The `messages` of a recorded chat request.
fn sent(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = m["content"].as_str().unwrap_or_default().to_owned();
            (m["role"].as_str().unwrap().to_owned(), text)
        })
        .collect()
}

#[test]
fn a_steer_sent_while_an_approval_waits_is_in_the_next_request_and_the_history_in_order() {
    let env = Env::new("", "");
    env.fake.push(bash_call("call_1", "echo steered", 2));
    env.fake
        .push(openai::text(&["done, and checked the tests"]));
    let mut a = env.daemon.client();
    let mut b = env.daemon.client();
    let session = a.new_session(&env.work);
    b.call("session/load", json!({"sessionId": session}));
    let prompt = a.start_prompt(&session, "run it");
    let ask = a.wait_event("approval_request");

    let steered = a.call(
        "session/steer",
        json!({"sessionId": session, "text": "also check the tests"}),
    );
    assert!(steered["turnId"].is_string(), "{steered}");
    a.call(
        "session/approve",
        json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
    );
    let turn = a.drive(&prompt, ignore_all);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert_eq!(turn.result()["turnId"], steered["turnId"]);

    // The second request: the prompt, the call and its result, then the steer.
    let requests = env.fake.wait_for_requests(2);
    let messages = sent(&requests[1].body);
    assert_eq!(
        messages.last().unwrap(),
        &("user".to_owned(), "also check the tests".to_owned()),
        "{messages:#?}"
    );
    assert_eq!(messages[messages.len() - 2].0, "tool");
    assert!(
        !sent(&requests[0].body)
            .iter()
            .any(|(_, text)| text.contains("also check")),
        "the first request was made before the steer"
    );

    // Both clients saw it, after the tool's result and before the answer.
    b.wait_event("turn_complete");
    for events in [turn.events.clone(), b.take_events()] {
        let kinds = types(&events);
        let at = |kind: &str| kinds.iter().position(|k| *k == kind).unwrap();
        assert!(at("tool_result") < at("user_message"), "{kinds:?}");
        assert!(at("user_message") < at("agent_message_chunk"), "{kinds:?}");
        let steer = &events[at("user_message")];
        assert_eq!(steer["text"], "also check the tests");
        assert_eq!(steer["turnId"], steered["turnId"]);
    }

    let stored = a.messages(&session);
    assert_eq!(
        kinds(&stored),
        ["user", "tool_call", "tool_result", "user", "assistant"]
    );
    assert_eq!(stored[3]["text"], "also check the tests");

    // A replay shows the steer as it was first sent.
    let mut c = env.daemon.client();
    let (replay, _) = c.load_with_replay(&session);
    let replayed: Vec<&str> = types(&replay);
    assert_eq!(
        replayed,
        [
            "user_message_chunk",
            "tool_call",
            "tool_result",
            "user_message",
            "agent_message_chunk"
        ]
    );
}

#[test]
fn a_steer_sent_while_the_final_answer_streams_gets_one_more_step() {
    let env = Env::new("", "");
    let gate = Gate::new();
    env.fake.push(
        openai::Builder::new()
            .text("Here is")
            .wait_for(&gate)
            .text(" my answer.")
            .build(),
    );
    env.fake.push(openai::text(&["And in French: voilà."]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "answer");
    client.wait_event("agent_message_chunk");
    client.call(
        "session/steer",
        json!({"sessionId": session, "text": "say it in French too"}),
    );
    gate.open();
    let turn = client.drive(&prompt, no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");

    let requests = env.fake.wait_for_requests(2);
    let messages = sent(&requests[1].body);
    let tail = &messages[messages.len() - 2..];
    assert_eq!(
        tail,
        [
            ("assistant".to_owned(), "Here is my answer.".to_owned()),
            ("user".to_owned(), "say it in French too".to_owned())
        ]
    );
    assert_eq!(
        kinds(&client.messages(&session)),
        ["user", "assistant", "user", "assistant"]
    );
}

#[test]
fn a_steer_with_no_turn_running_is_refused_so_the_client_sends_a_prompt() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let refused = client.fail(
        "session/steer",
        json!({"sessionId": session, "text": "hello?"}),
    );
    assert_eq!(refused["code"], -32005, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("session/prompt"),
        "{refused}"
    );
    assert!(client.messages(&session).is_empty());
}

#[test]
fn a_steer_too_long_or_one_too_many_is_refused_naming_the_limit() {
    let env = Env::new("", "");
    let gate = Gate::new();
    env.fake
        .push(openai::Builder::new().wait_for(&gate).text("ok").build());
    env.fake.push(openai::text(&["all taken"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "wait");
    env.fake.wait_for_requests(1);

    let long = "x".repeat(64 * 1024 + 1);
    let refused = client.fail("session/steer", json!({"sessionId": session, "text": long}));
    assert_eq!(refused["code"], -32602, "{refused}");
    assert_eq!(refused["data"]["limit"], 64 * 1024, "{refused}");
    let empty = client.fail("session/steer", json!({"sessionId": session, "text": "  "}));
    assert_eq!(empty["code"], -32602, "{empty}");

    for i in 0..8 {
        client.call(
            "session/steer",
            json!({"sessionId": session, "text": format!("note {i}")}),
        );
    }
    let full = client.fail(
        "session/steer",
        json!({"sessionId": session, "text": "one more"}),
    );
    assert_eq!(full["code"], -32602, "{full}");
    assert_eq!(full["data"]["limit"], 8, "{full}");

    gate.open();
    let turn = client.drive(&prompt, no_questions);
    assert_eq!(turn.of_type("user_message").len(), 8);
    let requests = env.fake.wait_for_requests(2);
    let messages = sent(&requests[1].body);
    let steers: Vec<&str> = messages
        .iter()
        .filter(|(role, text)| role == "user" && text.starts_with("note "))
        .map(|(_, text)| text.as_str())
        .collect();
    assert_eq!(
        steers,
        (0..8).map(|i| format!("note {i}")).collect::<Vec<_>>()
    );
}

//! A client that disconnects mid-turn: the turn goes on without it and is stored; a
//! question it was asked fails at once.

use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::{Gate, openai};

#[test]
fn a_turn_whose_client_disconnected_still_completes_and_is_stored() {
    let env = Env::new("", BASH_ALLOWED);
    let gate = Gate::new();
    env.fake.push(
        openai::Builder::new()
            .wait_for(&gate)
            .tool_call(0, "call_1", "bash", r#"{"command":"echo still-here"}"#, 2)
            .build(),
    );
    env.fake.push(openai::text(&["finished ", "without you"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let _prompt = client.start_prompt(&session, "work alone");
    env.fake.wait_for_requests(1);
    drop(client);
    env.daemon.wait_for_log("connection closed");
    gate.open();
    env.fake.wait_for_requests(2);
    let line = env.daemon.wait_for_log("turn ended");
    assert!(line.contains("end_turn"), "{line}");

    let mut client = env.daemon.client();
    let loaded = client.call("session/load", json!({"sessionId": session}));
    assert!(loaded.get("turnId").is_none(), "{loaded}");
    assert_eq!(loaded["running"], false);
    let messages = client.messages(&session);
    assert_eq!(
        kinds(&messages),
        ["user", "tool_call", "tool_result", "assistant"]
    );
    assert!(output(&messages[2]).contains("still-here"));
    assert_eq!(messages[3]["text"], "finished without you");
}

#[test]
fn ask_user_whose_client_disconnects_fails_the_question_and_the_turn_goes_on() {
    let env = Env::new("", "");
    env.fake.push(ask("call_1", "Still there?", None));
    env.fake.push(openai::text(&["Carrying on."]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let _prompt = client.start_prompt(&session, "ask me");
    client.wait_for(|f| f["method"] == "elicitation/create");
    drop(client);
    let body = &env.fake.wait_for_requests(2)[1].body;
    let content = tool_content(body, "call_1");
    assert!(content.contains("disconnected"), "{content}");
    env.daemon.wait_for_log("turn ended");
    let mut client = env.daemon.client();
    let messages = client.messages(&session);
    assert_eq!(messages.last().unwrap()["text"], "Carrying on.");
}

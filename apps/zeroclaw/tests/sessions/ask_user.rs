//! `ask_user` through `elicitation/create`: the question goes to the client, its answer
//! (accepted, declined, dismissed, an error, none in time, or no capability to ask) goes
//! back to the model as the tool's result.

use crate::common::*;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

#[test]
fn ask_user_is_an_elicitation_request_whose_answer_the_model_receives() {
    let env = Env::new("", "");
    env.fake
        .push(ask("call_1", "Which colour?", Some(&["red", "blue"])));
    env.fake.push(openai::text(&["Blue it is."]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(
        &session,
        "paint it",
        answer_all(json!({"action": "accept", "content": {"answer": "blue"}})),
    );
    let result = turn.result();
    assert_eq!(result["text"], "Blue it is.");
    assert_eq!(turn.elicitations.len(), 1);
    let request = &turn.elicitations[0];
    assert!(
        request["id"].as_str().unwrap().starts_with("zc-out-"),
        "{request}"
    );
    let params = &request["params"];
    assert_eq!(params["sessionId"], json!(session));
    assert_eq!(params["turnId"], result["turnId"]);
    assert_eq!(params["message"], "Which colour?");
    let schema = &params["requestedSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["properties"]["answer"]["enum"],
        json!(["red", "blue"])
    );
    assert_eq!(schema["required"], json!(["answer"]));
    let tool_result = turn.one("tool_result");
    assert_eq!(tool_result["isError"], false);
    assert_eq!(tool_result["rawOutput"], "blue");
    assert_eq!(
        tool_content(&env.fake.wait_for_requests(2)[1].body, "call_1"),
        "blue"
    );

    // Without choices: no enum. Declined: an error result.
    env.fake.push(ask("call_2", "Anything else?", None));
    env.fake.push(openai::text(&["ok"]));
    let turn = client.prompt(&session, "again", answer_all(json!({"action": "decline"})));
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let schema = &turn.elicitations[0]["params"]["requestedSchema"];
    assert!(
        schema["properties"]["answer"].get("enum").is_none(),
        "{schema}"
    );
    let tool_result = turn.one("tool_result");
    assert_eq!(tool_result["isError"], true);
    assert!(output(tool_result).contains("declined"));
    let content = tool_content(&env.fake.wait_for_requests(4)[3].body, "call_2");
    assert!(content.contains("declined"), "{content}");

    // Dismissed.
    env.fake.push(ask("call_3", "Sure?", None));
    env.fake.push(openai::text(&["ok"]));
    let turn = client.prompt(
        &session,
        "once more",
        answer_all(json!({"action": "cancel"})),
    );
    let tool_result = turn.one("tool_result");
    assert_eq!(tool_result["isError"], true);
    assert!(output(tool_result).contains("without answering"));

    // The client answers with an error.
    env.fake.push(ask("call_4", "Can you?", None));
    env.fake.push(openai::text(&["ok"]));
    let turn = client.prompt(&session, "last", |_: &Value| {
        Act::Fail(json!({"code": -32601, "message": "no UI here"}))
    });
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let tool_result = turn.one("tool_result");
    assert_eq!(tool_result["isError"], true);
    let output = output(tool_result);
    assert!(output.contains("no UI here"), "{output}");
}

#[test]
fn an_unanswered_ask_user_times_out_into_an_error_result() {
    let env = Env::new("", "[agent]\nask_user_timeout_secs = 1");
    env.fake.push(ask("call_1", "Are you there?", None));
    env.fake.push(openai::text(&["No answer, moving on."]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "ask me", ignore_all);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert_eq!(turn.elicitations.len(), 1);
    let tool_result = turn.one("tool_result");
    assert_eq!(tool_result["isError"], true);
    let output = output(tool_result);
    assert!(output.contains("did not answer within 1 s"), "{output}");
    // A late answer is ignored and the connection stays usable.
    let id = turn.elicitations[0]["id"].clone();
    client.conn.send(&json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"answer": "late"}}}));
    client.call("status", json!({}));
}

#[test]
fn ask_user_from_a_client_without_the_elicitation_capability_is_an_error_result() {
    let env = Env::new("", "");
    env.fake.push(ask("call_1", "Which one?", None));
    env.fake.push(openai::text(&["I'll assume."]));
    let mut client = env.daemon.client_with(json!({}));
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "ask me", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert!(turn.elicitations.is_empty());
    let tool_result = turn.one("tool_result");
    assert_eq!(tool_result["isError"], true);
    let output = output(tool_result);
    assert!(output.contains("elicitation"), "{output}");
}

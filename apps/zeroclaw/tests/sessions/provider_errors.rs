//! A provider that fails: silent past the idle timeout, unreachable, or answering HTTP 500
//! with and without retries. The prompt fails with -32004 and the error's kind; what was
//! stored is said, and kept.

use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::{Reply, openai};

#[test]
fn a_stream_that_goes_silent_fails_after_the_idle_timeout_and_keeps_the_text_so_far() {
    let env = Env::new("idle_timeout_secs = 1", "");
    env.fake
        .push(openai::Builder::new().text("so far").stall().build());
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "go", no_questions);
    let error = turn.error();
    assert_eq!(error["code"], -32004, "{error}");
    assert_eq!(error["data"]["kind"], "timeout", "{error}");
    assert_eq!(error["data"]["stored"], true, "{error}");
    let turn_id = error["data"]["turnId"].as_str().unwrap();
    assert_eq!(turn.types(), ["agent_message_chunk", "turn_complete"]);
    assert_eq!(turn.events[1]["stopReason"], "error");
    assert_eq!(turn.events[1]["turnId"], json!(turn_id));
    let messages = client.messages(&session);
    assert_eq!(
        kinds(&messages),
        ["user", "assistant", "error"],
        "{messages:#?}"
    );
    assert_eq!(messages[1]["text"], "so far");
    assert_eq!(messages[2]["text"], error["message"]);
    // The session is usable again.
    env.fake.push(openai::text(&["again"]));
    let turn = client.prompt(&session, "retry", no_questions);
    assert_eq!(turn.result()["text"], "again");
}

#[test]
fn an_unreachable_provider_is_a_provider_error_and_keeps_the_prompt_with_its_error() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/v1");
    let env = Env::at(&url, "", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "anyone?", no_questions);
    let error = turn.error();
    assert_eq!(error["code"], -32004, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(&url), "{message}");
    assert_eq!(error["data"]["kind"], "unreachable", "{error}");
    assert_eq!(error["data"]["baseUrl"], json!(url));
    // Issue 37: the session explains itself, its prompt kept with the error.
    assert_eq!(error["data"]["stored"], true);
    assert!(error["data"]["turnId"].is_string());
    assert!(turn.events.is_empty(), "{:#?}", turn.events);
    let messages = client.messages(&session);
    assert_eq!(kinds(&messages), ["user", "error"], "{messages:#?}");
    assert_eq!(messages[1]["text"], error["message"]);
    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["messageCount"], 2);
    assert_eq!(list["sessions"][0]["running"], false);
}

#[test]
fn an_http_500_without_retries_is_a_provider_error_kept_as_an_entry_the_model_is_never_sent() {
    let env = Env::new("max_retries = 0", "");
    env.fake.push(Reply::server_error());
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "hi", no_questions);
    let error = turn.error();
    assert_eq!(error["code"], -32004, "{error}");
    assert_eq!(error["data"]["status"], 500, "{error}");
    assert_eq!(error["data"]["kind"], "http", "{error}");
    assert!(turn.events.is_empty());
    assert_eq!(kinds(&client.messages(&session)), ["user", "error"]);
    assert_eq!(env.fake.request_count(), 1);
    // The prompt that failed is not sent with the next one: to the model it never was.
    env.fake.push(openai::text(&["hello"]));
    let turn = client.prompt(&session, "hi again", no_questions);
    assert_eq!(turn.result()["text"], "hello");
    let sent = &env.fake.wait_for_requests(2)[1].body;
    let users: Vec<&serde_json::Value> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| &m["content"])
        .collect();
    assert_eq!(users, [&json!("hi again")], "{sent}");
}

#[test]
fn an_http_500_then_success_is_retried_and_the_turn_succeeds() {
    let env = Env::new("max_retries = 2", "");
    env.fake.push(Reply::server_error());
    env.fake.push(openai::text(&["second time lucky"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "hi", no_questions);
    assert_eq!(turn.result()["text"], "second time lucky");
    assert_eq!(env.fake.request_count(), 2);
    assert_eq!(kinds(&client.messages(&session)), ["user", "assistant"]);
}

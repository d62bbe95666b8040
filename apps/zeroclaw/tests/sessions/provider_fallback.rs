//! Issue 34: `[[fallback]]` providers. When the configured provider fails a model call
//! before any output (its retries spent), the next fallback is asked with its own model,
//! each switch a `provider_fallback` event; the next call starts from the configured one
//! again. A provider that fails after part of its answer streamed is not replaced.

use crate::common::*;
use serde_json::{Value, json};
use zeroclaw_testkit::{FakeProvider, openai};

/// `[[fallback]]` tables at these base URLs, each with model `backup<i>` and no retries.
fn fallbacks(urls: &[String]) -> String {
    urls.iter()
        .enumerate()
        .map(|(i, url)| {
            format!("[[fallback]]\nbase_url = {url:?}\nmodel = \"backup{i}\"\nmax_retries = 0\n")
        })
        .collect()
}

/// The `model` of each request a fake provider received, in order.
fn models(fake: &FakeProvider, n: usize) -> Vec<String> {
    fake.wait_for_requests(n)
        .iter()
        .map(|r| r.body["model"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// A base URL nothing listens on.
fn dead_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    format!("http://127.0.0.1:{port}/v1")
}

#[test]
fn a_dead_primary_falls_back_to_the_second_provider_and_the_next_turn_tries_the_primary_again() {
    let backup = FakeProvider::start_blocking().unwrap();
    // The primary (the env's fake) has no reply scripted: it answers 500 every time.
    let env = Env::new("max_retries = 1", &fallbacks(&[backup.base_url()]));
    backup.push(openai::text(&["from the backup"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    // The session's model is the primary's; the fallback asks for its own.
    client.call(
        "session/set_model",
        json!({"sessionId": session, "model": "big"}),
    );
    let turn = client.prompt(&session, "hi", no_questions);
    assert_eq!(turn.result()["text"], "from the backup");
    assert_eq!(
        turn.types(),
        [
            "provider_retry",
            "provider_fallback",
            "agent_message_chunk",
            "turn_complete"
        ]
    );
    let primary = format!("big at {}", env.fake.base_url());
    let second = format!("backup0 at {}", backup.base_url());
    let retry = turn.one("provider_retry");
    assert_eq!(retry["reason"], "HTTP 500 Internal Server Error", "{retry}");
    assert_eq!(retry["provider"], json!(primary), "{retry}");
    let switch = turn.one("provider_fallback");
    assert_eq!(switch["from"], json!(primary), "{switch}");
    assert_eq!(switch["to"], json!(second), "{switch}");
    assert_eq!(
        switch["reason"], "HTTP 500 Internal Server Error",
        "{switch}"
    );
    assert_eq!(models(&env.fake, 2), ["big", "big"]);
    assert_eq!(models(&backup, 1), ["backup0"]);
    assert_eq!(kinds(&client.messages(&session)), ["user", "assistant"]);

    // The primary is back: the next turn asks it first, and nothing falls back.
    env.fake.push(openai::text(&["primary again"]));
    let turn = client.prompt(&session, "and now?", no_questions);
    assert_eq!(turn.result()["text"], "primary again");
    assert_eq!(turn.types(), ["agent_message_chunk", "turn_complete"]);
    assert_eq!(models(&env.fake, 3)[2], "big");
    assert_eq!(backup.request_count(), 1);
}

#[test]
fn fallbacks_are_tried_in_order_and_when_all_fail_the_error_is_the_primarys_naming_each() {
    let second = FakeProvider::start_blocking().unwrap();
    let unreachable = dead_url();
    let env = Env::at(
        &unreachable,
        "",
        &fallbacks(&[second.base_url(), dead_url()]),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "anyone?", no_questions);
    let error = turn.error();
    assert_eq!(error["code"], -32004, "{error}");
    assert_eq!(error["data"]["kind"], "unreachable", "{error}");
    assert_eq!(error["data"]["baseUrl"], json!(unreachable), "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "the fallback provider backup0 at {} failed too (HTTP 500 Internal Server Error)",
            second.base_url()
        )) && message.contains("backup1 at")
            && message.contains("(cannot connect)"),
        "{message}"
    );
    let switches: Vec<(&Value, &Value)> = turn
        .of_type("provider_fallback")
        .iter()
        .map(|e| (&e["from"], &e["reason"]))
        .collect();
    assert_eq!(
        switches,
        [
            (
                &json!(format!("fake at {unreachable}")),
                &json!("cannot connect")
            ),
            (
                &json!(format!("backup0 at {}", second.base_url())),
                &json!("HTTP 500 Internal Server Error")
            ),
        ]
    );
    assert_eq!(second.request_count(), 1);
}

#[test]
fn a_provider_that_fails_before_any_output_in_its_stream_falls_back_too() {
    let backup = FakeProvider::start_blocking().unwrap();
    let env = Env::new("", &fallbacks(&[backup.base_url()]));
    env.fake.push(
        openai::Builder::new()
            .raw_chunk(json!({"error": {"message": "overloaded"}}))
            .build(),
    );
    backup.push(openai::text(&["steady"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "hi", no_questions);
    assert_eq!(turn.result()["text"], "steady");
    assert_eq!(
        turn.one("provider_fallback")["reason"],
        "error reported mid-stream"
    );
    assert_eq!(kinds(&client.messages(&session)), ["user", "assistant"]);
}

#[test]
fn a_provider_that_fails_after_part_of_its_answer_streamed_is_not_replaced_and_the_error_says_so() {
    let backup = FakeProvider::start_blocking().unwrap();
    let env = Env::new("", &fallbacks(&[backup.base_url()]));
    env.fake.push(
        openai::Builder::new()
            .text("half an ans")
            .raw_chunk(json!({"error": {"message": "overloaded"}}))
            .build(),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "hi", no_questions);
    let error = turn.error();
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("overloaded"), "{message}");
    assert!(
        message
            .contains("not tried on a fallback provider: part of the answer had already streamed"),
        "{message}"
    );
    assert_eq!(turn.types(), ["agent_message_chunk", "turn_complete"]);
    assert_eq!(backup.request_count(), 0);
    let messages = client.messages(&session);
    assert_eq!(
        kinds(&messages),
        ["user", "assistant", "error"],
        "{messages:#?}"
    );
    assert_eq!(messages[1]["text"], "half an ans");
}

#[test]
fn a_malformed_fallback_table_stops_the_daemon_at_start_naming_the_key() {
    let dir = TestDir::new();
    dir.write_config(&provider_config(
        "http://127.0.0.1:9/v1",
        "",
        "[[fallback]]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n\n\
         [[fallback]]\nbase_url = \"ftp://backup\"\nmodel = \"m\"\n",
    ));
    let mut daemon = dir.spawn_with(&[], &[]);
    assert!(!daemon.wait_exit().success());
    let log = daemon.log_text();
    assert!(log.contains("config.toml is not valid"), "{log}");
    assert!(
        log.contains("fallback[1].base_url must start with http:// or https://"),
        "{log}"
    );
}

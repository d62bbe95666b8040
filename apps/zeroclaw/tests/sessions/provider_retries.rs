//! Issue 34: a provider's retries are visible. Each retry of a model call is a
//! `provider_retry` event, sent before its wait, naming the attempt, the delay (the
//! provider's `Retry-After` when it names one) and why, in a few words.

use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::{Reply, openai};

#[test]
fn a_provider_answering_429_with_retry_after_twice_then_succeeding_gives_one_answer_and_two_retry_events()
 {
    let env = Env::new("max_retries = 2", "");
    env.fake.push(Reply::rate_limited(Some(1)));
    env.fake.push(Reply::rate_limited(Some(1)));
    env.fake.push(openai::text(&["third time lucky"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "hi", no_questions);
    assert_eq!(turn.result()["text"], "third time lucky");
    assert_eq!(
        turn.types(),
        [
            "provider_retry",
            "provider_retry",
            "agent_message_chunk",
            "turn_complete"
        ]
    );
    let provider = format!("fake at {}", env.fake.base_url());
    for (i, retry) in turn.of_type("provider_retry").into_iter().enumerate() {
        assert_eq!(retry["attempt"], i + 1, "{retry}");
        assert_eq!(retry["delayMs"], 1000, "{retry}");
        assert_eq!(retry["reason"], "HTTP 429 Too Many Requests", "{retry}");
        assert_eq!(retry["provider"], json!(provider), "{retry}");
        assert!(retry["turnId"].is_string(), "{retry}");
    }
    assert_eq!(env.fake.request_count(), 3);
    // Live only: the history holds the prompt and the one answer.
    assert_eq!(kinds(&client.messages(&session)), ["user", "assistant"]);
}

#[test]
fn retries_that_run_out_are_each_told_and_the_turn_fails_with_the_last_error() {
    let env = Env::new("max_retries = 1", "");
    env.fake.push(Reply::rate_limited(Some(1)));
    env.fake.push(Reply::rate_limited(Some(1)));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "hi", no_questions);
    let error = turn.error();
    assert_eq!(error["data"]["kind"], "rate_limited", "{error}");
    let retries = turn.of_type("provider_retry");
    assert_eq!(retries.len(), 1, "{:#?}", turn.events);
    assert_eq!(retries[0]["attempt"], 1);
    assert_eq!(env.fake.request_count(), 2);
}

//! Usage and cost: a `usage_update` after each model call whose counts are the provider's
//! (cached input tokens included), the turn's and the session's running totals, the
//! context gauge and the cost at the configured prices; `session/usage` sums the store, so
//! it survives a restart; a provider that reports nothing gets an estimate, marked so.

use crate::common::*;
use serde_json::{Value, json};
use zeroclaw_testkit::{anthropic, openai};

/// Prices per million tokens: input 2, cached input 1, output 10; a window of 100000.
const PRICED: &str =
    "context_window = 100000\n[provider.pricing]\ninput = 2.0\noutput = 10.0\ncached_input = 1.0";

/// `(input, cached, output)`'s cost at [`PRICED`]'s prices.
fn cost(input: u64, cached: u64, output: u64) -> f64 {
    ((input - cached) as f64 * 2.0 + cached as f64 * 1.0 + output as f64 * 10.0) / 1_000_000.0
}

fn assert_cost(value: &Value, want: f64) {
    let got = value.as_f64().unwrap_or_else(|| panic!("no cost: {value}"));
    assert!((got - want).abs() < 1e-12, "cost {got}, want {want}");
}

fn list_dir_call(id: &str) -> openai::Builder {
    openai::Builder::new().tool_call(0, id, "list_dir", r#"{"path":"."}"#, 1)
}

#[test]
fn usage_events_add_up_to_the_providers_reported_usage() {
    let mut env = Env::new(PRICED, "");
    // (input, cached, output) of each model call, as the provider reports them.
    let calls = [(100, 40, 20), (150, 100, 30), (200, 0, 5)];
    env.fake
        .push(list_dir_call("call_1").usage(100, 20).cached(40).build());
    env.fake
        .push(list_dir_call("call_2").usage(150, 30).cached(100).build());
    env.fake
        .push(openai::Builder::new().text("done").usage(200, 5).build());
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "look twice", no_questions);
    let result = turn.result().clone();
    assert_eq!(result["stopReason"], "end_turn");

    assert_eq!(turn.usage.len(), 3, "{:#?}", turn.usage);
    let (mut input, mut output, mut cached, mut spent) = (0, 0, 0, 0.0);
    for (event, (call_input, call_cached, call_output)) in turn.usage.iter().zip(calls) {
        assert_eq!(event["sessionId"], json!(session));
        assert_eq!(event["turnId"], result["turnId"]);
        assert_eq!(event["inputTokens"], call_input);
        assert_eq!(event["outputTokens"], call_output);
        if call_cached == 0 {
            assert!(event.get("cachedInputTokens").is_none(), "{event}");
        } else {
            assert_eq!(event["cachedInputTokens"], call_cached);
        }
        assert!(event.get("estimated").is_none(), "{event}");
        assert_eq!(event["contextUsed"], call_input);
        assert_eq!(event["contextSize"], 100000);
        assert_cost(&event["cost"], cost(call_input, call_cached, call_output));
        // No `currency` key: US dollars.
        assert_eq!(event["currency"], "USD", "{event}");
        input += call_input;
        output += call_output;
        cached += call_cached;
        spent += cost(call_input, call_cached, call_output);
        for totals in [&event["turn"], &event["session"]] {
            assert_eq!(totals["inputTokens"], input, "{event}");
            assert_eq!(totals["outputTokens"], output, "{event}");
            assert_eq!(totals["cachedInputTokens"], cached, "{event}");
            assert_cost(&totals["cost"], spent);
        }
    }
    // Each after its call's answer was read, before the next call's first event.
    let types: Vec<&str> = turn
        .events
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(types.last(), Some(&"turn_complete"));
    assert_eq!(
        result["usage"],
        json!({"inputTokens": input, "outputTokens": output})
    );

    // A second turn's session totals start from the first's.
    env.fake
        .push(openai::Builder::new().text("again").usage(300, 7).build());
    let second = client.prompt(&session, "once more", no_questions);
    let [event] = &second.usage[..] else {
        panic!("{:#?}", second.usage)
    };
    assert_eq!(event["turn"]["inputTokens"], 300);
    assert_eq!(event["session"]["inputTokens"], input + 300);
    assert_eq!(event["session"]["outputTokens"], output + 7);
    spent += cost(300, 0, 7);
    assert_cost(&event["session"]["cost"], spent);

    // `session/usage` sums the store: the same after a restart.
    let want = |usage: &Value| {
        assert_eq!(usage["sessionId"], json!(session));
        assert_eq!(usage["inputTokens"], input + 300);
        assert_eq!(usage["outputTokens"], output + 7);
        assert_eq!(usage["cachedInputTokens"], cached);
        assert_eq!(usage["turns"], 2);
        assert_eq!(usage["contextUsed"], 300);
        assert_eq!(usage["contextSize"], 100000);
        assert!(usage.get("estimated").is_none(), "{usage}");
        assert_cost(&usage["cost"], spent);
        assert_eq!(usage["currency"], "USD", "{usage}");
    };
    want(&client.call("session/usage", json!({"sessionId": session})));
    drop(client);
    env.kill_and_restart();
    let mut client = env.daemon.client();
    want(&client.call("session/usage", json!({"sessionId": session})));
    // Not stored, so not replayed.
    let (replay, _) = client.load_with_replay(&session);
    assert!(
        replay.iter().all(|e| e["type"] != "usage_update"),
        "{replay:#?}"
    );
    let error = client.fail("session/usage", json!({"sessionId": "no-such-session"}));
    assert_eq!(error["code"], -32000, "{error}");
}

#[test]
fn anthropic_cache_reads_count_as_cached_input_tokens() {
    let env = Env::new("kind = \"anthropic\"\nmax_tokens = 1024", "");
    env.fake.push(
        anthropic::Builder::new()
            .text("cached")
            .usage(20, 4)
            .cache_read(300)
            .build(),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "hi", no_questions);
    let [event] = &turn.usage[..] else {
        panic!("{:#?}", turn.usage)
    };
    // Anthropic counts cache reads apart from `input_tokens`; the model read them all.
    assert_eq!(event["inputTokens"], 320);
    assert_eq!(event["cachedInputTokens"], 300);
    assert_eq!(event["outputTokens"], 4);
    assert_eq!(event["contextUsed"], 320);
    // No price configured: no cost anywhere, nor a currency.
    assert!(event.get("cost").is_none(), "{event}");
    assert!(event.get("currency").is_none(), "{event}");
    assert!(event["session"].get("cost").is_none(), "{event}");
    let usage = client.call("session/usage", json!({"sessionId": session}));
    assert_eq!(usage["inputTokens"], 320);
    assert_eq!(usage["cachedInputTokens"], 300);
}

#[test]
fn a_provider_that_reports_no_usage_gets_an_estimate_marked_estimated() {
    let env = Env::new("", "");
    env.fake
        .push(openai::Builder::new().text("twelve bytes").build());
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "hi", no_questions);
    let [event] = &turn.usage[..] else {
        panic!("{:#?}", turn.usage)
    };
    assert_eq!(event["estimated"], true, "{event}");
    assert_eq!(event["turn"]["estimated"], true, "{event}");
    // The request (a system prompt and the tools) is hundreds of tokens, estimated.
    assert!(event["inputTokens"].as_u64().unwrap() > 100, "{event}");
    assert_eq!(event["outputTokens"], 3, "12 bytes at 4 per token");
    let usage = client.call("session/usage", json!({"sessionId": session}));
    assert_eq!(usage["estimated"], true, "{usage}");
    assert_eq!(usage["inputTokens"], event["inputTokens"]);
    assert_eq!(usage["outputTokens"], 3);
}

#[test]
fn a_call_a_fallback_answers_is_priced_and_gauged_as_the_fallback() {
    let backup = zeroclaw_testkit::FakeProvider::start_blocking().unwrap();
    // The primary (the env's fake) has no reply scripted: it answers 500, and the fallback,
    // with its own prices (4 and 20 per million) and window, answers instead.
    let env = Env::new(
        "context_window = 100000\n[provider.pricing]\ninput = 2.0\noutput = 10.0\ncurrency = \"EUR\"",
        &format!(
            "[[fallback]]\nbase_url = {:?}\nmodel = \"backup\"\nmax_retries = 0\ncontext_window = 50000\n\
             [fallback.pricing]\ninput = 4.0\noutput = 20.0\ncurrency = \"EUR\"",
            backup.base_url()
        ),
    );
    backup.push(
        openai::Builder::new()
            .text("from the backup")
            .usage(1000, 100)
            .build(),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "hi", no_questions);
    assert_eq!(turn.result()["text"], "from the backup");
    let [event] = &turn.usage[..] else {
        panic!("{:#?}", turn.usage)
    };
    let backup_cost = (1000.0 * 4.0 + 100.0 * 20.0) / 1_000_000.0;
    assert_cost(&event["cost"], backup_cost);
    assert_cost(&event["turn"]["cost"], backup_cost);
    assert_eq!(event["currency"], "EUR", "{event}");
    assert_eq!(event["contextSize"], 50000, "{event}");
    assert_eq!(event["contextUsed"], 1000, "{event}");
    let usage = client.call("session/usage", json!({"sessionId": session}));
    assert_cost(&usage["cost"], backup_cost);
    assert_eq!(usage["currency"], "EUR", "{usage}");
}

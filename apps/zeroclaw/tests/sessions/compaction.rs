//! Long sessions (issue 16): older turns are folded into a summary the model writes when
//! the next request would pass `agent.compact_at_percent` of the context window, when the
//! provider refuses a request as too long, and on `session/compact`. The fake provider
//! enforces a context limit with OpenAI's real refusal. The stored history is never
//! rewritten: every message stays in `session/messages`.

use crate::common::*;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

/// What the summarising requests (and only they) say.
const SUMMARISING: &str = "You compact the conversation";

/// A prompt of about 2 KiB.
fn long_prompt(n: usize) -> String {
    format!("prompt {n}: {}", "lorem ipsum ".repeat(170))
}

/// An answer without a usage report: the fake's fixed token counts would calibrate the
/// daemon's estimate against nothing real.
fn answer(text: &str) -> zeroclaw_testkit::Reply {
    openai::Builder::new().text(text).build()
}

fn system_prompt(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Every stored message, checked complete: `users` prompts and as many answers, in order.
fn assert_history_whole(client: &mut Client, session: &str, users: usize) {
    let messages = client.messages(session);
    let prompts: Vec<&Value> = messages.iter().filter(|m| m["kind"] == "user").collect();
    assert_eq!(prompts.len(), users, "every prompt is still stored");
    for (n, prompt) in prompts.iter().enumerate() {
        assert_eq!(prompt["text"], long_prompt(n));
    }
    let answers = messages.iter().filter(|m| m["kind"] == "assistant").count();
    assert_eq!(answers, users);
}

#[test]
fn a_long_session_compacts_before_passing_the_window_and_keeps_working() {
    // 4,000 tokens of window (about 16 KB): the tools' definitions and the system prompt
    // take a quarter; each turn adds 2 KiB.
    let env = Env::new("context_window = 4000", "");
    env.fake.limit_context(16_000);
    env.fake.answer_when(
        SUMMARISING,
        openai::text(&["SUMMARY: the user sent numbered prompts."]),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let mut compacted = Vec::new();
    for n in 0..12 {
        env.fake.push(answer(&format!("answer {n}")));
        let turn = client.prompt(&session, &long_prompt(n), no_questions);
        assert_eq!(turn.result()["stopReason"], "end_turn", "turn {n}");
        compacted.extend(turn.of_type("context_compacted").into_iter().cloned());
    }
    assert!(
        !compacted.is_empty(),
        "12 turns of 2 KiB pass 80% of a 16 KB window"
    );
    let event = &compacted[0];
    assert_eq!(event["summary"], "SUMMARY: the user sent numbered prompts.");
    assert!(event["messagesFolded"].as_u64().unwrap() >= 2, "{event}");
    assert!(
        event["turnId"].is_string(),
        "a turn's compaction belongs to it: {event}"
    );

    // No model request was refused: each was compacted before it passed the limit. The
    // ones after a compaction carry the summary instead of the folded turns.
    let requests = env.fake.requests();
    let sizes: Vec<(usize, bool)> = requests
        .iter()
        .map(|r| {
            (
                r.raw_body.len(),
                system_prompt(&r.body).contains(SUMMARISING),
            )
        })
        .collect();
    assert!(
        requests.iter().all(|r| r.raw_body.len() <= 16_000),
        "{sizes:?}"
    );
    let last = requests
        .iter()
        .rev()
        .find(|r| !system_prompt(&r.body).contains(SUMMARISING));
    let last = &last.unwrap().body;
    assert!(system_prompt(last).contains("SUMMARY: the user sent numbered prompts."));
    assert!(!last.to_string().contains("prompt 0: "), "turn 0 is folded");
    assert!(
        last.to_string().contains("prompt 11: "),
        "the last turn is verbatim"
    );

    // Lossless in the store; the summary is a message of its own and is replayed.
    assert_history_whole(&mut client, &session, 12);
    let summaries: Vec<Value> = client
        .messages(&session)
        .into_iter()
        .filter(|m| m["kind"] == "summary")
        .collect();
    assert_eq!(summaries.len(), compacted.len());
    let mut other = env.daemon.client();
    let (replayed, _) = other.load_with_replay(&session);
    assert_eq!(
        replayed
            .iter()
            .filter(|e| e["type"] == "context_compacted")
            .count(),
        compacted.len()
    );
}

#[test]
fn a_refusal_as_too_long_compacts_once_and_retries() {
    // The daemon thinks the window is large; the provider knows better.
    let env = Env::new("context_window = 1000000", "");
    // Room for the tools' definitions (some 7 KB) and a few long prompts.
    env.fake.limit_context(16_000);
    env.fake.answer_when(
        SUMMARISING,
        openai::text(&["SUMMARY of the early prompts."]),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    for n in 0..8 {
        env.fake.push(answer(&format!("answer {n}")));
        let turn = client.prompt(&session, &long_prompt(n), no_questions);
        assert_eq!(turn.result()["stopReason"], "end_turn", "turn {n}");
    }
    let requests = env.fake.requests();
    let refused = requests
        .iter()
        .filter(|r| r.raw_body.len() > 16_000)
        .count();
    assert!(refused >= 1, "the provider refused at least one request");
    assert_history_whole(&mut client, &session, 8);
    assert!(
        client
            .messages(&session)
            .iter()
            .any(|m| m["kind"] == "summary")
    );
}

#[test]
fn a_single_prompt_longer_than_the_window_fails_clearly() {
    let env = Env::new("context_window = 1000000", "");
    env.fake.limit_context(12_000);
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, &"x".repeat(20_000), no_questions);
    let error = turn.error();
    assert_eq!(error["code"], -32004);
    assert_eq!(error["data"]["kind"], "context_length", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("compact"),
        "{error}"
    );
    // The prompt is kept: nothing of what the user sent is lost.
    assert_eq!(client.messages(&session)[0]["kind"], "user");
}

#[test]
fn session_compact_folds_all_but_the_last_turn_on_demand() {
    let env = Env::new("", "");
    env.fake
        .answer_when(SUMMARISING, openai::text(&["SUMMARY on demand."]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    env.fake.push(answer("answer 0"));
    client
        .prompt(&session, &long_prompt(0), no_questions)
        .result();

    // One turn: nothing to fold.
    let result = client.call("session/compact", json!({"sessionId": session}));
    assert_eq!(result, json!({"messagesFolded": 0}));

    for n in 1..3 {
        env.fake.push(answer(&format!("answer {n}")));
        client
            .prompt(&session, &long_prompt(n), no_questions)
            .result();
    }
    let result = client.call("session/compact", json!({"sessionId": session}));
    assert_eq!(
        result["messagesFolded"], 4,
        "two turns of two messages: {result}"
    );
    assert_eq!(result["summary"], "SUMMARY on demand.");
    // What its summarising call used (the fake reports one token per chunk written); no
    // turn holds it.
    assert_eq!(result["usage"]["outputTokens"], 1, "{result}");
    let events = client.take_events();
    let event = events
        .iter()
        .find(|e| e["type"] == "context_compacted")
        .unwrap();
    assert_eq!(event["messagesFolded"], 4);
    assert!(event.get("turnId").is_none(), "{event}");

    // The next turn sends the summary and the last turn, not the folded ones.
    env.fake.push(answer("answer 3"));
    client
        .prompt(&session, &long_prompt(3), no_questions)
        .result();
    let body = env.fake.requests().last().unwrap().body.clone();
    assert!(system_prompt(&body).contains("SUMMARY on demand."));
    let text = body.to_string();
    assert!(!text.contains("prompt 0: ") && !text.contains("prompt 1: "));
    assert!(text.contains("prompt 2: ") && text.contains("prompt 3: "));
    assert_history_whole(&mut client, &session, 4);

    // Not attached: refused like any session method.
    let mut stranger = env.daemon.client();
    let refused = stranger.request("session/compact", json!({"sessionId": session}));
    assert_eq!(refused["error"]["code"], -32003, "{refused}");
}

#[test]
fn compactions_summary_calls_count_as_the_turns_usage_and_budget() {
    // The provider refuses a request as too long once the session has grown: that turn
    // compacts (a summarising call of 3040 tokens), and before it asks again its budget
    // (2500, which no plain turn of 1005 reaches) sees the summary's tokens.
    let env = Env::new(
        "context_window = 1000000",
        "[limits]\nmax_tokens_per_turn = 2500",
    );
    env.fake.limit_context(16_000);
    env.fake.answer_when(
        SUMMARISING,
        openai::Builder::new()
            .text("SUMMARY of the early prompts.")
            .usage(3000, 40)
            .build(),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let mut spent = 0;
    for n in 0..8 {
        env.fake.push(
            openai::Builder::new()
                .text(&format!("answer {n}"))
                .usage(1000, 5)
                .build(),
        );
        let turn = client.prompt(&session, &long_prompt(n), no_questions);
        let result = turn.result().clone();
        if result["stopReason"] == "end_turn" {
            spent += 1005;
            continue;
        }
        assert_eq!(result["stopReason"], "budget", "{result}");
        assert_eq!(turn.of_type("context_compacted").len(), 1);
        assert_eq!(
            result["budget"],
            json!({"limit": "limits.max_tokens_per_turn", "used": "3040 tokens of 2500"})
        );
        assert_eq!(
            result["usage"],
            json!({"inputTokens": 3000, "outputTokens": 40})
        );
        // Its `usage_update`: the summarising call's tokens; the gauge stays at the last
        // step's measure (the previous turn's call), the summary request being no measure
        // of the conversation.
        let [event] = &turn.usage[..] else {
            panic!("{:#?}", turn.usage)
        };
        assert_eq!(event["inputTokens"], 3000, "{event}");
        assert_eq!(event["outputTokens"], 40, "{event}");
        assert_eq!(event["contextUsed"], 1000, "{event}");
        assert_eq!(event["session"]["inputTokens"], spent / 1005 * 1000 + 3000);
        let usage = client.call("session/usage", json!({"sessionId": session}));
        assert_eq!(usage["inputTokens"], spent / 1005 * 1000 + 3000, "{usage}");
        assert_eq!(usage["contextUsed"], 1000, "{usage}");
        return;
    }
    panic!("no turn compacted");
}

//! Issue 34, budgets: `[limits]` stops a turn that keeps calling tools once its tokens or
//! cost reach the limit — between steps, its last tool calls answered, so the session goes
//! on — with `stopReason: "budget"` naming the limit.

use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::openai;

fn list_dir_call(id: &str) -> openai::Builder {
    openai::Builder::new().tool_call(0, id, "list_dir", r#"{"path":"."}"#, 1)
}

#[test]
fn a_token_budget_stops_a_looping_turn_between_steps() {
    let env = Env::new("", "[limits]\nmax_tokens_per_turn = 250");
    // A model that lists the directory at every call, 120 tokens each (a fourth call
    // would find no reply and fail the turn).
    for i in 1..=3 {
        env.fake
            .push(list_dir_call(&format!("call_{i}")).usage(100, 20).build());
    }
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "loop", no_questions);
    let result = turn.result().clone();
    assert_eq!(result["stopReason"], "budget", "{result}");
    assert_eq!(
        result["budget"],
        json!({"limit": "limits.max_tokens_per_turn", "used": "360 tokens of 250"})
    );
    // Three calls (120, 240, then 360 ≥ 250): the third call's tool ran, no fourth call.
    assert_eq!(env.fake.request_count(), 3);
    let results = turn
        .events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .count();
    assert_eq!(results, 3, "{:#?}", turn.events);
    let complete = turn.events.last().unwrap();
    assert_eq!(complete["type"], "turn_complete");
    assert_eq!(complete["stopReason"], "budget");

    // The budget is per turn, and the history is whole: the next turn starts afresh and
    // the model is sent the stopped turn's last tool result.
    env.fake.push(openai::text(&["done"]));
    let next = client.prompt(&session, "go on", no_questions);
    assert_eq!(next.result()["stopReason"], "end_turn");
    let body = &env.fake.requests()[3].body;
    let messages = body["messages"].as_array().unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "tool" && m["tool_call_id"] == "call_3"),
        "{body}"
    );
}

#[test]
fn a_cost_budget_counts_at_the_configured_prices_in_their_currency() {
    // 2 per million input tokens, 10 per million output: a call of (100000, 1000) costs 0.21.
    // US dollars, the default, read as `$`; another currency by its code.
    for (currency, used) in [
        ("", "$0.4200 of $0.4000"),
        ("currency = \"EUR\"", "0.4200 EUR of 0.4000 EUR"),
    ] {
        let env = Env::new(
            &format!("[provider.pricing]\ninput = 2.0\noutput = 10.0\n{currency}"),
            "[limits]\nmax_cost_per_turn = 0.4",
        );
        for i in 1..=4 {
            env.fake.push(
                list_dir_call(&format!("call_{i}"))
                    .usage(100_000, 1_000)
                    .build(),
            );
        }
        let mut client = env.daemon.client();
        let session = client.new_session(&env.work);
        let result = client
            .prompt(&session, "loop", no_questions)
            .result()
            .clone();
        assert_eq!(result["stopReason"], "budget", "{result}");
        assert_eq!(
            result["budget"],
            json!({"limit": "limits.max_cost_per_turn", "used": used})
        );
        assert_eq!(env.fake.request_count(), 2);
    }
}

/// The parent's `task` call, reporting `usage` tokens.
fn task_call(id: &str, usage: (u64, u64)) -> zeroclaw_testkit::Reply {
    let args = json!({"description": "look", "prompt": "list the directory"});
    openai::Builder::new()
        .tool_call(0, id, "task", &args.to_string(), 1)
        .usage(usage.0, usage.1)
        .build()
}

#[test]
fn a_subagents_spend_counts_against_its_parents_budget_and_usage() {
    let env = Env::new("", "[limits]\nmax_tokens_per_turn = 250");
    // The parent's call (120 tokens) runs a subagent whose one call takes 150: 270 ≥ 250,
    // so the parent stops before a second call (none is scripted: it would fail).
    env.fake.push(task_call("call_task", (100, 20)));
    env.fake.push(
        openai::Builder::new()
            .text("the child's answer")
            .usage(100, 50)
            .build(),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "delegate", no_questions);
    let result = turn.result().clone();
    assert_eq!(result["stopReason"], "budget", "{result}");
    assert_eq!(
        result["budget"],
        json!({"limit": "limits.max_tokens_per_turn", "used": "270 tokens of 250"})
    );
    assert_eq!(env.fake.request_count(), 2);
    // The parent turn's usage includes its subagent's; the child session keeps its own.
    assert_eq!(
        result["usage"],
        json!({"inputTokens": 200, "outputTokens": 70})
    );
    let usage = client.call("session/usage", json!({"sessionId": session}));
    assert_eq!(
        (&usage["inputTokens"], &usage["outputTokens"]),
        (&json!(200), &json!(70)),
        "{usage}"
    );
    let child = turn
        .usage
        .iter()
        .find(|e| e["parentToolCallId"] == "call_task")
        .unwrap_or_else(|| panic!("the child's usage_update: {:#?}", turn.usage));
    assert_eq!(child["turn"]["inputTokens"], 100, "{child}");
    let child_session = child["childSessionId"].as_str().unwrap();
    let usage = client.call("session/usage", json!({"sessionId": child_session}));
    assert_eq!(
        (&usage["inputTokens"], &usage["outputTokens"]),
        (&json!(100), &json!(50)),
        "{usage}"
    );
}

#[test]
fn a_subagent_whose_parents_budget_is_spent_stops_before_its_first_call() {
    let env = Env::new("", "[limits]\nmax_tokens_per_turn = 250");
    // The parent's only call spends the budget, and asks for a subagent.
    env.fake.push(task_call("call_task", (300, 10)));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "delegate", no_questions);
    let result = turn.result().clone();
    assert_eq!(result["stopReason"], "budget", "{result}");
    assert_eq!(env.fake.request_count(), 1, "neither asks the model again");
    let task = turn.one("tool_result");
    let output = task["rawOutput"].as_str().unwrap();
    assert!(
        output.contains(
            "the subagent stopped before it finished: the turn's budget limits.max_tokens_per_turn is spent (310 tokens of 250)"
        ),
        "{task}"
    );
    assert_eq!(task["isError"], false, "{task}");
}

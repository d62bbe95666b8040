//! Issue 34: an unattended entry's budgets. A webhook's or schedule's `max_tokens` and
//! `max_cost` (`max_steps`: provider_events.rs) stop its run's turn cleanly between steps
//! (`stopReason: "budget"`, which only a budget gives a run's record: `done` with `budget`
//! naming the limit); a schedule without a `max_tokens` has the default one, so a run that
//! loops stops.

use crate::harness::*;
use serde_json::json;
use zeroclaw_testkit::openai;

/// A model call that lists the directory, reporting these tokens.
fn list_dir_call(i: usize, input: u64, output: u64) -> zeroclaw_testkit::Reply {
    openai::Builder::new()
        .tool_call(0, &format!("call_{i}"), "list_dir", r#"{"path":"."}"#, 1)
        .usage(input, output)
        .build()
}

/// The `manual` schedule, whose runs may list directories, with `extra` keys.
fn schedule(work: &str, extra: &str) -> String {
    manual_schedule(
        work,
        &format!("{extra}\n[schedules.approve]\nlist_dir = \"allow\""),
    )
}

#[test]
fn a_webhooks_token_budget_stops_its_run_and_the_record_names_it() {
    let hooks = Hooks::start(
        |w| {
            hook(
                w,
                "max_tokens = 250\n[webhooks.approve]\nlist_dir = \"allow\"",
            )
        },
        &[],
    );
    // 120 tokens a call: 360 ≥ 250 after the third; a fourth is never asked for.
    for i in 1..=4 {
        hooks.fake.push(list_dir_call(i, 100, 20));
    }
    let (status, answer) = hooks.deliver("ci", r#"{"ref":"main"}"#, "b-1");
    assert_eq!(status, 202, "{answer}");
    let run = hooks.wait_finished(answer["runId"].as_str().unwrap());
    assert_eq!(run["status"], "done", "{run}");
    assert_eq!(
        run["budget"],
        json!({"limit": "max_tokens (webhook ci)", "used": "360 tokens of 250"}),
        "{run}"
    );
    assert_eq!(
        run["usage"],
        json!({"inputTokens": 300, "outputTokens": 60}),
        "{run}"
    );
    assert_eq!(hooks.fake.request_count(), 3);
}

#[test]
fn a_schedules_cost_budget_stops_its_run_at_the_configured_prices() {
    // 2 per million input tokens, 10 per million output: a call of (100000, 1000) costs 0.21.
    let hooks = Hooks::start(
        |w| {
            format!(
                "[provider.pricing]\ninput = 2.0\noutput = 10.0\n\n{}",
                schedule(w, "max_cost = 0.4")
            )
        },
        &[],
    );
    for i in 1..=3 {
        hooks.fake.push(list_dir_call(i, 100_000, 1_000));
    }
    let run = hooks.run_schedule("manual");
    assert_eq!(run["status"], "done", "{run}");
    assert_eq!(
        run["budget"],
        json!({"limit": "max_cost (schedule manual)", "used": "$0.4200 of $0.4000"}),
        "{run}"
    );
    let cost = run["usage"]["cost"].as_f64().unwrap();
    assert!((cost - 0.42).abs() < 1e-9, "{run}");
    assert_eq!(hooks.fake.request_count(), 2);
}

#[test]
fn a_schedule_without_max_tokens_stops_a_looping_run_at_the_default_budget() {
    let hooks = Hooks::start(|w| schedule(w, ""), &[]);
    // A model that loops, 600000 tokens a call: the default million is passed after two.
    for i in 1..=3 {
        hooks.fake.push(list_dir_call(i, 600_000, 0));
    }
    let run = hooks.run_schedule("manual");
    assert_eq!(run["status"], "done", "{run}");
    assert_eq!(
        run["budget"],
        json!({"limit": "max_tokens (schedule manual)", "used": "1200000 tokens of 1000000"}),
        "{run}"
    );
    assert_eq!(hooks.fake.request_count(), 2);
}

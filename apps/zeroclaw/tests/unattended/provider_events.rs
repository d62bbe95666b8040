//! Issue 34: an unattended run's record keeps its provider's retries and fallbacks
//! (`providerEvents`), since nobody watched the live events.

use crate::harness::*;
use serde_json::json;
use zeroclaw_testkit::{FakeProvider, Reply, openai};

#[test]
fn a_runs_record_lists_the_fallback_its_turn_made() {
    let backup = FakeProvider::start_blocking().unwrap();
    let backup_url = backup.base_url();
    // The primary (the harness's fake) has no reply scripted: it answers 500 every time.
    let hooks = Hooks::start(
        |w| {
            format!(
                "[[fallback]]\nbase_url = {backup_url:?}\nmodel = \"backup\"\nmax_retries = 0\n\n{}",
                manual_schedule(w, "")
            )
        },
        &[],
    );
    backup.push(openai::text(&["done by the backup"]));
    let run = hooks.run_schedule("manual");
    assert_eq!(run["status"], "done", "{run}");
    assert_eq!(
        run["providerEvents"],
        json!([{
            "type": "provider_fallback",
            "from": format!("fake at {}", hooks.fake.base_url()),
            "to": format!("backup at {backup_url}"),
            "reason": "HTTP 500 Internal Server Error",
        }]),
        "{run}"
    );
    // A run without any has none.
    hooks.fake.push(openai::text(&["primary"]));
    let run = hooks.run_schedule("manual");
    assert_eq!(run["status"], "done", "{run}");
    assert!(run.get("providerEvents").is_none(), "{run}");
}

#[test]
fn a_runs_record_lists_the_retries_its_turn_made() {
    let hooks = Hooks::with_provider("max_retries = 1", |w| manual_schedule(w, ""), &[]);
    hooks.fake.push(Reply::rate_limited(Some(1)));
    hooks.fake.push(openai::text(&["done after a retry"]));
    let run = hooks.run_schedule("manual");
    assert_eq!(run["status"], "done", "{run}");
    assert_eq!(
        run["providerEvents"],
        json!([{
            "type": "provider_retry",
            "attempt": 1,
            "delayMs": 1000,
            "reason": "HTTP 429 Too Many Requests",
            "provider": format!("fake at {}", hooks.fake.base_url()),
        }]),
        "{run}"
    );
}

/// A schedule's `max_steps` stops a looping run cleanly: the run is `done` and its record
/// names the budget.
#[test]
fn a_runs_record_names_the_budget_its_turn_stopped_at() {
    let hooks = Hooks::start(
        |w| {
            manual_schedule(
                w,
                "max_steps = 2\n[schedules.approve]\nlist_dir = \"allow\"",
            )
        },
        &[],
    );
    for i in 1..=4 {
        hooks.fake.push(
            openai::Builder::new()
                .tool_call(0, &format!("call_{i}"), "list_dir", r#"{"path":"."}"#, 1)
                .build(),
        );
    }
    let run = hooks.run_schedule("manual");
    assert_eq!(run["status"], "done", "{run}");
    assert_eq!(
        run["budget"],
        json!({"limit": "max_steps (schedule manual)", "used": "2 model calls of 2"}),
        "{run}"
    );
    assert_eq!(hooks.fake.request_count(), 2);
}

/// A compaction's summarising call walks the provider's route as a step's call does: its
/// retries are the run's too.
#[test]
fn a_runs_record_lists_the_retries_of_its_compactions_summary_call() {
    let hooks = Hooks::with_provider(
        "max_retries = 1\ncontext_window = 1000000",
        |w| manual_schedule(w, "session = \"shared\""),
        &[],
    );
    // Two runs in the shared session, the first with a long answer.
    hooks
        .fake
        .push(openai::text(&[&"long answer ".repeat(200)]));
    assert_eq!(hooks.run_schedule("manual")["status"], "done");
    hooks.fake.push(openai::text(&["short answer"]));
    assert_eq!(hooks.run_schedule("manual")["status"], "done");
    // The third run's request, longer than the second's, is refused as too long: the turn
    // compacts (folding the first two runs' turns, the long answer with them), its
    // summarising call answered 429 once, then asks again with the summary.
    let second = hooks.fake.requests().last().unwrap().raw_body.len();
    hooks.fake.limit_context(second + 10);
    hooks.fake.push(Reply::rate_limited(Some(1)));
    hooks.fake.push(openai::text(&["SUMMARY of two runs."]));
    hooks.fake.push(openai::text(&["third answer"]));
    let record = hooks.run_schedule("manual");
    assert_eq!(record["status"], "done", "{record}");
    let summarising = hooks
        .fake
        .requests()
        .iter()
        .filter(|r| r.body.to_string().contains("You compact the conversation"))
        .count();
    assert_eq!(summarising, 2, "the summarising call and its retry");
    assert_eq!(
        record["providerEvents"],
        json!([{
            "type": "provider_retry",
            "attempt": 1,
            "delayMs": 1000,
            "reason": "HTTP 429 Too Many Requests",
            "provider": format!("fake at {}", hooks.fake.base_url()),
        }]),
        "{record}"
    );
}

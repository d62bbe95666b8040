//! Issue 34: an unattended run's record keeps its provider's retries and fallbacks
//! (`providerEvents`), since nobody watched the live events.

use crate::harness::*;
use serde_json::json;
use zeroclaw_testkit::{FakeProvider, openai};

#[test]
fn a_runs_record_lists_the_fallback_its_turn_made() {
    let backup = FakeProvider::start_blocking().unwrap();
    let backup_url = backup.base_url();
    // The primary (the harness's fake) has no reply scripted: it answers 500 every time.
    let hooks = Hooks::start(
        |w| {
            format!(
                "[[fallback]]\nbase_url = {backup_url:?}\nmodel = \"backup\"\nmax_retries = 0\n\n\
                 [[schedules]]\nname = \"manual\"\ncron = \"0 0 1 1 *\"\ncwd = \"{w}\"\nprompt = \"go\"\n"
            )
        },
        &[],
    );
    backup.push(openai::text(&["done by the backup"]));
    let run = hooks
        .daemon
        .client()
        .call("schedule/run", json!({"name": "manual"}));
    let run = hooks.wait_finished(run["runId"].as_str().unwrap());
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
    let run = hooks
        .daemon
        .client()
        .call("schedule/run", json!({"name": "manual"}));
    let run = hooks.wait_finished(run["runId"].as_str().unwrap());
    assert_eq!(run["status"], "done", "{run}");
    assert!(run.get("providerEvents").is_none(), "{run}");
}

/// A schedule's `max_steps` stops a looping run cleanly: the run is `done` and its record
/// names the budget.
#[test]
fn a_runs_record_names_the_budget_its_turn_stopped_at() {
    let hooks = Hooks::start(
        |w| {
            format!(
                "[[schedules]]\nname = \"manual\"\ncron = \"0 0 1 1 *\"\ncwd = \"{w}\"\nprompt = \"go\"\n\
                 max_steps = 2\n[schedules.approve]\nlist_dir = \"allow\"\n"
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
    let run = hooks
        .daemon
        .client()
        .call("schedule/run", json!({"name": "manual"}));
    let run = hooks.wait_finished(run["runId"].as_str().unwrap());
    assert_eq!(run["status"], "done", "{run}");
    assert_eq!(
        run["budget"],
        json!({"limit": "max_steps (schedule manual)", "used": "2 model calls of 2"}),
        "{run}"
    );
    assert_eq!(hooks.fake.request_count(), 2);
}

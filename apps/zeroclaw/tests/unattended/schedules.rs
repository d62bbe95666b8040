//! Schedules on a test clock (`ZEROCLAW_TEST_CLOCK`, a file the test writes): a tick, a
//! tick skipped when the queue is full, the next run, catch-up after downtime, and a clock
//! that goes back. The scheduler's rules are unit-tested on its pure core
//! (`unattended/rules/ticker.rs`); these drive the real daemon.

use crate::harness::*;
use serde_json::json;
use zeroclaw_testkit::{Gate, openai};

struct Clocked {
    hooks: Hooks,
    clock: std::path::PathBuf,
}

impl Clocked {
    fn start(table: impl Fn(&str) -> String, at: &str) -> Self {
        let clock_dir = tempfile::tempdir().unwrap().keep();
        let clock = clock_dir.join("now");
        std::fs::write(&clock, at).unwrap();
        let path = clock.display().to_string();
        let hooks = Hooks::start(table, &[("ZEROCLAW_TEST_CLOCK", &path), ("TZ", "UTC")]);
        hooks.daemon.wait_for_log("scheduler started");
        Self { hooks, clock }
    }

    /// Moves the test clock (written whole, then renamed, so it is never read half-written).
    fn set(&self, at: &str) {
        let tmp = self.clock.with_extension("tmp");
        std::fs::write(&tmp, at).unwrap();
        std::fs::rename(&tmp, &self.clock).unwrap();
    }
}

fn schedule(work: &str, name: &str, cron: &str, extra: &str) -> String {
    format!(
        "[[schedules]]\nname = \"{name}\"\ncron = \"{cron}\"\ncwd = \"{work}\"\nprompt = \"Summarise, {{{{name}}}} at {{{{now}}}}\"\n{extra}\n"
    )
}

#[test]
fn a_schedule_fires_on_its_minute_and_lists_its_next_run() {
    let c = Clocked::start(
        |w| schedule(w, "morning", "0 8 * * 1-5", ""),
        "2026-12-04T07:59:00Z",
    );
    let listed = c.hooks.daemon.client().call("schedules/list", json!({}));
    assert_eq!(listed["schedules"][0]["name"], "morning");
    assert_eq!(
        listed["schedules"][0]["nextRun"],
        "2026-12-04T08:00:00+00:00"
    );
    c.hooks.fake.push(openai::text(&["summary"]));
    c.set("2026-12-04T08:00:05Z");
    let tick = c.hooks.daemon.wait_for_log("schedule tick");
    assert!(tick.contains("2026-12-04T08:00:00"), "{tick}");
    let runs = c.hooks.runs(json!({"source": "schedule"}));
    assert_eq!(runs.len(), 1);
    let run = c.hooks.wait_finished(runs[0]["runId"].as_str().unwrap());
    assert_eq!(run["status"], "done", "{run}");
    let prompt = c.hooks.fake.requests()[0].body["messages"].to_string();
    assert!(
        prompt.contains("Summarise, morning at 2026-12-04T08:00:05+00:00"),
        "{prompt}"
    );
    let listed = c.hooks.daemon.client().call("schedules/list", json!({}));
    assert_eq!(
        listed["schedules"][0]["nextRun"],
        "2026-12-07T08:00:00+00:00"
    );
}

#[test]
fn a_tick_that_finds_the_queue_full_is_skipped_and_recorded_and_a_clock_going_back_repeats_nothing()
{
    let c = Clocked::start(
        |w| schedule(w, "often", "* * * * *", "queue = 1"),
        "2026-12-04T07:59:30Z",
    );
    let gate = Gate::new();
    c.hooks
        .fake
        .push(openai::Builder::new().wait_for(&gate).text("1").build());
    c.hooks.fake.push(openai::text(&["2"]));
    c.set("2026-12-04T08:00:01Z");
    c.hooks.daemon.wait_for_log("run started");
    c.hooks.fake.wait_for_requests(1);
    // The 08:00 run is running; 08:01's waits in the queue of 1; 08:02's finds it full.
    c.set("2026-12-04T08:01:01Z");
    c.hooks.daemon.wait_for_log_count("schedule tick", 2);
    c.set("2026-12-04T08:02:01Z");
    let skipped = c
        .hooks
        .daemon
        .wait_for_log("schedule tick skipped: its queue is full");
    assert!(skipped.contains("08:02:00"), "{skipped}");
    gate.open();
    c.hooks.daemon.wait_for_log_count("run finished", 2);
    // Back by an hour and forward again over the minutes that ran: nothing runs twice.
    c.hooks.fake.push(openai::text(&["4"]));
    c.set("2026-12-04T07:01:00Z");
    c.set("2026-12-04T08:01:30Z");
    c.set("2026-12-04T08:03:01Z");
    c.hooks.daemon.wait_for_log_count("run finished", 3);
    let runs = c.hooks.runs(json!({"name": "often"}));
    let statuses: Vec<&str> = runs.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(runs.len(), 4, "{runs:#?}");
    assert_eq!(
        statuses.iter().filter(|s| **s == "skipped").count(),
        1,
        "{statuses:?}"
    );
    let skipped_run = runs.iter().find(|r| r["status"] == "skipped").unwrap();
    assert!(
        skipped_run["error"].as_str().unwrap().contains("queue"),
        "{skipped_run}"
    );
    assert_eq!(
        c.hooks.daemon.log_count("schedule tick"),
        4,
        "one line per minute 08:00..08:03"
    );
}

#[test]
fn after_downtime_catch_up_runs_the_latest_missed_tick_once() {
    let mut c = Clocked::start(
        |w| {
            format!(
                "{}{}",
                schedule(w, "daily", "0 8 * * *", "catch_up = true"),
                schedule(w, "plain", "30 8 * * *", "")
            )
        },
        "2026-12-04T07:59:00Z",
    );
    c.hooks
        .fake
        .push_all([openai::text(&["day one"]), openai::text(&["day one plain"])]);
    c.set("2026-12-04T08:30:10Z");
    c.hooks.daemon.wait_for_log_count("run finished", 1);
    // 08:00 and 08:30 are passed together: each schedule runs its latest tick once.
    c.hooks.daemon.wait_for_log_count("run finished", 2);
    // Down over the next day's ticks.
    c.hooks.daemon.stop();
    c.set("2026-12-05T12:00:00Z");
    c.hooks.fake.push(openai::text(&["caught up"]));
    c.hooks.restart();
    let line = c.hooks.daemon.wait_for_log("catching up the latest tick");
    assert!(
        line.contains("daily") && line.contains("2026-12-05T08:00:00"),
        "{line}"
    );
    c.hooks.daemon.wait_for_log("run finished");
    let daily = c.hooks.runs(json!({"name": "daily"}));
    assert_eq!(daily.len(), 2, "{daily:#?}");
    assert_eq!(
        c.hooks.runs(json!({"name": "plain"})).len(),
        1,
        "no catch-up without catch_up"
    );
}

#[test]
fn schedule_run_runs_one_now_and_its_record_carries_its_usage() {
    let c = Clocked::start(
        |w| schedule(w, "manual", "0 0 1 1 *", ""),
        "2026-12-04T07:59:00Z",
    );
    c.hooks.fake.push(openai::text(&["now"]));
    let run = c
        .hooks
        .daemon
        .client()
        .call("schedule/run", json!({"name": "manual"}));
    assert_eq!(run["status"], "queued");
    let run = c.hooks.wait_finished(run["runId"].as_str().unwrap());
    assert_eq!(run["status"], "done");
    // The run's record carries what its turn spent (the fake's usage for one chunk).
    assert_eq!(
        run["usage"],
        json!({"inputTokens": 10, "outputTokens": 1}),
        "{run}"
    );
    let listed = c.hooks.runs(json!({"name": "manual"}));
    assert_eq!(listed[0]["usage"], run["usage"]);
    let err = c
        .hooks
        .daemon
        .client()
        .fail("schedule/run", json!({"name": "nope"}));
    assert_eq!(err["code"], -32602);
}

//! A daemon killed with a run in flight: at the next start that run is `failed` ("daemon
//! stopped") and the run queued behind it runs.

use crate::harness::*;
use serde_json::json;
use zeroclaw_testkit::{Gate, openai};

#[test]
fn a_sigkilled_daemon_fails_its_running_run_at_restart_and_runs_the_queued_one() {
    let mut hooks = Hooks::start(|work| hook(work, ""), &[]);
    let never = Gate::new();
    hooks.fake.push(
        openai::Builder::new()
            .wait_for(&never)
            .text("never")
            .build(),
    );
    let (_, running) = hooks.deliver("ci", r#"{"ref":"a"}"#, "k-1");
    let running_id = running["runId"].as_str().unwrap().to_owned();
    hooks.wait_log_with("run started", &running_id);
    hooks.fake.wait_for_requests(1);
    let (_, queued) = hooks.deliver("ci", r#"{"ref":"b"}"#, "k-2");
    let queued_id = queued["runId"].as_str().unwrap().to_owned();
    assert_eq!(hooks.run(&queued_id)["status"], "queued");
    // A real SIGKILL of the daemon process.
    assert!(!hooks.daemon.kill().success());
    hooks.fake.push(openai::text(&["after the restart"]));
    hooks.restart();
    let failed = hooks.run(&running_id);
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"], "daemon stopped");
    assert!(failed["finishedAt"].is_string());
    assert_eq!(hooks.wait_finished(&queued_id)["status"], "done");
    assert_eq!(hooks.runs(json!({})).len(), 2);
    never.open();
}

//! Bounded queues: past a hook's queue a delivery is 429 with Retry-After, and every
//! delivery accepted before still runs.

use crate::harness::*;
use serde_json::json;
use zeroclaw_testkit::{Gate, openai};

#[test]
fn a_full_queue_answers_429_and_loses_nothing_it_accepted() {
    let hooks = Hooks::start(|work| hook(work, "queue = 1"), &[]);
    let gate = Gate::new();
    hooks
        .fake
        .push(openai::Builder::new().wait_for(&gate).text("first").build());
    hooks.fake.push(openai::text(&["second"]));
    let (status, first) = hooks.deliver("ci", r#"{"ref":"a"}"#, "q-1");
    assert_eq!(status, 202);
    let first_id = first["runId"].as_str().unwrap();
    // The first run is out of the queue (its turn waits on the provider)...
    hooks.wait_log_with("run started", first_id);
    hooks.fake.wait_for_requests(1);
    // ...so the second fills it, and the third finds it full.
    let (status, second) = hooks.deliver("ci", r#"{"ref":"b"}"#, "q-2");
    assert_eq!(status, 202, "{second}");
    assert_eq!(
        hooks.run(second["runId"].as_str().unwrap())["status"],
        "queued"
    );
    let (status, third, retry) = {
        let body = br#"{"ref":"c"}"#;
        let signature = sign(SECRET, body);
        hooks.post(
            "ci",
            body,
            &[
                ("x-hub-signature-256", &signature),
                ("x-github-delivery", "q-3"),
            ],
        )
    };
    assert_eq!(status, 429, "{third}");
    assert_eq!(third["error"]["code"], -32001);
    assert_eq!(retry.as_deref(), Some("30"));
    // The same body as every other 429 (issue 37): the wait in it too.
    assert_eq!(third["error"]["data"]["retryAfterSecs"], 30, "{third}");
    gate.open();
    assert_eq!(hooks.wait_finished(first_id)["status"], "done");
    assert_eq!(
        hooks.wait_finished(second["runId"].as_str().unwrap())["status"],
        "done"
    );
    let runs = hooks.runs(json!({"name": "ci"}));
    assert_eq!(
        runs.len(),
        2,
        "the refused delivery left no record: {runs:?}"
    );
    assert_eq!(hooks.fake.request_count(), 2);
}

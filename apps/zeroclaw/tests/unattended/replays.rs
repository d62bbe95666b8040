//! GitHub's scheme signs the body only: the delivery id is the sender's word. A captured
//! delivery sent again under a new id is still a repeat, for the hook's replay window.

use crate::harness::*;
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn a_signed_body_sent_again_under_any_other_delivery_id_answers_the_first_run_and_starts_nothing() {
    let hooks = Hooks::start(|work| hook(work, ""), &[]);
    hooks.fake.push(openai::text(&["looked once"]));
    let body = r#"{"ref":"main","after":"9f3c1e"}"#;
    let (status, first) = hooks.deliver("ci", body, "d-original");
    assert_eq!(status, 202, "{first}");
    let run_id = first["runId"].as_str().unwrap();
    hooks.wait_finished(run_id);
    let want = json!({
        "runId": run_id,
        "sessionId": first["sessionId"],
        "deliveryId": "d-original",
        "status": "done",
    });

    // The replayer's new X-GitHub-Delivery, an Idempotency-Key instead, or no id at all.
    let (status, again) = hooks.deliver("ci", body, "d-forged-1");
    assert_eq!((status, &again), (200, &want));
    let signature = sign(SECRET, body.as_bytes());
    for id_header in [vec![("idempotency-key", "d-forged-2")], vec![]] {
        let mut headers = vec![("x-hub-signature-256", signature.as_str())];
        headers.extend(id_header);
        let (status, again, _) = hooks.post("ci", body.as_bytes(), &headers);
        assert_eq!((status, &again), (200, &want), "{headers:?}");
    }
    hooks
        .daemon
        .wait_for_log_count("webhook redelivered; nothing started", 3);

    // Another body is another delivery.
    hooks.fake.push(openai::text(&["looked twice"]));
    let (status, second) = hooks.deliver("ci", r#"{"ref":"main","after":"77aa02"}"#, "d-next");
    assert_eq!(status, 202, "{second}");
    hooks.wait_finished(second["runId"].as_str().unwrap());
    assert_eq!(hooks.runs(json!({})).len(), 2);
    assert_eq!(hooks.fake.request_count(), 2, "the replays started no turn");
}

#[test]
fn the_replay_window_is_a_hook_key_checked_at_start_up() {
    let dir = crate::common::TestDir::new();
    let work = dir.path().display().to_string().replace('\\', "\\\\");
    dir.write_config(&format!(
        "[[webhooks]]\nname = \"ci\"\nsecret_env = \"S\"\ncwd = \"{work}\"\nprompt = \"p\"\nreplay_window_secs = 0\n"
    ));
    let out = dir.command(&["daemon"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("webhooks[0] (\"ci\"): `replay_window_secs` must be from 1 to 31622400"),
        "{err}"
    );
}

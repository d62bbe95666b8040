//! `signature = "standard"`: Standard Webhooks signs the id, the timestamp and the body
//! together, so a delivery cannot be sent again under a new id, nor later than 5 minutes
//! from its timestamp; its `webhook-id` deduplicates it.

use crate::harness::*;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

fn standard_hook(work: &str) -> String {
    format!(
        "[[webhooks]]\nname = \"std\"\nsecret_env = \"STANDARD_SECRET\"\nsignature = \"standard\"\ncwd = \"{work}\"\nprompt = \"event: {{{{json /type}}}}\"\n"
    )
}

fn start() -> Hooks {
    let secret = standard_secret();
    Hooks::start(standard_hook, &[("STANDARD_SECRET", &secret)])
}

/// A delivery stamped `at` with these signatures: (status, answer).
fn send(hooks: &Hooks, id: &str, at: i64, signatures: &str, body: &[u8]) -> (u16, Value) {
    let at = at.to_string();
    let (status, answer, _) = hooks.post(
        "std",
        body,
        &[
            ("webhook-id", id),
            ("webhook-timestamp", &at),
            ("webhook-signature", signatures),
            ("content-type", "application/json"),
        ],
    );
    (status, answer)
}

#[test]
fn a_delivery_signed_over_id_timestamp_and_body_runs_once_per_webhook_id() {
    let hooks = start();
    hooks.fake.push(openai::text(&["handled"]));
    let body = br#"{"type":"invoice.paid","data":{"id":"in_1"}}"#;
    let now = unix_now();
    let signature = sign_standard(&STANDARD_KEY, "msg_1", now, body);
    let (status, first) = send(&hooks, "msg_1", now, &signature, body);
    assert_eq!(status, 202, "{first}");
    assert_eq!(first["deliveryId"], "msg_1");
    let run_id = first["runId"].as_str().unwrap();
    let run = hooks.wait_finished(run_id);
    assert_eq!(run["status"], "done", "{run}");
    let prompt = hooks.fake.requests()[0].body["messages"].to_string();
    assert!(prompt.contains("event: invoice.paid"), "{prompt}");

    // The sender's retry (same id, a fresh timestamp and signature): the first run.
    let later = now + 30;
    let retry = sign_standard(&STANDARD_KEY, "msg_1", later, body);
    let (status, again) = send(&hooks, "msg_1", later, &retry, body);
    assert_eq!(status, 200, "{again}");
    assert_eq!(
        again,
        json!({"runId": run_id, "sessionId": first["sessionId"], "deliveryId": "msg_1", "status": "done"})
    );

    // A replayer cannot move the captured signature to a new id or timestamp.
    let (status, moved) = send(&hooks, "msg_forged", now, &signature, body);
    assert_eq!(status, 401, "{moved}");
    assert_eq!(moved["error"]["code"], -32020);
    let (status, _) = send(&hooks, "msg_1", now + 1, &signature, body);
    assert_eq!(status, 401);

    // A key rotation: any v1 entry of the list may match.
    hooks.fake.push(openai::text(&["handled too"]));
    let other = sign_standard(b"the sender's previous key, 32 by", "msg_2", now, body);
    let current = sign_standard(&STANDARD_KEY, "msg_2", now, body);
    let (status, second) = send(&hooks, "msg_2", now, &format!("{other} {current}"), body);
    assert_eq!(
        status, 202,
        "a new id is a new message, whatever its body: {second}"
    );
    hooks.wait_finished(second["runId"].as_str().unwrap());
    assert_eq!(hooks.runs(json!({})).len(), 2);
    assert_eq!(hooks.fake.request_count(), 2);
}

#[test]
fn a_timestamp_more_than_five_minutes_from_the_daemons_clock_is_401_even_when_signed() {
    let hooks = start();
    let body = br#"{"type":"invoice.paid"}"#;
    let now = unix_now();
    for (at, direction) in [(now - 6 * 60, "behind"), (now + 6 * 60, "ahead of")] {
        let signature = sign_standard(&STANDARD_KEY, "msg_old", at, body);
        let (status, answer) = send(&hooks, "msg_old", at, &signature, body);
        assert_eq!(status, 401, "{answer}");
        assert_eq!(answer["error"]["code"], -32020, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(direction) && message.contains("300 s"),
            "{message}"
        );
    }
    hooks
        .daemon
        .wait_for_log_count("its signed timestamp is outside the tolerance", 2);
    // GitHub's header is not this hook's scheme: the missing header is named.
    let github = sign(SECRET, body);
    let (status, answer, _) = hooks.post("std", body, &[("x-hub-signature-256", &github)]);
    assert_eq!(status, 401, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the webhook-id header is missing"),
        "{answer}"
    );
    assert!(hooks.runs(json!({})).is_empty());
    assert_eq!(hooks.fake.request_count(), 0);
}

#[test]
fn a_standard_hook_whose_secret_is_not_a_whsec_key_is_inactive_and_says_why_in_the_log() {
    let hooks = Hooks::start(standard_hook, &[("STANDARD_SECRET", "whsec_c2hvcnQ=")]);
    let line = hooks.daemon.wait_for_log("webhook inactive");
    assert!(
        line.contains("secret_env=STANDARD_SECRET")
            && line.contains("a Standard Webhooks key is 24 to 64 bytes"),
        "{line}"
    );
    let now = unix_now();
    let (status, answer) = send(&hooks, "msg_1", now, "v1,AAAA", b"{}");
    assert_eq!(status, 503, "{answer}");
}

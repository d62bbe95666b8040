//! Who may start a run: a body signed with the hook's key; a redelivery starts nothing.

use crate::harness::*;
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn a_correctly_signed_delivery_is_answered_202_and_its_turn_runs_with_the_filled_in_prompt() {
    let hooks = Hooks::start(|work| hook(work, ""), &[]);
    hooks.fake.push(openai::text(&["looked at it"]));
    let body = r#"{"ref":"main","conclusion":"failure"}"#;
    let (status, answer) = hooks.deliver("ci", body, "d-1");
    assert_eq!(status, 202, "{answer}");
    assert_eq!(answer["deliveryId"], "d-1");
    let run_id = answer["runId"].as_str().unwrap();
    assert!(answer["sessionId"].is_string(), "{answer}");
    let run = hooks.wait_finished(run_id);
    assert_eq!(run["status"], "done", "{run}");
    assert_eq!(run["source"], "webhook");
    assert_eq!(run["name"], "ci");
    assert_eq!(run["sessionId"], answer["sessionId"]);
    assert!(
        run["turnId"].is_string() && run["finishedAt"].is_string(),
        "{run}"
    );
    let request = &hooks.fake.requests()[0].body;
    let prompt = request["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(
        prompt.contains("CI failed on main (workflow_run)") && prompt.contains("conclusion"),
        "{prompt}"
    );
    let listed = hooks.runs(json!({"source": "webhook", "name": "ci"}));
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0], run);
    // The session is titled `<name> YYYY-MM-DD HH:MM`.
    let sessions = hooks.daemon.client().call("session/list", json!({}));
    let title = sessions["sessions"][0]["title"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        title.starts_with("ci 20") && title.len() == "ci 2026-12-02 11:40".len(),
        "{title}"
    );
}

#[test]
fn a_wrong_or_missing_signature_is_401_stores_nothing_and_logs_no_body() {
    let hooks = Hooks::start(|work| hook(work, ""), &[]);
    let body = br#"{"ref":"secret-body-text"}"#;
    let wrong = sign("another key", body);
    for headers in [vec![("x-hub-signature-256", wrong.as_str())], vec![]] {
        let (status, answer, _) = hooks.post("ci", body, &headers);
        assert_eq!(status, 401, "{answer}");
        assert_eq!(answer["error"]["code"], -32020, "{answer}");
    }
    hooks
        .daemon
        .wait_for_log_count("webhook refused: bad signature", 2);
    let log = hooks.daemon.log_text();
    assert!(
        log.contains("webhook=ci") && log.contains("remote=127.0.0.1"),
        "{log}"
    );
    assert!(
        !log.contains("secret-body-text") && !log.contains(SECRET),
        "{log}"
    );
    assert!(hooks.runs(json!({})).is_empty());
    assert_eq!(hooks.fake.request_count(), 0);
}

#[test]
fn wrong_signatures_are_slowed_like_wrong_tokens_but_unsigned_or_valid_deliveries_never_are() {
    let hooks = Hooks::start(|work| hook(work, ""), &[]);
    hooks.fake.push(openai::text(&["still served"]));
    let body = br#"{"ref":"main"}"#;
    // Unsigned deliveries (anyone can send those) count nothing.
    for _ in 0..30 {
        let (status, answer, _) = hooks.post("ci", body, &[]);
        assert_eq!(status, 401, "{answer}");
    }
    // Wrong signatures are wrong secrets: from the tenth, 429 with Retry-After.
    let wrong = sign("another key", body);
    let mut statuses = Vec::new();
    for _ in 0..12 {
        let (status, answer, retry) = hooks.post("ci", body, &[("x-hub-signature-256", &wrong)]);
        if status == 429 {
            assert_eq!(answer["error"]["code"], -32001, "{answer}");
            assert!(retry.is_some());
        }
        statuses.push(status);
    }
    assert_eq!(&statuses[..9], &[401; 9]);
    assert_eq!(&statuses[9..], &[429; 3]);
    // A correctly signed delivery from the same address is served.
    let (status, answer) = hooks.deliver("ci", r#"{"ref":"main"}"#, "d-ok");
    assert_eq!(status, 202, "{answer}");
}

#[test]
fn a_replayed_delivery_answers_the_first_run_with_200_and_starts_nothing() {
    let hooks = Hooks::start(|work| hook(work, ""), &[]);
    hooks.fake.push(openai::text(&["once"]));
    let body = r#"{"ref":"main"}"#;
    let (status, first) = hooks.deliver("ci", body, "d-7");
    assert_eq!(status, 202);
    let run_id = first["runId"].as_str().unwrap();
    hooks.wait_finished(run_id);
    let (status, again) = hooks.deliver("ci", body, "d-7");
    assert_eq!(status, 200, "{again}");
    assert_eq!(
        again,
        json!({"runId": run_id, "sessionId": first["sessionId"], "deliveryId": "d-7", "status": "done"})
    );
    // Without a delivery header the body's hash is the id: the same body is a repeat.
    let signature = sign(SECRET, b"same");
    let headers = [("x-hub-signature-256", signature.as_str())];
    hooks.fake.push(openai::text(&["hash"]));
    let (status, by_hash, _) = hooks.post("ci", b"same", &headers);
    assert_eq!(status, 202, "{by_hash}");
    assert!(
        by_hash["deliveryId"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    let (status, repeat, _) = hooks.post("ci", b"same", &headers);
    assert_eq!(status, 200, "{repeat}");
    assert_eq!(repeat["runId"], by_hash["runId"]);
    hooks.wait_finished(by_hash["runId"].as_str().unwrap());
    assert_eq!(hooks.runs(json!({})).len(), 2);
    assert_eq!(hooks.fake.request_count(), 2, "the repeats started no turn");
}

//! Issue 37: a first prompt that fails (the provider down) leaves a session that explains
//! itself: the error is an entry of its history, in `session/messages`, in a replay, and in
//! what `zeroclaw sessions show` prints; it is never sent to the model.

use super::zeroclaw;
use crate::common::*;
use predicates::prelude::*;
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn a_failed_first_prompt_is_kept_as_an_error_entry() {
    let env = Env::new("", "");
    // No scripted reply: the fake provider answers 500.
    let out = zeroclaw(&env.dir)
        .args(["prompt", "--cwd"])
        .arg(&env.work)
        .arg("hello there")
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("session "))
        .unwrap()
        .to_owned();

    let mut client = env.daemon.client();
    let messages = client.messages(&id);
    assert_eq!(kinds(&messages), ["user", "error"], "{messages:?}");
    let error = messages[1]["text"].as_str().unwrap();
    assert!(error.contains("HTTP 500"), "{error}");
    let (events, _) = client.load_with_replay(&id);
    let end = events
        .iter()
        .find(|e| e["type"] == "turn_complete")
        .unwrap();
    assert_eq!(end["stopReason"], "error", "{end}");
    assert_eq!(end["error"], json!(error));

    zeroclaw(&env.dir)
        .args(["sessions", "show", &id])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("> hello there\n")
                .and(predicate::str::contains("✗ the turn failed: "))
                .and(predicate::str::contains("HTTP 500")),
        );

    // The next prompt works, and the model is not sent the error.
    env.fake.push(openai::text(&["Hello."]));
    zeroclaw(&env.dir)
        .args(["prompt", "--session", &id, "again"])
        .assert()
        .code(0)
        .stdout("Hello.\n");
    let sent = &env.fake.wait_for_requests(2)[1].body;
    assert!(!sent.to_string().contains("HTTP 500"), "{sent}");
}

//! Issue 37: `zeroclaw status` shows the provider (kind, model, base URL, how its last call
//! went), never a key, and never the credentials a base URL may carry; `--json` the same.

use super::zeroclaw;
use crate::common::*;
use serde_json::Value;
use zeroclaw_testkit::openai;

#[test]
fn status_shows_the_provider_and_its_last_call_without_credentials() {
    let fake = zeroclaw_testkit::FakeProvider::start_blocking().unwrap();
    let with_credentials = fake
        .base_url()
        .replace("http://", "http://someone:hunter2@");
    let shown = fake.base_url();
    let env = Env::at(&with_credentials, "", "");
    // Nothing listens there once it is gone: the call below fails to connect, and its
    // error (which quotes the URL) is the one that could leak the credentials.
    drop(fake);
    let status = |json: bool| {
        let mut cmd = zeroclaw(&env.dir);
        cmd.arg("status");
        if json {
            cmd.arg("--json");
        }
        let out = cmd.assert().success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    let text = status(false);
    assert!(
        text.contains(&format!("provider   openai fake at {shown}; no call yet")),
        "{text}"
    );

    // The call fails: nothing listens at that address any more.
    let out = zeroclaw(&env.dir)
        .args(["prompt", "--cwd"])
        .arg(&env.work)
        .arg("hello")
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(!stderr.contains("hunter2"), "{stderr}");
    let text = status(false);
    assert!(text.contains("last call failed at "), "{text}");
    let json: Value = serde_json::from_str(&status(true)).unwrap();
    let provider = &json["provider"];
    assert_eq!(provider["kind"], "openai");
    assert_eq!(provider["model"], "fake");
    assert_eq!(provider["baseUrl"], shown.as_str());
    assert_eq!(provider["lastCall"]["ok"], false, "{json}");
    assert!(provider["lastCall"]["at"].as_str().unwrap().ends_with('Z'));
    for shown in [text, json.to_string(), env.daemon.log_text()] {
        assert!(!shown.contains("hunter2"), "{shown}");
    }
}

#[test]
fn status_says_when_the_last_call_worked() {
    let env = Env::new("", "");
    env.fake.push(openai::text(&["hi"]));
    zeroclaw(&env.dir)
        .args(["prompt", "--cwd"])
        .arg(&env.work)
        .arg("hello")
        .assert()
        .code(0);
    let out = zeroclaw(&env.dir)
        .args(["status", "--json"])
        .assert()
        .success();
    let json: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(json["provider"]["lastCall"]["ok"], true, "{json}");
    assert_eq!(json["provider"]["baseUrl"], env.fake.base_url().as_str());
    let out = zeroclaw(&env.dir).arg("status").assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("; last call ok at "), "{text}");
}

/// `zeroclaw stop` returns once the daemon has let its data dir go, not when it closed the
/// connection (it closes its store after that): `zeroclaw stop && zeroclaw store check`, as
/// the help suggests, never meets the stopping daemon.
#[test]
fn stop_returns_once_the_data_dir_is_free() {
    for _ in 0..3 {
        let env = Env::new("", "");
        zeroclaw(&env.dir)
            .arg("stop")
            .assert()
            .success()
            .stdout(predicates::str::contains("stopped"));
        zeroclaw(&env.dir)
            .args(["store", "check"])
            .assert()
            .success();
    }
}

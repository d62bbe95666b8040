//! `bash` with `sandbox: "escape"`: always asked, even with `bash = "allow"`, naming the
//! escape and its justification, offering only allow-once and reject; run unconfined only
//! once allowed; refused in unattended runs.

use crate::Sandboxed;
use crate::common::*;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

fn escape_call(s: &Sandboxed, id: &str, target: &std::path::Path) {
    s.env.fake.push(tool_call(
        id,
        "bash",
        json!({
            "command": format!("echo out > {}", target.display()),
            "sandbox": "escape",
            "justification": "the build cache lives outside the workspace",
        }),
        1,
    ));
    s.env.fake.push(openai::text(&["ok"]));
}

#[test]
fn an_escape_is_always_asked_and_runs_outside_only_once_allowed() {
    let mut s = Sandboxed::new("", Value::Null);
    let target = s.outside.join("escaped");
    escape_call(&s, "e1", &target);
    let session = s.session.clone();
    let turn = s.client.prompt(&session, "go", decide_all("reject"));
    let asked = turn.one("approval_request");
    assert_eq!(
        asked["escape"],
        json!({"justification": "the build cache lives outside the workspace"})
    );
    assert_eq!(asked["options"], json!(["allow_once", "reject"]));
    assert!(!target.exists(), "rejected, it did not run");

    escape_call(&s, "e2", &target);
    let turn = s.client.prompt(&session, "go", decide_all("allow_once"));
    assert_eq!(turn.one("approval_request")["name"], "bash");
    assert_eq!(turn.one("tool_result")["isError"], false);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "out\n");

    // "always" is not offered, and sent anyway it is not remembered: asked again.
    escape_call(&s, "e3", &target);
    let turn = s.client.prompt(&session, "go", decide_all("allow_always"));
    assert_eq!(turn.of_type("approval_request").len(), 1);
    escape_call(&s, "e4", &target);
    let turn = s.client.prompt(&session, "go", decide_all("allow_once"));
    assert_eq!(turn.of_type("approval_request").len(), 1);
    // And an ordinary call is still not asked about (`bash = "allow"`).
    s.bash("true").allowed();
}

#[test]
fn an_escape_without_a_justification_is_an_invalid_call() {
    let mut s = Sandboxed::new("", Value::Null);
    let out = s.call("bash", json!({"command": "true", "sandbox": "escape"}));
    assert!(out.is_error);
    assert!(out.text.contains("needs a `justification`"), "{}", out.text);
}

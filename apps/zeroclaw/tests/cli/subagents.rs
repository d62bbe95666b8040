//! A `task` call seen from `zeroclaw prompt` (the client library's turn stream): the
//! subagent's streamed text is not printed as the answer; the parent's is.

use super::zeroclaw;
use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn a_subagents_text_is_not_printed_as_the_answer() {
    let env = Env::new("", "");
    env.fake.push(tool_call(
        "call_task",
        "task",
        json!({"description": "Look", "prompt": "look around"}),
        1,
    ));
    env.fake.push(openai::text(&["child-only-words"]));
    env.fake.push(openai::text(&["Parent answer."]));
    let out = zeroclaw(&env.dir)
        .args(["prompt", "--cwd"])
        .arg(&env.work)
        .arg("delegate it")
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.ends_with("Parent answer.\n"), "{stdout}");
    assert!(!stdout.contains("child-only-words"), "{stdout}");
    assert_eq!(env.fake.wait_for_requests(3).len(), 3);
}

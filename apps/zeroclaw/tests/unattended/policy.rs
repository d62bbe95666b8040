//! Nobody can be asked: the hook's `approve` table decides, and `ask_user` is told no one
//! can answer.

use crate::common::*;
use crate::harness::*;
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn the_turn_runs_with_the_hooks_policy_and_ask_user_is_told_no_one_can_answer() {
    let hooks = Hooks::start(
        |work| {
            hook(
                work,
                &format!(
                    "approve = {{ bash = \"allow\", write_file = \"deny\" }}\n{SANDBOX_NOT_REQUIRED_WHERE_UNAVAILABLE}"
                ),
            )
        },
        &[],
    );
    let made = hooks.work.join("made-by-bash");
    hooks.fake.push_all([
        bash_call("c1", &touch_command(&made), 2),
        tool_call(
            "c2",
            "write_file",
            json!({"path": "x.txt", "content": "no"}),
            2,
        ),
        // Not in the table: [approvals] says ask, which an unattended run turns into deny.
        tool_call(
            "c3",
            "edit_file",
            json!({"path": "x.txt", "old_text": "a", "new_text": "b"}),
            1,
        ),
        ask("c4", "Which branch?", None),
        openai::text(&["done"]),
    ]);
    let (status, answer) = hooks.deliver("ci", r#"{"ref":"main"}"#, "p-1");
    assert_eq!(status, 202);
    let run = hooks.wait_finished(answer["runId"].as_str().unwrap());
    assert_eq!(run["status"], "done", "{run}");
    assert!(made.exists(), "the allowed bash call ran");
    assert!(
        !hooks.work.join("x.txt").exists(),
        "the denied write did not"
    );
    let requests = hooks.fake.requests();
    let denied = "denied by the unattended policy of webhook ci: no one can approve this run";
    assert_eq!(tool_content(&requests[2].body, "c2"), denied);
    assert_eq!(tool_content(&requests[3].body, "c3"), denied);
    let asked = tool_content(&requests[4].body, "c4");
    assert!(asked.starts_with("no one can answer now"), "{asked}");
}

#[test]
fn under_ask_an_attached_client_may_approve_the_runs_call() {
    let hooks = Hooks::start(
        |work| {
            hook(
                work,
                &format!(
                    "approve = {{ bash = \"ask\" }}\n{SANDBOX_NOT_REQUIRED_WHERE_UNAVAILABLE}"
                ),
            )
        },
        &[],
    );
    let made = hooks.work.join("approved");
    hooks.fake.push_all([
        bash_call("c1", &touch_command(&made), 1),
        openai::text(&["approved and done"]),
    ]);
    let (status, answer) = hooks.deliver("ci", r#"{"ref":"main"}"#, "a-1");
    assert_eq!(status, 202);
    let session = answer["sessionId"].as_str().unwrap();
    let mut client = hooks.daemon.client();
    client.call("session/load", json!({"sessionId": session}));
    // Pending when the client joined, or sent once it was attached: either way it comes.
    let ask = client.wait_event("approval_request");
    assert_eq!(ask["name"], "bash");
    client.call(
        "session/approve",
        json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
    );
    let run = hooks.wait_finished(answer["runId"].as_str().unwrap());
    assert_eq!(run["status"], "done", "{run}");
    assert!(made.exists(), "the approved call ran");
}

//! Mode `accept-edits`: a file edit inside the working directory runs without an approval
//! request, while `bash` is still asked about.

use crate::common::*;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

#[test]
fn accept_edits_runs_an_edit_without_asking_while_bash_still_asks() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let set = client.call(
        "session/set_mode",
        json!({"sessionId": session, "mode": "accept-edits"}),
    );
    assert_eq!(set["mode"], "accept-edits");

    env.fake.push(tool_call(
        "call_w",
        "write_file",
        json!({"path": "notes.txt", "content": "first"}),
        2,
    ));
    env.fake.push(tool_call(
        "call_e",
        "edit_file",
        json!({"path": "notes.txt", "old_text": "first", "new_text": "second"}),
        2,
    ));
    env.fake.push(bash_call(
        "call_b",
        &touch_command(&env.work.join("ran")),
        1,
    ));
    env.fake.push(openai::text(&["Edited."]));
    let turn = client.prompt(&session, "edit and run", |frame: &Value| {
        assert_eq!(frame["name"], "bash", "only bash is asked about: {frame}");
        Act::Decide("reject")
    });
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert_eq!(turn.of_type("approval_request").len(), 1);
    assert_eq!(
        std::fs::read_to_string(env.work.join("notes.txt")).unwrap(),
        "second"
    );
    assert!(!env.work.join("ran").exists(), "the rejected command ran");
}

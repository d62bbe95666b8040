//! Issue 37: on a terminal, `zeroclaw prompt` takes an approval's answer as one key (y, n,
//! a = always for this session, ? = the whole call), as coding agents ask; nothing waits
//! for Enter. Driven in a real pseudo-terminal.

use super::bash_call;
use crate::common::*;
use expectrl::process::unix::WaitStatus;
use expectrl::{Eof, Expect, Session};
use std::time::Duration;
use zeroclaw_testkit::openai;

#[test]
fn an_approval_is_one_key_and_question_mark_shows_the_call() {
    let env = Env::new("", "");
    env.fake.push(bash_call("echo from-the-first-call"));
    env.fake.push(bash_call("echo from-the-second-call"));
    env.fake.push(openai::text(&["Both ran."]));
    let mut command = env.dir.command(&["prompt", "--cwd"]);
    command.arg(&env.work).arg("run them");
    command.env_remove("RUST_LOG");
    let mut term = Session::spawn(command).unwrap();
    term.set_expect_timeout(Some(Duration::from_secs(60)));
    let question = "[?] the whole call: ";

    term.expect(question).unwrap();
    // `?` shows the whole call as JSON, then asks again.
    term.send("?").unwrap();
    term.expect("\"command\": \"echo from-the-first-call\"")
        .unwrap();
    term.expect(question).unwrap();
    // One key, no Enter.
    term.send("y").unwrap();
    term.expect("yes").unwrap();
    // The call ran: its result follows.
    term.expect("[exit code 0]").unwrap();

    term.expect(question).unwrap();
    term.send("a").unwrap();
    term.expect("always").unwrap();
    term.expect("[exit code 0]").unwrap();
    term.expect("Both ran.").unwrap();
    term.expect(Eof).unwrap();
    assert!(matches!(
        term.get_process().wait().unwrap(),
        WaitStatus::Exited(_, 0)
    ));
}

#[test]
fn a_question_another_client_answers_stops_waiting_at_once() {
    let env = Env::new("", "");
    env.fake.push(bash_call("echo answered-elsewhere"));
    env.fake.push(openai::text(&["It ran."]));
    let mut command = env.dir.command(&["prompt", "--cwd"]);
    command.arg(&env.work).arg("run it");
    command.env_remove("RUST_LOG");
    let mut term = Session::spawn(command).unwrap();
    term.set_expect_timeout(Some(Duration::from_secs(60)));
    term.expect("[?] the whole call: ").unwrap();

    // Another client attaches to the session and approves.
    let mut other = env.daemon.client();
    let list = other.call("session/list", serde_json::json!({}));
    let session = list["sessions"][0]["sessionId"].clone();
    other.call("session/load", serde_json::json!({"sessionId": session}));
    let ask = other.wait_event("approval_request");
    other.call(
        "session/approve",
        serde_json::json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
    );
    term.expect("answered by another client: allow_once")
        .unwrap();
    term.expect("[exit code 0]").unwrap();
    term.expect("It ran.").unwrap();
    term.expect(Eof).unwrap();
    assert!(matches!(
        term.get_process().wait().unwrap(),
        WaitStatus::Exited(_, 0)
    ));
}

//! One daemon per data directory (issue 28): a second daemon on the first one's data dir,
//! started through another socket (a mistyped `ZEROCLAW_SOCKET`), is refused before it opens
//! the store. Before, it opened it and marked the first daemon's running run `failed`.

use crate::common::kinds;
use crate::harness::*;
use serde_json::json;
use zeroclaw_testkit::{Gate, openai};

/// An endpoint of the test's own that is not the first daemon's.
fn another_endpoint(hooks: &Hooks) -> String {
    if cfg!(windows) {
        format!(r"\\.\pipe\zc-test-{}-typo", std::process::id())
    } else {
        hooks.dir.path().join("typo.sock").display().to_string()
    }
}

#[test]
fn a_second_daemon_through_another_socket_is_refused_and_leaves_the_running_run_and_its_session_as_they_were()
 {
    let hooks = Hooks::start(
        |work| {
            format!(
                "[[schedules]]\nname = \"nightly\"\ncron = \"0 2 * * *\"\ncwd = \"{work}\"\nprompt = \"tidy up\"\n"
            )
        },
        &[],
    );
    // The answer starts when `started` opens, and stops half-way until `held` does.
    let (started, held) = (Gate::new(), Gate::new());
    hooks.fake.push(
        openai::Builder::new()
            .wait_for(&started)
            .text("tid")
            .wait_for(&held)
            .text("ied")
            .build(),
    );
    let mut client = hooks.daemon.client();
    let run = client.call("schedule/run", json!({"name": "nightly"}));
    let id = run["runId"].as_str().unwrap().to_owned();
    let session = run["sessionId"].as_str().unwrap().to_owned();
    hooks.fake.wait_for_requests(1);
    let loaded = client.call("session/load", json!({"sessionId": session}));
    assert!(loaded["turnId"].is_string(), "{loaded}");
    started.open();
    // The first words reach the attached client after the turn and its prompt are stored.
    let chunk = client.wait_event("agent_message_chunk");
    assert_eq!(chunk["text"], "tid");
    let run = hooks.run(&id);
    assert_eq!(run["status"], "running", "{run}");
    let sessions = client.call("session/list", json!({}));
    let messages = client.messages(&session);
    assert_eq!(kinds(&messages), vec!["user"]);

    let other = another_endpoint(&hooks);
    let mut second = hooks
        .dir
        .spawn_with(&[], &[("ZEROCLAW_SOCKET", &other), ("HOOK_SECRET", SECRET)]);
    assert!(!second.wait_exit().success());
    let said = second.log_text();
    for named in [
        hooks.dir.data_dir().display().to_string(),
        format!("pid {}", hooks.daemon.pid()),
        format!("serving {}", hooks.daemon.endpoint.display()),
    ] {
        assert!(said.contains(&named), "{named:?} not in: {said}");
    }
    assert!(second.endpoint_gone(), "the refused daemon left {other}");

    assert_eq!(hooks.run(&id), run);
    assert_eq!(client.call("session/list", json!({})), sessions);
    assert_eq!(client.messages(&session), messages);
    held.open();
    assert_eq!(client.wait_event("turn_complete")["stopReason"], "end_turn");
    let done = hooks.wait_finished(&id);
    assert_eq!(done["status"], "done", "{done}");
    let messages = client.messages(&session);
    assert_eq!(kinds(&messages), vec!["user", "assistant"]);
    assert_eq!(messages[1]["text"], "tidied");
}

//! Faults the daemon must survive: a provider that stalls, resets or sends garbage, a
//! database that cannot be written, a SIGKILL mid-turn, clients that vanish while the daemon
//! waits on them, and running out of file descriptors. In every case the turn in question
//! ends (or fails) with a clear answer, nothing already stored is lost, and the daemon keeps
//! serving.
//!
//! Steps are ordered by events: the daemon's answers and log lines, and the requests the
//! fake provider records. The only timeouts that elapse are the configured ones a test is
//! about (idle 1 s, approval 1 s).
#![allow(clippy::unwrap_used, clippy::expect_used)]
// What only the Unix-only tests use.
#![cfg_attr(windows, allow(unused_imports, dead_code))]

mod common;

use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use zeroclaw_testkit::{FakeProvider, Gate, Reply, Step, openai};

const PROVIDER_ERROR: i64 = -32004;
const INTERNAL_ERROR: i64 = -32603;
const INTERRUPTED_LOG: &str = "marked turns left running by a previous daemon as interrupted";

/// The daemon still answers `status` on a fresh connection, with no turn left running.
fn assert_serving(daemon: &Daemon) {
    let mut conn = daemon.initialized();
    let status = conn.call("status", json!({}));
    assert_eq!(status["pid"], json!(daemon.pid()), "{status}");
    assert_eq!(status["sessions"]["running"], json!(0), "{status}");
}

/// Asserts a failed prompt: error `code`, the turn's id in `data`, and a `turn_complete`
/// with `stopReason: "error"` among the events before the answer when the turn was stored.
fn assert_failed_turn(turn: &TurnLog, code: i64) -> Value {
    let answer = &turn.answer;
    assert_eq!(error_code(answer), code, "{answer}");
    let error = turn.error().clone();
    assert!(error["data"]["turnId"].is_string(), "{answer}");
    if error["data"]["stored"] == json!(true) {
        let complete = turn.of_type("turn_complete");
        assert_eq!(complete.len(), 1, "{:#?}", turn.events);
        assert_eq!(complete[0]["stopReason"], "error", "{:#?}", turn.events);
    }
    error
}

/// After a failed turn: the session takes the next prompt (its answer is `text`), a fresh
/// connection is served, and after a SIGKILL the restart reports no turn left `running`:
/// every turn that ended was marked as ended in the database. (Store::open logs before
/// "listening".)
fn assert_recovered(mut env: Env, mut client: Client, session: &str, text: &str) {
    let turn = client.prompt(session, "again", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert_eq!(turn.result()["text"], text);
    assert_serving(&env.daemon);
    drop(client);
    env.kill_and_restart();
    assert!(
        !env.daemon.log_text().contains(INTERRUPTED_LOG),
        "a finished turn was still marked running:\n{}",
        env.daemon.log_text()
    );
}

// ---------------------------------------------------------------------------------------
// The provider misbehaves
// ---------------------------------------------------------------------------------------

#[test]
fn a_stalled_provider_fails_the_turn_as_a_timeout_and_the_daemon_keeps_serving() {
    let env = Env::new("idle_timeout_secs = 1", "");
    env.fake
        .push(openai::Builder::new().text("partial ").stall().build());
    env.fake.push(openai::text(&["recovered"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);

    let turn = client.prompt(&session, "stall please", no_questions);
    let answer = &turn.answer;
    let error = assert_failed_turn(&turn, PROVIDER_ERROR);
    assert_eq!(error["data"]["kind"], "timeout", "{answer}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("idle_timeout_secs"),
        "{answer}"
    );
    assert_eq!(error["data"]["stored"], json!(true), "{answer}");

    // Status works on the same connection, and nothing is running any more.
    let status = client.call("status", json!({}));
    assert_eq!(status["sessions"]["running"], json!(0), "{status}");
    // What arrived before the stall is kept, and the failure after it (issue 37).
    let stored = client.messages(&session);
    assert_eq!(
        kinds(&stored),
        ["user", "assistant", "error"],
        "{stored:#?}"
    );
    assert_eq!(stored[1]["text"], "partial ");

    // The same session takes the next prompt.
    assert_recovered(env, client, &session, "recovered");
}

#[test]
fn a_provider_that_resets_mid_stream_fails_the_turn_as_a_stream_error_and_the_daemon_keeps_serving()
{
    let env = Env::new("idle_timeout_secs = 2", "");
    let gate = Gate::new();
    env.fake.push(
        openai::Builder::new()
            .text("half an ans")
            .wait_for(&gate)
            .reset()
            .build(),
    );
    env.fake.push(openai::text(&["whole answer"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);

    let id = client.start_prompt(&session, "reset please");
    // The reset comes mid-stream: after the daemon relayed the first text.
    let chunk = client.wait_event("agent_message_chunk");
    assert_eq!(chunk["text"], "half an ans");
    gate.open();
    let turn = client.drive(&id, no_questions);
    let error = assert_failed_turn(&turn, PROVIDER_ERROR);
    assert_eq!(error["data"]["kind"], "stream", "{}", turn.answer);

    let stored = client.messages(&session);
    assert_eq!(
        kinds(&stored),
        ["user", "assistant", "error"],
        "{stored:#?}"
    );
    assert_recovered(env, client, &session, "whole answer");
}

#[test]
fn a_provider_that_answers_garbage_ends_the_turn_cleanly_and_the_daemon_keeps_serving() {
    let env = Env::new("idle_timeout_secs = 2", "");
    let garbage: Vec<(&str, Reply)> = vec![
        (
            "malformed SSE lines only",
            Reply::sse(vec![
                Step::Send(b"this is not server-sent events\n".to_vec()),
                Step::Send(b"data: {not json\n\n".to_vec()),
                Step::Send(b"data: [1, 2, 3]\n\n".to_vec()),
                Step::Send(b"data: {\"choices\": \"nope\"}\n\n".to_vec()),
                Step::Send(b"event: ping\ndata: \"a string\"\n\n".to_vec()),
                Step::Send(b"data: \xff\xfe\xfd invalid utf-8\n\n".to_vec()),
                Step::Send(b"data: {\"choices\": [{\"delta\": 42}]}\n\n".to_vec()),
            ]),
        ),
        ("an HTML page", {
            let page = b"<html><body>502 Bad Gateway</body></html>\n".to_vec();
            Reply {
                status: 200,
                headers: vec![
                    ("content-type".into(), "text/html".into()),
                    ("content-length".into(), page.len().to_string()),
                ],
                steps: vec![Step::Send(page)],
            }
        }),
        (
            "binary bytes without a newline",
            Reply::sse(vec![Step::Send(
                (0..64 * 1024)
                    .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
                    .filter(|b| *b != b'\n')
                    .collect(),
            )]),
        ),
    ];
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    for (what, reply) in garbage {
        env.fake.push(reply);
        let turn = client.prompt(&session, what, no_questions);
        let answer = &turn.answer;
        match answer.get("error") {
            // A clear error is acceptable...
            Some(_) => {
                let error = assert_failed_turn(&turn, PROVIDER_ERROR);
                assert!(!error["message"].as_str().unwrap().is_empty(), "{answer}");
            }
            // ...and so is an empty answer.
            None => {
                assert_eq!(
                    answer["result"]["stopReason"], "end_turn",
                    "{what}: {answer}"
                );
                assert_eq!(answer["result"]["text"], "", "{what}: {answer}");
            }
        }
        assert_eq!(
            client.call("status", json!({}))["sessions"]["running"],
            json!(0)
        );
    }
    env.fake.push(openai::text(&["sane again"]));
    assert_recovered(env, client, &session, "sane again");
}

#[test]
fn a_provider_event_without_end_is_cut_off_at_its_size_cap_as_a_stream_error() {
    let env = Env::new("idle_timeout_secs = 5", "");
    // 17 MiB of one `data:` line that never ends: past the 16 MiB cap on one event.
    let mut endless = b"data: ".to_vec();
    endless.resize(17 * 1024 * 1024, b'a');
    env.fake.push(
        openai::Builder::new()
            .text("before ")
            .raw(endless)
            .stall()
            .build(),
    );
    env.fake.push(openai::text(&["small again"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "flood", no_questions);
    let answer = &turn.answer;
    let error = assert_failed_turn(&turn, PROVIDER_ERROR);
    assert_eq!(error["data"]["kind"], "stream", "{answer}");
    assert!(
        error["message"].as_str().unwrap().contains("16 MiB"),
        "{answer}"
    );
    assert_recovered(env, client, &session, "small again");
}

// ---------------------------------------------------------------------------------------
// The database cannot be written
// ---------------------------------------------------------------------------------------

/// Bytes in the big answer whose storing must fail: several times the file-size limit.
#[cfg(unix)]
const BIG_ANSWER_CHUNKS: usize = 3 * 1024;
#[cfg(unix)]
const FSIZE_LIMIT: u64 = 1024 * 1024;

#[cfg(unix)]
fn big_answer() -> Reply {
    openai::many_chunks(BIG_ANSWER_CHUNKS, &"x".repeat(1024))
}

/// Turn 1 stores fine; turn 2's answer cannot be stored (the write fails); turn 3 is small
/// again. Returns the session id.
#[cfg(unix)]
fn store_failure_scenario(env: &mut Env) -> String {
    env.fake.push(openai::text(&["first answer"]));
    env.fake.push(big_answer());
    env.fake.push(openai::text(&["third answer"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    assert_eq!(
        client.prompt(&session, "first", no_questions).result()["text"],
        "first answer"
    );

    let turn = client.prompt(&session, "second", no_questions);
    let answer = &turn.answer;
    let error = assert_failed_turn(&turn, INTERNAL_ERROR);
    eprintln!("the failed turn's answer: {answer}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("storage") && message.contains("disk"),
        "not a clear storage error: {answer}"
    );
    env.daemon.wait_for_log("storage failed during a turn");
    assert!(env.daemon.is_running(), "{}", env.daemon.log_text());

    // The daemon keeps serving, reads still work, and a small turn is stored again.
    assert_eq!(
        client.call("status", json!({}))["sessions"]["running"],
        json!(0)
    );
    let stored = client.messages(&session);
    // The second turn's prompt, and its failure as an entry (issue 37).
    assert_eq!(
        kinds(&stored),
        ["user", "assistant", "user", "error"],
        "{stored:#?}"
    );
    assert_eq!(
        client.prompt(&session, "third", no_questions).result()["text"],
        "third answer"
    );
    assert_serving(&env.daemon);
    assert!(
        !env.daemon.log_text().contains("panicked"),
        "{}",
        env.daemon.log_text()
    );
    session
}

/// After a restart without the fault: everything stored before (and after) is there.
#[cfg(unix)]
fn assert_history_survived(env: &mut Env, session: &str) {
    let mut client = env.daemon.client();
    let stored = client.messages(session);
    assert_eq!(
        kinds(&stored),
        ["user", "assistant", "user", "error", "user", "assistant"],
        "{stored:#?}"
    );
    let texts: Vec<&str> = stored
        .iter()
        .filter(|m| m["kind"] != "error")
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        ["first", "first answer", "second", "third", "third answer"]
    );
    assert!(
        stored[3]["text"].as_str().unwrap().contains("storage"),
        "{stored:#?}"
    );
}

#[test]
#[cfg(unix)]
fn a_database_write_past_the_file_size_limit_fails_the_turn_and_keeps_what_was_stored() {
    let limits = Limits {
        fsize: Some(FSIZE_LIMIT),
        ignore_sigxfsz: true,
        ..Limits::default()
    };
    let mut env = Env::limited("idle_timeout_secs = 2", "", limits);
    let session = store_failure_scenario(&mut env);
    // An orderly stop still works, then a daemon without the limit finds everything.
    env.daemon.signal(rustix::process::Signal::TERM);
    assert!(
        env.daemon.wait_exit().success(),
        "{}",
        env.daemon.log_text()
    );
    env.daemon = env.dir.start(&[]);
    assert!(!env.daemon.log_text().contains(INTERRUPTED_LOG));
    assert_history_survived(&mut env, &session);
}

#[test]
#[cfg(unix)]
fn a_file_size_limit_does_not_kill_the_daemon_even_when_sigxfsz_is_not_ignored_by_its_parent() {
    use std::os::unix::process::ExitStatusExt;
    let limits = Limits {
        fsize: Some(FSIZE_LIMIT),
        ignore_sigxfsz: false,
        ..Limits::default()
    };
    let mut env = Env::limited("idle_timeout_secs = 2", "", limits);
    env.fake.push(big_answer());
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let id = client.start_prompt(&session, "too big to store");
    // Read on to the answer, or to the end of the stream if the daemon died.
    let answered = std::iter::from_fn(|| client.conn.recv_line()).any(|line| {
        let frame: Value = serde_json::from_str(&line).unwrap();
        is_response(&frame) && frame["id"] == id
    });
    if !answered {
        let status = env.daemon.wait_exit();
        panic!(
            "the daemon died instead of answering: {status:?} (signal {:?}; SIGXFSZ is {})",
            status.signal(),
            rustix::process::Signal::XFSZ.as_raw()
        );
    }
    assert_serving(&env.daemon);
}

/// A small tmpfs mounted for the test, unmounted (lazily) when dropped.
#[cfg(unix)]
struct Tmpfs(PathBuf);

#[cfg(unix)]
impl Tmpfs {
    /// `None` (with the reason printed) when mounting is not possible here.
    fn mount(at: &Path, size: &str) -> Option<Self> {
        if !is_root() {
            eprintln!("skipped: mounting a tmpfs needs root");
            return None;
        }
        std::fs::create_dir_all(at).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700")])
            .arg("tmpfs")
            .arg(at)
            .output();
        match out {
            Ok(out) if out.status.success() => Some(Self(at.to_path_buf())),
            Ok(out) => {
                eprintln!(
                    "skipped: mount -t tmpfs is not permitted here: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("skipped: cannot run mount: {e}");
                None
            }
        }
    }
}

#[cfg(unix)]
impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fills the file system holding `dir` until a write fails with ENOSPC.
#[cfg(unix)]
fn fill(dir: &Path) -> PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).unwrap();
    let block = vec![0u8; 64 * 1024];
    loop {
        if let Err(e) = file.write_all(&block) {
            assert_eq!(e.raw_os_error(), Some(28), "expected ENOSPC: {e}");
            break;
        }
    }
    // Also take the last partial block.
    while file.write(&[0u8; 512]).is_ok_and(|n| n > 0) {}
    path
}

#[test]
#[cfg(unix)]
fn a_full_disk_fails_the_turn_clearly_and_the_daemon_recovers_once_space_is_freed() {
    let dir = TestDir::new();
    let data = dir.path().join("data");
    let Some(_mount) = Tmpfs::mount(&data, "16m") else {
        return;
    };
    let fake = FakeProvider::start_blocking().unwrap();
    dir.write_config(&provider_config(
        &fake.base_url(),
        "idle_timeout_secs = 2",
        "",
    ));
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let socket = data.join("daemon.sock");
    let data_env = [
        ("ZEROCLAW_DATA_DIR", data.to_str().unwrap()),
        ("ZEROCLAW_SOCKET", socket.to_str().unwrap()),
    ];
    let mut daemon = dir.start_with(&[], &data_env);

    fake.push(openai::text(&["first answer"]));
    fake.push(big_answer());
    fake.push(openai::text(&["third answer"]));
    let mut client = daemon.client();
    let session = client.new_session(&work);
    assert_eq!(
        client.prompt(&session, "first", no_questions).result()["text"],
        "first answer"
    );

    let filler = fill(&data);
    let turn = client.prompt(&session, "second", no_questions);
    let answer = &turn.answer;
    let error = assert_failed_turn(&turn, INTERNAL_ERROR);
    eprintln!("the failed turn's answer: {answer}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("storage") && message.contains("disk"),
        "not a clear storage error: {answer}"
    );
    assert!(daemon.is_running());
    assert_eq!(
        client.call("status", json!({}))["sessions"]["running"],
        json!(0)
    );

    // Space comes back: the next turn is stored again.
    std::fs::remove_file(filler).unwrap();
    assert_eq!(
        client.prompt(&session, "third", no_questions).result()["text"],
        "third answer"
    );
    drop(client);
    daemon.signal(rustix::process::Signal::TERM);
    assert!(daemon.wait_exit().success(), "{}", daemon.log_text());

    let daemon = dir.start_with(&[], &data_env);
    let mut client = daemon.client();
    let stored = client.messages(&session);
    let texts: Vec<&str> = stored.iter().map(|m| m["text"].as_str().unwrap()).collect();
    // Whether the failed turn's prompt was stored depends on where the disk ran out; the
    // first and third turns must be there in full.
    let expected: &[&[&str]] = &[
        &["first", "first answer", "second", "third", "third answer"],
        &["first", "first answer", "third", "third answer"],
    ];
    assert!(expected.contains(&texts.as_slice()), "{stored:#?}");
    assert_eq!(error["data"]["stored"], json!(texts.contains(&"second")));
}

// ---------------------------------------------------------------------------------------
// The daemon is killed
// ---------------------------------------------------------------------------------------

#[test]
fn sigkill_mid_turn_keeps_the_completed_steps_and_the_session_takes_new_prompts() {
    // A long idle timeout: the stalled second step is ended by the kill, not the timeout.
    let mut env = Env::new("idle_timeout_secs = 60", BASH_ALLOWED);
    let marker = env.work.join("step-one-ran");
    env.fake.push(bash_call(
        "call_one",
        &format!("echo step-one && {}", touch_command(&marker)),
        2,
    ));
    env.fake.push(
        openai::Builder::new()
            .text("thinking about ")
            .stall()
            .build(),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let id = client.start_prompt(&session, "two steps");
    // The second model call has started, so step one (call and result) is stored.
    env.fake.wait_for_requests(2);
    client.wait_event("agent_message_chunk");
    assert!(marker.exists());

    env.kill_and_restart();
    // The prompt's connection died with the daemon, unanswered.
    let rest = std::iter::from_fn(|| client.conn.recv_line()).collect::<Vec<_>>();
    assert!(
        rest.iter().all(|l| !l.contains(&format!("{id}"))),
        "{rest:?}"
    );
    env.daemon.wait_for_log(INTERRUPTED_LOG);

    let mut client = env.daemon.client();
    let stored = client.messages(&session);
    assert_eq!(
        kinds(&stored),
        ["user", "tool_call", "tool_result"],
        "{stored:#?}"
    );
    assert!(output(&stored[2]).contains("step-one"), "{stored:#?}");
    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["running"], json!(false), "{list}");

    // Not left busy: a new prompt on the session runs (no -32002), with the history.
    client.call("session/load", json!({"sessionId": session}));
    env.fake.push(openai::text(&["after the restart"]));
    let turn = client.prompt(&session, "still there?", no_questions);
    let result = turn.result();
    assert_eq!(result["text"], "after the restart");
    let requests = env.fake.wait_for_requests(3);
    assert!(
        tool_content(&requests[2].body, "call_one").contains("step-one"),
        "{}",
        requests[2].body
    );
}

// ---------------------------------------------------------------------------------------
// Clients vanish while the daemon waits on them
// ---------------------------------------------------------------------------------------

#[test]
fn a_client_killed_while_an_approval_waits_lets_it_time_out_and_the_turn_completes() {
    let env = Env::new(
        "idle_timeout_secs = 30",
        "[approvals]\nbash = \"ask\"\ntimeout_secs = 1\n[agent]\nask_user_timeout_secs = 600\n",
    );
    let marker = env.work.join("must-not-exist");
    env.fake.push(bash_call(
        "call_ask",
        &format!("touch {}", marker.display()),
        2,
    ));
    env.fake.push(openai::text(&["done without it"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    client.start_prompt(&session, "run it");
    client.wait_event("approval_request");
    // The client dies without answering.
    drop(client);

    // The approval times out (timeout_secs = 1), the call is refused, the turn goes on.
    let requests = env.fake.wait_for_requests(2);
    let refusal = tool_content(&requests[1].body, "call_ask");
    assert!(refusal.contains("nobody answered"), "{refusal}");
    env.daemon.wait_for_log("turn ended");
    assert!(!marker.exists(), "the refused command ran");

    assert_serving(&env.daemon);
    let mut client = env.daemon.client();
    let stored = client.messages(&session);
    assert_eq!(
        kinds(&stored),
        ["user", "tool_call", "tool_result", "assistant"],
        "{stored:#?}"
    );
    assert_eq!(stored[2]["isError"], json!(true));
    assert_eq!(stored[3]["text"], "done without it");
}

#[test]
fn a_client_killed_while_its_elicitation_waits_fails_the_question_at_once_and_the_turn_completes() {
    // A timeout far beyond the test's hang guard: only the disconnect can end the wait.
    let env = Env::new(
        "idle_timeout_secs = 30",
        "[agent]\nask_user_timeout_secs = 600\n",
    );
    env.fake.push(ask("call_q", "which colour?", None));
    env.fake.push(openai::text(&["I will assume blue"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    client.start_prompt(&session, "ask me");
    let request = client.wait_for(|f| f["method"] == "elicitation/create" && f.get("id").is_some());
    assert_eq!(request["params"]["message"], "which colour?");
    drop(client);

    let requests = env.fake.wait_for_requests(2);
    let failure = tool_content(&requests[1].body, "call_q");
    assert!(failure.contains("disconnected"), "{failure}");
    env.daemon.wait_for_log("turn ended");

    assert_serving(&env.daemon);
    let mut client = env.daemon.client();
    let stored = client.messages(&session);
    assert_eq!(
        kinds(&stored),
        ["user", "tool_call", "tool_result", "assistant"],
        "{stored:#?}"
    );
    assert_eq!(stored[2]["isError"], json!(true));
}

// ---------------------------------------------------------------------------------------
// File descriptors run out
// ---------------------------------------------------------------------------------------

/// The daemon raises its soft open-file limit to the hard one and caps `max_connections`
/// at that limit minus a reserve, so a client past the cap is told `-32001` at once instead
/// of waiting in the listen backlog of a daemon out of descriptors; served clients keep
/// working, storage included, and a freed slot is taken again.
#[test]
#[cfg(unix)]
fn clients_past_the_open_file_limit_get_a_limit_error_instead_of_hanging() {
    let dir = TestDir::new();
    let limits = Limits {
        nofile: Some(128),
        nofile_soft: Some(64),
        ..Limits::default()
    };
    let daemon = dir.start_limited(&[], &[], limits);
    daemon.wait_for_log("raised the open-file limit to its hard limit");
    let line = daemon.wait_for_log("connections capped by the open-file limit");
    assert!(
        line.contains("max_connections=64") && line.contains("open_files=128"),
        "{line}"
    );

    let mut clients: Vec<Conn> = (0..64).map(|_| daemon.initialized()).collect();
    let mut over = daemon.connect();
    let answer = over.recv();
    assert_eq!(error_code(&answer), -32001, "{answer}");
    assert_eq!(answer["error"]["data"]["limit"], json!(64), "{answer}");
    assert!(over.at_eof());

    let work = dir.path().to_path_buf();
    clients[0].call("session/new", json!({"cwd": work}));
    assert_eq!(clients[1].call("status", json!({}))["clients"], json!(64));

    // Counted first: an earlier close (the refused client's) must not pass for this one's.
    let closed = daemon.log_count("connection closed");
    drop(clients.pop());
    daemon.wait_for_log_count("connection closed", closed + 1);
    let mut fresh = daemon.initialized();
    assert_eq!(fresh.call("status", json!({}))["clients"], json!(64));
}

/// A bash command still running when the daemon is SIGKILLed is killed, with its process
/// group, by the next daemon as it starts: the group was recorded in the data dir.
#[test]
#[cfg(unix)]
fn bash_commands_left_running_by_a_sigkilled_daemon_are_killed_by_the_next_one() {
    let mut env = Env::new("idle_timeout_secs = 60", BASH_ALLOWED);
    let (_client, _, pid) = env.start_long_bash();
    assert!(!process_gone(pid));

    env.kill_and_restart();
    let line = env
        .daemon
        .wait_for_log("killed bash commands left running by a previous daemon");
    assert!(line.contains("groups=1"), "{line}");
    poll_until("the orphaned shell is killed", || process_gone(pid));
    let records = env.dir.config_dir().join("data").join("tool-processes");
    assert_eq!(std::fs::read_dir(&records).unwrap().count(), 0);
}

//! The `zeroclaw` CLI's client commands through `assert_cmd`, against a real daemon and the
//! fake provider.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[cfg(unix)]
mod approval_keys;
// Checkpoints need git, which the Windows tests (under Wine) do not have.
#[cfg(unix)]
mod checkpoints;
mod commands;
#[path = "../common/mod.rs"]
mod common;
mod config_errors;
mod failed_turn;
mod help;
mod ids;
mod images;
mod modes;
// socat and a Unix socket, as the README has it.
#[cfg(unix)]
mod readme;
mod status;
mod subagents;
mod tokens;

use assert_cmd::Command;
use common::*;
use predicates::prelude::*;
use serde_json::{Value, json};
use zeroclaw_testkit::{FakeProvider, openai};

/// `zeroclaw --config-dir <dir>/cfg` for `assert_cmd`, without `RUST_LOG`: what the
/// commands print is the subject.
fn zeroclaw(dir: &TestDir) -> Command {
    let mut cmd = Command::from_std(dir.command(&[]));
    cmd.env_remove("RUST_LOG");
    cmd
}

/// The model says something, then calls bash.
fn bash_call(command: &str) -> zeroclaw_testkit::Reply {
    let args = json!({ "command": command }).to_string();
    openai::Builder::new()
        .text("Running it.")
        .tool_call(0, "call_1", "bash", &args, 5)
        .build()
}

#[test]
fn call_prints_the_result_as_pretty_json() {
    let env = Env::new("", "");
    let out = zeroclaw(&env.dir)
        .args(["call", "status"])
        .assert()
        .success();
    let status: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(status["pid"], json!(env.daemon.pid()));
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("\n  \"pid\""));
}

#[test]
fn call_errors_go_to_stderr_with_their_code_and_exit_nonzero() {
    let env = Env::new("", "");
    zeroclaw(&env.dir)
        .args(["call", "session/messages", r#"{"sessionId":"nope"}"#])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains(
            "error -32000: no session \"nope\"",
        ));
    zeroclaw(&env.dir)
        .args(["call", "no/such/method"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("error -32601"));
    zeroclaw(&env.dir)
        .args(["call", "status", "{not json"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("PARAMS is not valid JSON"));
}

#[test]
fn call_with_events_prints_notifications_as_ndjson_on_stderr() {
    let env = Env::new("", "");
    env.fake.push(openai::text(&["Hello", " there"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    client.prompt(&session, "hi", no_questions).result();
    let out = zeroclaw(&env.dir)
        .args(["call", "--events", "session/load"])
        .arg(json!({"sessionId": session, "replay": true}).to_string())
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    // Each line a whole notification; their params, in order:
    let events: Vec<Value> = stderr
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["params"].clone())
        .collect();
    assert_eq!(
        types(&events),
        ["user_message_chunk", "agent_message_chunk"]
    );
    assert_eq!(events[1]["text"], "Hello there");
}

#[test]
fn prompt_streams_the_answer_to_stdout_and_runs_a_call_approved_by_approve_all() {
    let env = Env::new("", "");
    env.fake.push(bash_call("echo from-the-tool"));
    env.fake.push(openai::text(&["The tool ", "said hello."]));
    let out = zeroclaw(&env.dir)
        .args(["prompt", "--approve", "all", "--cwd"])
        .arg(&env.work)
        .arg("run the tool")
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    // The tool's own output may end its lines with CRLF (`cmd` on Windows).
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).replace("\r\n", "\n");
    assert_eq!(stdout, "Running it.\nThe tool said hello.\n");
    assert!(stderr.contains("→ bash echo from-the-tool"), "{stderr}");
    assert!(stderr.contains("from-the-tool\n[exit code 0]"), "{stderr}");
    // The tool's output went back to the model.
    assert!(tool_output_sent(&env).contains("from-the-tool"));
}

/// The tool message of the model's second request: what the tool's output became for it.
fn tool_output_sent(env: &Env) -> String {
    let second = &env.fake.wait_for_requests(2)[1].body;
    let tool_message = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    tool_message["content"].as_str().unwrap().to_owned()
}

/// An MCP server from the config serves `zeroclaw prompt` like the other clients (Unix: the
/// test server is found as a Unix build).
#[cfg(unix)]
#[test]
fn prompt_runs_an_mcp_servers_tool_from_the_config() {
    let env = Env::new("", &mcp_stdio_server("test", ""));
    env.fake.push(common::tool_call(
        "call_1",
        "test__echo",
        json!({"text": "hello from mcp"}),
        2,
    ));
    env.fake.push(openai::text(&["Echoed."]));
    let out = zeroclaw(&env.dir)
        .args(["prompt", "--approve", "all", "--cwd"])
        .arg(&env.work)
        .arg("echo it through mcp")
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert_eq!(stdout, "Echoed.\n");
    assert!(stderr.contains("test__echo"), "{stderr}");
    let sent = tool_output_sent(&env);
    assert!(sent.contains("hello from mcp"), "{sent}");
}

#[test]
fn prompt_with_approve_none_refuses_the_call() {
    let env = Env::new("", "");
    env.fake.push(bash_call("touch created-by-the-tool"));
    env.fake.push(openai::text(&["Understood, I will not."]));
    let out = zeroclaw(&env.dir)
        .args(["prompt", "--approve", "none", "--cwd"])
        .arg(&env.work)
        .arg("make a file")
        .assert()
        .code(0);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("rejected (--approve none)"), "{stderr}");
    assert!(
        stderr.contains("✗ the user rejected this bash call"),
        "{stderr}"
    );
    assert!(!env.work.join("created-by-the-tool").exists());
    assert!(
        String::from_utf8_lossy(&out.get_output().stdout).ends_with("Understood, I will not.\n")
    );
}

#[test]
fn prompt_reads_the_prompt_from_stdin_and_defaults_to_refusing_without_a_terminal() {
    let env = Env::new("", "");
    env.fake.push(bash_call("touch nope"));
    env.fake.push(openai::text(&["ok"]));
    zeroclaw(&env.dir)
        .args(["prompt", "--cwd"])
        .arg(&env.work)
        .arg("-")
        .write_stdin("the prompt from stdin\n")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("ok"));
    let first = &env.fake.wait_for_requests(1)[0].body;
    let user = first["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    assert_eq!(user["content"], "the prompt from stdin\n");
    assert!(!env.work.join("nope").exists());
}

#[test]
fn prompt_exit_status_tells_max_turns_and_errors_apart() {
    let env = Env::new(
        "",
        "[agent]\nmax_steps = 1\n[approvals]\nbash = \"allow\"\n",
    );
    env.fake.push(bash_call("true"));
    zeroclaw(&env.dir)
        .args(["prompt", "--cwd"])
        .arg(&env.work)
        .arg("loop")
        .assert()
        .code(3)
        .stderr(predicate::str::contains("agent.max_steps"));
    // No scripted reply left: the fake answers 500, a provider error.
    zeroclaw(&env.dir)
        .args(["prompt", "--cwd"])
        .arg(&env.work)
        .arg("fail")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("HTTP 500"));
}

#[test]
fn prompt_continues_a_session_and_sessions_lists_and_shows_it() {
    let env = Env::new("", "");
    env.fake.push(openai::text(&["first answer"]));
    env.fake.push(openai::text(&["second answer"]));
    let out = zeroclaw(&env.dir)
        .args(["prompt", "--cwd"])
        .arg(&env.work)
        .arg("first question")
        .assert()
        .code(0);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("session "))
        .unwrap()
        .to_owned();
    zeroclaw(&env.dir)
        .args(["prompt", "--session", &id, "second question"])
        .assert()
        .code(0)
        .stdout("second answer\n");
    let second = &env.fake.wait_for_requests(2)[1].body;
    let contents: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(contents.contains(&"first question") && contents.contains(&"first answer"));

    zeroclaw(&env.dir)
        .arg("sessions")
        .assert()
        .success()
        .stdout(predicate::str::contains(&id).and(predicate::str::contains("first question")));
    let out = zeroclaw(&env.dir)
        .args(["sessions", "--json"])
        .assert()
        .success();
    let list: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(list[0]["messageCount"], json!(4));
    zeroclaw(&env.dir)
        .args(["sessions", "show", &id])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "> first question\nfirst answer\n\n> second question\nsecond answer\n",
        ));
    zeroclaw(&env.dir)
        .args(["sessions", "rename", &id, "the two questions"])
        .assert()
        .success()
        .stdout(predicate::str::contains("renamed session"));
    zeroclaw(&env.dir)
        .arg("sessions")
        .assert()
        .success()
        .stdout(predicate::str::contains("the two questions"));
    zeroclaw(&env.dir)
        .args(["sessions", "delete", &id])
        .assert()
        .success();
    zeroclaw(&env.dir)
        .args(["sessions", "show", &id])
        .assert()
        .failure()
        .stderr(predicate::str::contains("(error -32000)"));
}

#[test]
fn prompt_starts_an_ephemeral_daemon_when_none_runs() {
    let fake = FakeProvider::start_blocking().unwrap();
    fake.push(openai::text(&["started for you"]));
    let dir = TestDir::new();
    dir.write_config(&provider_config(&fake.base_url(), "", ""));
    zeroclaw(&dir)
        .args(["prompt", "--cwd"])
        .arg(dir.path())
        .arg("hello")
        .assert()
        .code(0)
        .stdout("started for you\n");
    let log = std::fs::read_to_string(dir.config_dir().join("data/ephemeral-daemon.log")).unwrap();
    assert!(log.contains("ephemeral=true"), "{log}");
}

#[test]
fn completions_are_generated_for_each_shell() {
    let dir = TestDir::new();
    for shell in ["bash", "zsh", "fish"] {
        zeroclaw(&dir)
            .args(["completions", shell])
            .assert()
            .success()
            .stdout(predicate::str::contains("prompt").and(predicate::str::contains("sessions")));
    }
}

#[test]
fn every_command_has_help_with_an_example() {
    let dir = TestDir::new();
    for command in [
        "daemon",
        "prompt",
        "call",
        "sessions",
        "status",
        "stop",
        "endpoint",
        "completions",
    ] {
        zeroclaw(&dir)
            .args([command, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Example"));
    }
}

/// Issue 12, defect 4: Windows' help described `<data dir>/daemon.sock`, suggested `socat
/// UNIX-CONNECT` and `ZEROCLAW_SOCKET=/tmp/zc.sock`. Each platform's help speaks of its own
/// endpoint.
#[test]
fn help_describes_this_platforms_endpoint() {
    let dir = TestDir::new();
    let help = |args: &[&str]| {
        let out = zeroclaw(&dir).args(args).assert().success();
        String::from_utf8_lossy(&out.get_output().stdout).into_owned()
    };
    let all = [
        help(&["--help"]),
        help(&["daemon", "--help"]),
        help(&["endpoint", "--help"]),
    ]
    .join("\n");
    if cfg!(windows) {
        for unix in [
            "daemon.sock",
            "socat",
            "UNIX-CONNECT",
            "/tmp/",
            "~/.zeroclaw",
        ] {
            assert!(!all.contains(unix), "{unix:?} in Windows help:\n{all}");
        }
        for windows in [
            r"\\.\pipe\zeroclaw-",
            r"\\.\pipe\my-zeroclaw",
            "NamedPipeClientStream",
        ] {
            assert!(all.contains(windows), "{windows:?} missing:\n{all}");
        }
    } else {
        for unix in [
            "daemon.sock",
            "socat - UNIX-CONNECT",
            "ZEROCLAW_SOCKET=/tmp/zc.sock",
        ] {
            assert!(all.contains(unix), "{unix:?} missing:\n{all}");
        }
        assert!(!all.contains(r"\\.\pipe\"), "{all}");
    }
}

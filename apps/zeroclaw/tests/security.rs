//! Who may talk to the daemon and what it never does: other users cannot connect (file
//! permissions first, the daemon's own peer-uid check behind them), planted symlinks are
//! refused rather than followed, a data dir of another owner is refused, and the API key
//! never reaches the logs, the database or an answer.
//!
//! The other-user cases need root (to run a client as `nobody` with `setpriv`); without it
//! they print why they are skipped and pass.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// What only the Unix-only tests use.
#![cfg_attr(windows, allow(unused_imports, dead_code))]

mod common;

use common::*;
use serde_json::json;
#[cfg(unix)]
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use zeroclaw_testkit::{Reply, openai};

const NOBODY_UID: u32 = 65534;

/// A client, run as `nobody`, that connects to a socket, sends `initialize` and reports one
/// of: `connect-failed <ERRNO>`, then (connected) `eof`, `io-failed <ERRNO>` or
/// `answer <line>`.
const PROBE: &str = r#"
import errno, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(60)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect-failed", errno.errorcode.get(e.errno, e.errno))
    sys.exit(0)
print("connected")
try:
    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n')
    data = s.recv(65536)
    print("eof" if not data else "answer " + data.decode(errors="replace").strip())
except OSError as e:
    print("io-failed", errno.errorcode.get(e.errno, e.errno))
"#;

/// A Python interpreter that `nobody` can run (a pyenv shim under /root is not one).
#[cfg(unix)]
fn python_for_nobody() -> Option<String> {
    for candidate in ["/usr/bin/python3", "/usr/local/bin/python3", "python3"] {
        let mut cmd = as_nobody(candidate, &["-I", "-c", "print('ok')"])?;
        if cmd
            .output()
            .is_ok_and(|o| o.status.success() && o.stdout.starts_with(b"ok"))
        {
            return Some(candidate.to_owned());
        }
    }
    eprintln!("skipped: no python3 that the user nobody can run");
    None
}

/// Runs the probe as nobody against `socket`; its output.
#[cfg(unix)]
fn probe_as_nobody(python: &str, socket: &Path) -> String {
    let out = as_nobody(python, &["-I", "-c", PROBE, socket.to_str().unwrap()])
        .unwrap()
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "probe failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = String::from_utf8(out.stdout).unwrap();
    eprintln!("probe as nobody on {}: {result:?}", socket.display());
    result
}

#[cfg(unix)]
fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

// ---------------------------------------------------------------------------------------
// Other users
// ---------------------------------------------------------------------------------------

#[test]
#[cfg(unix)]
fn another_user_cannot_open_the_socket_in_its_0700_dir_nor_a_0600_socket_in_an_open_dir() {
    let Some(python) = python_for_nobody() else {
        return;
    };
    // Everything above the data dir is open to others, so only the daemon's own modes
    // stand in the way.
    let dir = TestDir::new();
    chmod(dir.path(), 0o755);
    std::fs::create_dir_all(dir.config_dir()).unwrap();
    chmod(&dir.config_dir(), 0o755);
    let daemon = dir.start(&[]);
    let result = probe_as_nobody(&python, &daemon.endpoint);
    assert_eq!(result.trim(), "connect-failed EACCES", "{result}");

    // A socket outside the data dir, in a directory anyone may enter and write: the
    // socket's own 0600 refuses the connect.
    let dir = TestDir::new();
    chmod(dir.path(), 0o755);
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    chmod(&open, 0o777);
    let socket = open.join("d.sock");
    let other = dir.start_with(&[], &[("ZEROCLAW_SOCKET", socket.to_str().unwrap())]);
    let mode = std::fs::symlink_metadata(&socket).unwrap().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let result = probe_as_nobody(&python, &socket);
    assert_eq!(result.trim(), "connect-failed EACCES", "{result}");
    // Neither daemon ever saw a connection.
    for d in [&daemon, &other] {
        let log = d.log_text();
        assert!(
            !log.contains("connection accepted") && !log.contains("refused a connection"),
            "{log}"
        );
    }
}

#[test]
#[cfg(unix)]
fn another_user_who_gets_past_the_file_modes_is_refused_by_the_daemon_and_logged() {
    let Some(python) = python_for_nobody() else {
        return;
    };
    let dir = TestDir::new();
    chmod(dir.path(), 0o755);
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    chmod(&open, 0o777);
    let socket = open.join("d.sock");
    let daemon = dir.start_with(&[], &[("ZEROCLAW_SOCKET", socket.to_str().unwrap())]);
    // Bypass the file permissions, as a careless chmod would.
    chmod(&socket, 0o666);

    let result = probe_as_nobody(&python, &socket);
    let mut lines = result.lines();
    assert_eq!(lines.next(), Some("connected"), "{result}");
    let end = lines.next().unwrap_or_default();
    assert!(
        end == "eof" || end.starts_with("io-failed"),
        "the daemon answered another user: {result}"
    );
    let line = daemon.wait_for_log("refused a connection from another user");
    assert!(line.contains(&format!("uid={NOBODY_UID}")), "{line}");
    assert!(!daemon.log_text().contains("connection accepted"));

    // Its own user is still served.
    let mut conn = daemon.initialized();
    assert_eq!(conn.call("status", json!({}))["clients"], json!(1));
}

// ---------------------------------------------------------------------------------------
// Planted symlinks and foreign directories
// ---------------------------------------------------------------------------------------

/// Starts a daemon on `socket` and asserts it refuses to start, naming a symbolic link.
#[cfg(unix)]
fn assert_refused_symlink_socket(dir: &TestDir, socket: &Path) {
    let mut daemon = dir.spawn_with(&[], &[("ZEROCLAW_SOCKET", socket.to_str().unwrap())]);
    assert!(!daemon.wait_exit().success());
    let stderr = daemon.log_text();
    assert!(
        stderr.contains("symbolic link") && stderr.contains(socket.to_str().unwrap()),
        "{stderr}"
    );
    assert!(
        std::fs::symlink_metadata(socket)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link itself must stay"
    );
}

#[test]
#[cfg(unix)]
fn a_symlink_planted_at_the_socket_path_is_refused_and_neither_it_nor_its_target_is_touched() {
    let dir = TestDir::new();
    let target = dir.path().join("precious");
    std::fs::write(&target, b"precious").unwrap();
    chmod(&target, 0o640);
    let socket = dir.path().join("d.sock");
    std::os::unix::fs::symlink(&target, &socket).unwrap();
    assert_refused_symlink_socket(&dir, &socket);
    assert_eq!(std::fs::read_link(&socket).unwrap(), target);
    assert_eq!(std::fs::read(&target).unwrap(), b"precious");
    let mode = std::fs::metadata(&target).unwrap().mode() & 0o777;
    assert_eq!(mode, 0o640, "the target's mode changed");
}

#[test]
#[cfg(unix)]
fn a_dangling_symlink_at_the_socket_path_is_refused_and_its_target_never_created() {
    let dir = TestDir::new();
    let target = dir.path().join("nowhere.sock");
    let socket = dir.path().join("d.sock");
    std::os::unix::fs::symlink(&target, &socket).unwrap();
    assert_refused_symlink_socket(&dir, &socket);
    assert_eq!(std::fs::read_link(&socket).unwrap(), target);
    assert!(
        std::fs::symlink_metadata(&target).is_err(),
        "the daemon bound or created the link's target"
    );
}

#[test]
#[cfg(unix)]
fn a_dangling_symlink_at_the_default_socket_path_is_refused_too() {
    // The same rule inside the daemon's own data dir, with no ZEROCLAW_SOCKET.
    let dir = TestDir::new();
    let data = dir.config_dir().join("data");
    std::fs::create_dir_all(&data).unwrap();
    chmod(&data, 0o700);
    let target = dir.path().join("elsewhere.sock");
    std::os::unix::fs::symlink(&target, dir.default_endpoint()).unwrap();
    let mut daemon = dir.spawn_with(&[], &[]);
    assert!(!daemon.wait_exit().success());
    assert!(
        daemon.log_text().contains("symbolic link"),
        "{}",
        daemon.log_text()
    );
    assert!(std::fs::symlink_metadata(&target).is_err());
}

#[test]
#[cfg(unix)]
fn a_data_dir_owned_by_another_user_is_refused_with_a_clear_message() {
    if !is_root() {
        eprintln!("skipped: needs root to give a directory to another user");
        return;
    }
    let dir = TestDir::new();
    let data = dir.config_dir().join("data");
    std::fs::create_dir_all(&data).unwrap();
    chmod(&data, 0o755);
    std::os::unix::fs::chown(&data, Some(NOBODY_UID), Some(NOBODY_UID)).unwrap();
    let mut daemon = dir.spawn_with(&[], &[]);
    assert!(!daemon.wait_exit().success());
    let stderr = daemon.log_text();
    assert!(
        stderr.contains(data.to_str().unwrap())
            && stderr.contains(&format!("owned by uid {NOBODY_UID}"))
            && stderr.contains("ZEROCLAW_DATA_DIR"),
        "{stderr}"
    );
    // Refused without touching it: same owner and mode, nothing created inside.
    let meta = std::fs::metadata(&data).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o777), (NOBODY_UID, 0o755));
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0);
}

#[test]
#[cfg(unix)]
fn a_data_dir_that_is_a_symlink_to_another_users_dir_is_refused() {
    if !is_root() {
        eprintln!("skipped: needs root to give a directory to another user");
        return;
    }
    let dir = TestDir::new();
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(NOBODY_UID), Some(NOBODY_UID)).unwrap();
    std::fs::create_dir_all(dir.config_dir()).unwrap();
    std::os::unix::fs::symlink(&theirs, dir.config_dir().join("data")).unwrap();
    let mut daemon = dir.spawn_with(&[], &[]);
    assert!(!daemon.wait_exit().success());
    assert!(
        daemon
            .log_text()
            .contains(&format!("owned by uid {NOBODY_UID}")),
        "{}",
        daemon.log_text()
    );
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);
}

// ---------------------------------------------------------------------------------------
// The API key
// ---------------------------------------------------------------------------------------

#[test]
fn the_api_key_never_appears_in_logs_database_files_or_answers() {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let secret = format!("sk-zc-{}-{nanos}-DoNotLeak", std::process::id());
    let mut env = Env::with_env(
        "idle_timeout_secs = 5\napi_key_env = \"ZC_TEST_KEY\"",
        BASH_ALLOWED,
        &[("ZC_TEST_KEY", secret.as_str()), ("RUST_LOG", "debug")],
    );

    // One good turn, with a tool call so more of the daemon runs, then a rejected key.
    env.fake.push(bash_call("call_env", "echo tool ran", 2));
    env.fake.push(openai::text(&["hello"]));
    env.fake.push(Reply::unauthorized());
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "hi", no_questions);
    assert_eq!(turn.result()["text"], "hello");
    let rejected = client.prompt(&session, "again", no_questions);
    assert_eq!(error_code(&rejected.answer), -32004, "{}", rejected.answer);
    assert_eq!(
        rejected.error()["data"]["kind"],
        "auth",
        "{}",
        rejected.answer
    );

    // The key was really used: the provider received it.
    let requests = env.fake.wait_for_requests(3);
    for request in &requests {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {secret}").as_str())
        );
    }

    // Answers: status, list, messages, the failed prompt and its events, the CLI.
    let mut answers = vec![
        rejected.answer.to_string(),
        client.call("status", json!({})).to_string(),
        client.call("session/list", json!({})).to_string(),
        json!(client.messages(&session)).to_string(),
    ];
    answers.extend(rejected.events.iter().map(|f| f.to_string()));
    let cli = env.dir.command(&["status", "--json"]).output().unwrap();
    assert!(cli.status.success());
    answers.push(String::from_utf8_lossy(&cli.stdout).into_owned());
    answers.push(String::from_utf8_lossy(&cli.stderr).into_owned());
    for answer in &answers {
        assert!(!answer.contains(&secret), "the API key is in: {answer}");
    }

    // The database files while the daemon runs (WAL included) ...
    let data = env.dir.config_dir().join("data");
    let seen = assert_no_file_holds(&data, &secret);
    assert!(
        seen.iter().any(|n| n == "zeroclaw.db") && seen.iter().any(|n| n == "zeroclaw.db-wal"),
        "{seen:?}"
    );
    // ... and after it stopped (checkpointed), and the whole debug log.
    drop(client);
    assert!(env.daemon.stop().success());
    assert_no_file_holds(env.dir.path(), &secret);
    let log = env.daemon.log_text();
    assert!(
        log.contains("DEBUG"),
        "RUST_LOG=debug took no effect:\n{log}"
    );
    assert!(!log.contains(&secret), "the API key is in the log:\n{log}");
    let debug_lines = log.lines().filter(|l| l.contains("DEBUG")).count();
    eprintln!(
        "searched {} log lines ({debug_lines} at DEBUG)",
        log.lines().count()
    );
}

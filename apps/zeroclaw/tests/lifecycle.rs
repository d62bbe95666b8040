//! The daemon's lifecycle over a real socket: permissions, the lock, stale sockets,
//! signals, `--ephemeral`, and the CLI commands that talk to it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
#[cfg(unix)]
use std::os::unix::fs::{FileTypeExt, PermissionsExt};

#[test]
#[cfg(unix)]
fn socket_is_0600_and_data_dir_is_0700() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let socket = std::fs::symlink_metadata(&daemon.endpoint).unwrap();
    assert!(socket.file_type().is_socket());
    assert_eq!(socket.permissions().mode() & 0o777, 0o600);
    let data = std::fs::metadata(daemon.endpoint.parent().unwrap()).unwrap();
    assert_eq!(data.permissions().mode() & 0o777, 0o700);
    let mut conn = daemon.initialized();
    assert_eq!(conn.call("status", json!({}))["clients"], json!(1));
}

#[test]
#[cfg(unix)]
fn a_loose_existing_data_dir_is_tightened_to_0700() {
    let dir = TestDir::new();
    let data = dir.config_dir().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let _daemon = dir.start(&[]);
    let mode = std::fs::metadata(&data).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

#[test]
fn each_connection_is_logged_with_its_peer_label() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let _conn = daemon.connect();
    let line = daemon.wait_for_log("connection accepted");
    #[cfg(unix)]
    let label = format!(
        "peer=unix:pid={},uid={}",
        std::process::id(),
        rustix::process::geteuid().as_raw()
    );
    #[cfg(windows)]
    let label = "peer=pipe:local".to_string();
    assert!(line.contains(&label), "{line}");
}

/// An endpoint of the test's own that is not the default one (a mistyped ZEROCLAW_SOCKET).
fn another_endpoint(dir: &TestDir) -> String {
    if cfg!(windows) {
        format!(r"\\.\pipe\zc-test-{}-typo", std::process::id())
    } else {
        dir.path().join("typo.sock").display().to_string()
    }
}

/// Issue 28: one daemon per data dir, whatever its socket. A second one, on the first one's
/// endpoint or through another, exits non-zero naming the data dir, the first one's pid and
/// the endpoint it serves. Its advice is to use or stop that daemon, or to take a data dir of
/// its own: ZEROCLAW_SOCKET is only ever named to reach the first one (before, the refusal
/// said "set ZEROCLAW_SOCKET ... to run a second one elsewhere", which started a second
/// daemon on the same database).
#[test]
fn a_second_daemon_on_the_data_dir_is_refused_whatever_its_socket_naming_the_first_and_never_advising_another_socket()
 {
    let dir = TestDir::new();
    let first = dir.start(&[]);
    let theirs = first.endpoint.display().to_string();
    let other = another_endpoint(&dir);
    for env in [&[][..], &[("ZEROCLAW_SOCKET", other.as_str())]] {
        let mut second = dir.spawn_with(&[], env);
        assert!(!second.wait_exit().success(), "{env:?}");
        let said = second.log_text();
        for named in [
            dir.data_dir().display().to_string(),
            format!("pid {}", first.pid()),
            format!("serving {theirs}"),
            "ZEROCLAW_DATA_DIR".to_owned(),
        ] {
            assert!(said.contains(&named), "{env:?}: {named:?} not in: {said}");
        }
        let reach = format!("ZEROCLAW_SOCKET={theirs};");
        assert!(
            said.match_indices("ZEROCLAW_SOCKET")
                .all(|(at, _)| said[at..].starts_with(&reach)),
            "{env:?}: {said}"
        );
        if !env.is_empty() {
            assert!(second.endpoint_gone(), "the refused daemon left {other}");
        }
    }
    let mut conn = first.initialized();
    assert_eq!(conn.call("status", json!({}))["pid"], json!(first.pid()));
}

/// Windows twins of the lock and the stale socket, and issue 12's defects 1, 2 and 4 at
/// the command line.
#[cfg(windows)]
mod windows {
    use super::*;

    /// Defect 2: `C:\zc2\data` and `c:\ZC2\DATA\` got two pipes, and two daemons served one
    /// database. Now one pipe name (normalised) and one lock (the data dir's).
    #[test]
    fn a_second_daemon_on_another_spelling_of_the_data_dir_is_refused_naming_the_first() {
        let dir = TestDir::new();
        let data = dir.data_dir().display().to_string();
        let first = dir.start_with(&[], &[("ZEROCLAW_DATA_DIR", &data)]);
        let other = format!("{}\\", data.to_uppercase().replace('\\', "/"));
        let mut second = dir.spawn_with(&[], &[("ZEROCLAW_DATA_DIR", &other)]);
        assert!(!second.wait_exit().success());
        let stderr = second.log_text();
        assert!(
            stderr.contains(&format!("pid {}", first.pid())) && stderr.contains("data directory"),
            "{stderr}"
        );
        let mut conn = first.initialized();
        assert_eq!(conn.call("status", json!({}))["pid"], json!(first.pid()));
    }

    /// Defect 2's lock: a second daemon on the same data dir through another pipe name
    /// (ZEROCLAW_SOCKET) is refused too; Windows has no socket file to lock beside.
    #[test]
    fn a_second_daemon_on_one_data_dir_through_another_pipe_is_refused() {
        let dir = TestDir::new();
        let first = dir.start(&[]);
        let pipe = format!(r"\\.\pipe\zc-test-{}-other", std::process::id());
        let mut second = dir.spawn_with(&[], &[("ZEROCLAW_SOCKET", &pipe)]);
        assert!(!second.wait_exit().success());
        let stderr = second.log_text();
        assert!(stderr.contains(&format!("pid {}", first.pid())), "{stderr}");
        assert!(dir.data_dir().join("daemon.lock").is_file());
    }

    /// The stale-socket twin: a killed daemon leaves no pipe (it vanishes with the process)
    /// and a lock file that no longer holds, so the next daemon starts at once.
    #[test]
    fn a_killed_daemon_leaves_nothing_stale_and_the_next_one_starts() {
        let dir = TestDir::new();
        let mut first = dir.start(&[]);
        assert!(!first.kill().success());
        assert!(first.endpoint_gone());
        assert!(dir.data_dir().join("daemon.lock").is_file());
        let second = dir.start(&[]);
        let mut conn = second.initialized();
        assert_eq!(conn.call("status", json!({}))["pid"], json!(second.pid()));
    }

    /// Defect 1: with `ZEROCLAW_SOCKET` naming a file, `zeroclaw status` overwrote it with
    /// JSON-RPC frames. Clients and the daemon now refuse it, naming the variable, and the
    /// file keeps its bytes.
    #[test]
    fn a_file_in_zeroclaw_socket_is_refused_by_clients_and_the_daemon_and_left_untouched() {
        let dir = TestDir::new();
        let notes = dir.path().join("notes.txt");
        std::fs::write(&notes, "precious\r\n").unwrap();
        let socket = notes.to_str().unwrap();
        for command in [
            &["status"][..],
            &["call", "status"],
            &["stop"],
            &["sessions"],
        ] {
            let out = dir
                .command(command)
                .env("ZEROCLAW_SOCKET", socket)
                .output()
                .unwrap();
            assert!(!out.status.success());
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains("ZEROCLAW_SOCKET") && stderr.contains(r"\\.\pipe\"),
                "{command:?}: {stderr}"
            );
        }
        let mut daemon = dir.spawn_with(&[], &[("ZEROCLAW_SOCKET", socket)]);
        assert!(!daemon.wait_exit().success());
        assert!(
            daemon.log_text().contains("ZEROCLAW_SOCKET"),
            "{}",
            daemon.log_text()
        );
        assert_eq!(std::fs::read(&notes).unwrap(), b"precious\r\n");
    }

    /// Defect 4: the Unix example `ZEROCLAW_SOCKET=/tmp/zc.sock` failed with "Invalid name
    /// (os error 123)" and no hint; a pipe name over 256 characters with error 206.
    #[test]
    fn unix_paths_and_overlong_names_in_zeroclaw_socket_are_clear_errors() {
        let dir = TestDir::new();
        let mut daemon = dir.spawn_with(&[], &[("ZEROCLAW_SOCKET", "/tmp/zc.sock")]);
        assert!(!daemon.wait_exit().success());
        let stderr = daemon.log_text();
        assert!(
            stderr.contains("ZEROCLAW_SOCKET") && stderr.contains(r"\\.\pipe\my-zeroclaw"),
            "{stderr}"
        );
        assert!(!stderr.contains("os error 123"), "{stderr}");

        let long = format!(r"\\.\pipe\{}", "p".repeat(300));
        let mut daemon = dir.spawn_with(&[], &[("ZEROCLAW_SOCKET", &long)]);
        assert!(!daemon.wait_exit().success());
        let stderr = daemon.log_text();
        assert!(
            stderr.contains("ZEROCLAW_SOCKET") && stderr.contains("256") && stderr.contains("309"),
            "{stderr}"
        );
        assert!(!stderr.contains("os error 206"), "{stderr}");
    }
}

#[test]
#[cfg(unix)]
fn a_stale_socket_left_by_sigkill_is_recovered() {
    let dir = TestDir::new();
    let mut first = dir.start(&[]);
    first.signal(rustix::process::Signal::KILL);
    first.wait_exit();
    assert!(first.endpoint.exists(), "SIGKILL leaves the socket behind");
    let second = dir.start(&[]);
    second.wait_for_log("removing a stale socket");
    let mut conn = second.initialized();
    assert_eq!(conn.call("status", json!({}))["pid"], json!(second.pid()));
}

#[test]
#[cfg(unix)]
fn a_regular_file_at_the_socket_path_is_left_untouched_and_the_daemon_exits_nonzero() {
    let dir = TestDir::new();
    let path = dir.path().join("not-a.sock");
    std::fs::write(&path, b"precious").unwrap();
    let socket = path.to_str().unwrap();
    let mut daemon = dir.spawn_with(&[], &[("ZEROCLAW_SOCKET", socket)]);
    assert!(!daemon.wait_exit().success());
    let stderr = daemon.log_text();
    assert!(
        stderr.contains(socket) && stderr.contains("not a socket"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"precious");
}

#[test]
#[cfg(unix)]
fn a_live_foreign_socket_is_never_removed() {
    let dir = TestDir::new();
    let path = dir.path().join("foreign.sock");
    let foreign = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let mut daemon = dir.spawn_with(&[], &[("ZEROCLAW_SOCKET", path.to_str().unwrap())]);
    assert!(!daemon.wait_exit().success());
    assert!(
        daemon.log_text().contains("already listening"),
        "{}",
        daemon.log_text()
    );
    let _client = std::os::unix::net::UnixStream::connect(&path).unwrap();
    assert!(foreign.accept().is_ok(), "the foreign socket still accepts");
}

#[test]
#[cfg(unix)]
fn a_symlink_at_the_lock_path_is_refused_not_followed() {
    let dir = TestDir::new();
    let socket = dir.path().join("d.sock");
    let target = dir.path().join("target");
    std::os::unix::fs::symlink(&target, dir.path().join("d.sock.lock")).unwrap();
    let mut daemon = dir.spawn_with(&[], &[("ZEROCLAW_SOCKET", socket.to_str().unwrap())]);
    assert!(!daemon.wait_exit().success());
    assert!(
        daemon.log_text().contains("symbolic link"),
        "{}",
        daemon.log_text()
    );
    assert!(!target.exists(), "the link must not have been followed");
    assert!(!socket.exists());
}

#[test]
#[cfg(unix)]
fn sigterm_and_sigint_exit_zero_and_remove_the_socket() {
    for signal in [rustix::process::Signal::TERM, rustix::process::Signal::INT] {
        let dir = TestDir::new();
        let mut daemon = dir.start(&[]);
        let _idle = daemon.initialized();
        daemon.signal(signal);
        assert!(daemon.wait_exit().success(), "{}", daemon.log_text());
        assert!(!daemon.endpoint.exists(), "socket removed after {signal:?}");
        assert!(
            daemon.endpoint.with_extension("sock.lock").exists(),
            "lock file stays"
        );
    }
}

/// SIGHUP is an orderly stop like SIGTERM (not a reload): the running turn is answered as
/// cancelled, its bash command is killed rather than orphaned, the socket is removed.
#[test]
#[cfg(unix)]
fn sighup_stops_in_order_answering_the_running_turn_and_killing_its_bash_command() {
    let mut env = Env::new("", BASH_ALLOWED);
    let (mut client, prompt, shell) = env.start_long_bash();

    env.daemon.signal(rustix::process::Signal::HUP);
    let answer = client.wait_for(|f| f["id"] == prompt);
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    assert!(
        env.daemon.wait_exit().success(),
        "{}",
        env.daemon.log_text()
    );
    assert!(env.daemon.log_text().contains("signal=\"SIGHUP\""));
    assert!(!env.daemon.endpoint.exists(), "socket removed after SIGHUP");
    poll_until("the bash command is killed", || process_gone(shell));
    let records = env.dir.config_dir().join("data").join("tool-processes");
    assert_eq!(std::fs::read_dir(&records).unwrap().count(), 0);
}

#[test]
fn shutdown_answers_then_stops_and_removes_the_socket() {
    let dir = TestDir::new();
    let mut daemon = dir.start(&[]);
    let mut conn = daemon.initialized();
    assert_eq!(conn.call("shutdown", json!({})), json!({}));
    assert!(conn.at_eof());
    assert!(daemon.wait_exit().success());
    assert!(daemon.endpoint_gone());
}

#[test]
#[cfg(unix)]
fn shutdown_leaves_a_socket_that_is_no_longer_its_own() {
    let dir = TestDir::new();
    let mut daemon = dir.start(&[]);
    std::fs::remove_file(&daemon.endpoint).unwrap();
    std::fs::write(&daemon.endpoint, b"someone else's").unwrap();
    daemon.signal(rustix::process::Signal::TERM);
    assert!(daemon.wait_exit().success());
    assert_eq!(std::fs::read(&daemon.endpoint).unwrap(), b"someone else's");
}

/// A deleted socket file is noticed (`socket_check_secs`) and re-created owner-only; the
/// daemon is reachable again, and at shutdown it removes the new socket as its own.
#[test]
#[cfg(unix)]
fn a_deleted_socket_file_is_re_created_and_the_daemon_is_reachable_again() {
    let dir = TestDir::new();
    dir.write_config("[daemon]\nsocket_check_secs = 1\n");
    let mut daemon = dir.start(&[]);
    let kept = daemon.initialized();
    std::fs::remove_file(&daemon.endpoint).unwrap();
    daemon.wait_for_log("re-created the socket");
    let socket = std::fs::symlink_metadata(&daemon.endpoint).unwrap();
    assert!(socket.file_type().is_socket());
    assert_eq!(socket.permissions().mode() & 0o777, 0o600);
    let mut conn = daemon.initialized();
    assert_eq!(conn.call("status", json!({}))["clients"], json!(2));
    drop(kept);
    daemon.signal(rustix::process::Signal::TERM);
    assert!(daemon.wait_exit().success());
    assert!(
        !daemon.endpoint.exists(),
        "the re-created socket is removed"
    );
}

/// With its socket file gone (and not yet re-created), `zeroclaw status` names the pid
/// holding the lock instead of saying that no daemon runs.
#[test]
#[cfg(unix)]
fn status_names_the_pid_holding_the_lock_when_the_socket_is_missing() {
    let dir = TestDir::new();
    // Never re-created, so the socket stays missing while `status` looks.
    dir.write_config("[daemon]\nsocket_check_secs = 0\n");
    let daemon = dir.start(&[]);
    std::fs::remove_file(&daemon.endpoint).unwrap();
    let out = dir.command(&["status"]).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(&format!("pid {} holds its lock", daemon.pid())),
        "{stderr}"
    );
}

/// Sockets that never say `initialize` cannot lock clients out: with every slot held by
/// one, a new connection takes the oldest one's slot, and the others are closed at the
/// handshake timeout. Initialized clients do fill the limit: one more gets `-32001`.
#[test]
fn connections_that_never_initialize_cannot_lock_clients_out() {
    let dir = TestDir::new();
    dir.write_config("[daemon]\nmax_connections = 3\nhandshake_timeout_secs = 1\n");
    let daemon = dir.start(&[]);
    let mut idle: Vec<Conn> = (0..3).map(|_| daemon.connect()).collect();
    daemon.wait_for_log_count("connection accepted", 3);

    let mut first = daemon.initialized();
    assert!(
        idle[0].at_eof(),
        "the oldest idle connection gave up its slot"
    );
    daemon.wait_for_log("had not initialized when the connection limit was reached");
    assert!(idle[1].at_eof() && idle[2].at_eof());
    daemon.wait_for_log_count("did not initialize within 1s", 2);
    daemon.wait_for_log_count("connection closed", 3);

    let _second = daemon.initialized();
    let _third = daemon.initialized();
    let mut fourth = daemon.connect();
    let answer = fourth.recv();
    assert_eq!(error_code(&answer), -32001, "{answer}");
    assert_eq!(answer["error"]["data"]["limit"], json!(3), "{answer}");
    assert!(fourth.at_eof());
    assert_eq!(first.call("status", json!({}))["clients"], json!(3));
}

#[test]
#[cfg(unix)]
fn an_overlong_socket_path_is_a_clear_error_naming_zeroclaw_socket() {
    let dir = TestDir::new();
    let long = format!("{}/{}.sock", dir.path().display(), "s".repeat(120));
    let mut daemon = dir.spawn_with(&[], &[("ZEROCLAW_SOCKET", &long)]);
    assert!(!daemon.wait_exit().success());
    let stderr = daemon.log_text();
    assert!(
        stderr.contains(&long) && stderr.contains("ZEROCLAW_SOCKET") && stderr.contains("107"),
        "{stderr}"
    );
}

#[test]
fn a_malformed_config_is_a_clear_error_at_start() {
    let dir = TestDir::new();
    dir.write_config("[daemon]\nmax_frame_bytes = \"big\"\n");
    let mut daemon = dir.spawn_with(&[], &[]);
    assert!(!daemon.wait_exit().success());
    let stderr = daemon.log_text();
    assert!(
        stderr.contains("config.toml") && stderr.contains("max_frame_bytes"),
        "{stderr}"
    );
}

mod ephemeral {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn stays_up_with_no_client_then_exits_a_grace_second_after_the_last_one_leaves() {
        let dir = TestDir::new();
        let mut daemon = dir.start(&["--ephemeral"]);
        // The behaviour under test is the absence of an exit, which can only be seen by
        // letting more than the grace period pass.
        std::thread::sleep(Duration::from_millis(1500));
        assert!(daemon.is_running(), "exited before any client connected");
        // A connection that never initializes is not a client.
        drop(daemon.connect());
        let mut client = daemon.initialized();
        client.call("status", json!({}));
        drop(client);
        let left = Instant::now();
        assert!(daemon.wait_exit().success());
        assert!(
            left.elapsed() >= Duration::from_secs(1),
            "exited before the grace second"
        );
        assert!(daemon.endpoint_gone());
    }

    #[test]
    fn a_client_initializing_within_the_grace_cancels_the_exit() {
        let dir = TestDir::new();
        let mut daemon = dir.start(&["--ephemeral"]);
        let first = daemon.initialized();
        // Connected but not yet a client: it will initialize inside the grace period.
        let mut second = daemon.connect();
        let mark = daemon.log_len();
        drop(first);
        daemon.wait_for_log_after(mark, "last client left");
        second.initialize();
        daemon.wait_for_log_after(mark, "staying up");
        assert_eq!(second.call("status", json!({}))["clients"], json!(1));
        drop(second);
        assert!(daemon.wait_exit().success());
    }

    #[test]
    fn one_of_two_clients_leaving_does_not_end_it() {
        let dir = TestDir::new();
        let mut daemon = dir.start(&["--ephemeral"]);
        let first = daemon.initialized();
        let mut second = daemon.initialized();
        let mark = daemon.log_len();
        drop(first);
        daemon.wait_for_log_after(mark, "connection closed");
        assert_eq!(second.call("status", json!({}))["clients"], json!(1));
        std::thread::sleep(Duration::from_millis(1500));
        assert!(daemon.is_running());
        assert!(!daemon.log_text().contains("last client left"));
        assert_eq!(second.call("status", json!({}))["ephemeral"], json!(true));
        drop(second);
        assert!(daemon.wait_exit().success());
    }

    #[test]
    fn without_ephemeral_the_daemon_ignores_client_count() {
        let dir = TestDir::new();
        let mut daemon = dir.start(&[]);
        drop(daemon.initialized());
        daemon.wait_for_log("connection closed");
        std::thread::sleep(Duration::from_millis(1500));
        assert!(daemon.is_running());
        assert!(daemon.initialized().call("status", json!({}))["ephemeral"] == json!(false));
    }
}

mod cli {
    use super::*;

    fn run(dir: &TestDir, args: &[&str]) -> std::process::Output {
        dir.command(args).output().unwrap()
    }

    #[test]
    fn endpoint_prints_the_resolved_socket_path() {
        let dir = TestDir::new();
        let out = run(&dir, &["endpoint"]);
        assert!(out.status.success());
        assert_eq!(
            String::from_utf8(out.stdout).unwrap().trim(),
            dir.default_endpoint().to_str().unwrap()
        );
        let elsewhere = if cfg!(windows) {
            r"\\.\pipe\elsewhere"
        } else {
            "/tmp/elsewhere.sock"
        };
        let out = dir
            .command(&["endpoint"])
            .env("ZEROCLAW_SOCKET", elsewhere)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), elsewhere);
    }

    #[test]
    fn status_and_stop_without_a_daemon_say_how_to_start_one() {
        let dir = TestDir::new();
        for command in ["status", "stop"] {
            let out = run(&dir, &[command]);
            assert!(!out.status.success());
            let stderr = String::from_utf8(out.stderr).unwrap();
            let expected = format!(
                "no daemon at {}; start one with `zeroclaw daemon`",
                dir.default_endpoint().display()
            );
            assert!(stderr.contains(&expected), "{stderr}");
        }
    }

    #[test]
    fn status_summarises_and_json_prints_the_raw_result() {
        let dir = TestDir::new();
        let daemon = dir.start(&[]);
        let out = run(&dir, &["status"]);
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(&format!("pid {}", daemon.pid())), "{text}");
        assert!(text.contains("persistent"), "{text}");
        let out = run(&dir, &["status", "--json"]);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["pid"], json!(daemon.pid()));
        assert_eq!(json["protocolVersion"], json!(1));
        assert_eq!(json["endpoint"], json!(daemon.endpoint.to_str().unwrap()));
        // The default provider (no config file): a local Ollama's OpenAI API, not called yet.
        assert_eq!(
            json["provider"],
            json!({"kind": "openai", "model": "llama3.2", "baseUrl": "http://127.0.0.1:11434/v1"})
        );
    }

    /// Issue 28: through a mistyped socket, `status` named no daemon and advised starting one
    /// (a second daemon on the same data). Now it names the daemon of the data dir, the
    /// endpoint it serves, and how to reach it.
    #[test]
    fn status_through_another_socket_names_the_daemon_of_the_data_dir_and_its_endpoint() {
        let dir = TestDir::new();
        let daemon = dir.start(&[]);
        let out = dir
            .command(&["status"])
            .env("ZEROCLAW_SOCKET", another_endpoint(&dir))
            .output()
            .unwrap();
        assert!(!out.status.success());
        let said = String::from_utf8(out.stderr).unwrap();
        let theirs = daemon.endpoint.display().to_string();
        for named in [
            format!("pid {}", daemon.pid()),
            format!("set ZEROCLAW_SOCKET to {theirs}"),
        ] {
            assert!(said.contains(&named), "{named:?} not in: {said}");
        }
        assert!(!said.contains("start one"), "{said}");
    }

    #[test]
    fn stop_shuts_the_daemon_down() {
        let dir = TestDir::new();
        let mut daemon = dir.start(&[]);
        let out = run(&dir, &["stop"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(daemon.wait_exit().success());
        assert!(daemon.endpoint_gone());
    }
}

//! Running as a service (docs/service.md): socket activation under Debian's
//! `systemd-socket-activate` and under the test acting as the service manager, readiness,
//! watchdog and stopping notifications on a datagram socket the test binds, the unit files
//! `service install --dry-run` prints, and the gateway's `/metrics`, `/healthz` and
//! `/readyz`. Ordered by the daemon's log, its notifications and answers; never by sleeping.

use crate::common::*;
use crate::harness::*;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
#[cfg(unix)]
use std::path::PathBuf;
use std::process::Command;

// ---------------------------------------------------------------------------------------
// Socket activation
// ---------------------------------------------------------------------------------------

/// `systemd-socket-activate` from Debian's systemd package, or `None` (with the reason
/// printed) where it is missing; `.ci/run` installs it.
#[cfg(unix)]
fn socket_activate() -> Option<&'static str> {
    const PATH: &str = "/usr/bin/systemd-socket-activate";
    if Path::new(PATH).exists() {
        Some(PATH)
    } else {
        eprintln!("skipped: {PATH} is not installed (Debian's systemd package)");
        None
    }
}

/// The data dir, made as the daemon would (0700), so a manager can bind the socket in it.
#[cfg(unix)]
fn private_data_dir(dir: &TestDir) {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir.data_dir())
        .unwrap();
}

#[cfg(unix)]
fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

#[test]
#[cfg(unix)]
fn a_client_that_connects_before_the_daemon_runs_is_served_on_the_passed_socket() {
    let Some(activate) = socket_activate() else {
        return;
    };
    let dir = TestDir::new();
    private_data_dir(&dir);
    let endpoint = dir.default_endpoint();
    // The manager binds the socket and starts the daemon on the first connection.
    let mut cmd = dir.command(&[]);
    let mut manager = Command::new(activate);
    manager
        .arg("--listen")
        .arg(&endpoint)
        .arg("--fdname=rpc")
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .args(["daemon", "--no-gateway"]);
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => manager.env(key, value),
            None => manager.env_remove(key),
        };
    }
    let _ = &mut cmd;
    let mut daemon = dir.spawn_command(manager, endpoint.clone());
    daemon.wait_for_log("Listening on");
    assert!(
        daemon.log_count("serving the socket the service manager passed") == 0,
        "the daemon ran before any client connected"
    );

    // The client connects to the manager's socket; the daemon starts and serves it.
    let mut client = Conn::connect(&endpoint);
    let hello = client.initialize();
    assert!(hello["pid"].is_u64(), "{hello}");
    assert!(client.call("status", json!({}))["pid"].is_u64());
    daemon.wait_for_log("serving the socket the service manager passed");

    // The seed's rules hold on it: owner-only (the manager made it looser), the lock.
    assert_eq!(mode_of(&endpoint), 0o600);
    assert!(endpoint.with_extension("sock.lock").exists());

    // Another user who reaches the socket anyway (its mode loosened after the start) is
    // refused by the peer-credential check.
    if let Some(python) = as_nobody("python3", &["-I", "-c", "print('ok')"])
        .filter(|_| Path::new("/usr/bin/python3").exists())
    {
        drop(python);
        use std::os::unix::fs::PermissionsExt;
        for open in [dir.path().to_path_buf(), dir.config_dir(), dir.data_dir()] {
            std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::set_permissions(&endpoint, std::fs::Permissions::from_mode(0o666)).unwrap();
        let probe = "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\ntry:\n  s.sendall(b'{\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":1},\"id\":1}\\n')\n  print('answered' if s.recv(4096) else 'closed')\nexcept (ConnectionResetError, BrokenPipeError):\n  print('closed')";
        let out = as_nobody(
            "/usr/bin/python3",
            &["-I", "-c", probe, endpoint.to_str().unwrap()],
        )
        .unwrap()
        .output()
        .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "closed",
            "{out:?}"
        );
        daemon.wait_for_log("refused a connection from another user");
    }

    // An orderly stop leaves the manager's socket file where it was.
    drop(client);
    assert!(daemon.stop().success());
    assert!(
        endpoint.exists(),
        "the daemon removed a socket it did not create"
    );
}

/// The test as the service manager: it holds the listening socket across daemon
/// instances, as systemd does, and starts an instance with the socket as descriptor 3.
#[cfg(unix)]
struct Manager {
    listener: std::os::unix::net::UnixListener,
    endpoint: PathBuf,
}

#[cfg(unix)]
impl Manager {
    fn bind(dir: &TestDir) -> Self {
        use std::os::unix::fs::PermissionsExt;
        private_data_dir(dir);
        let endpoint = dir.default_endpoint();
        let listener = std::os::unix::net::UnixListener::bind(&endpoint).unwrap();
        std::fs::set_permissions(&endpoint, std::fs::Permissions::from_mode(0o600)).unwrap();
        Self { listener, endpoint }
    }

    /// Starts a daemon instance on the socket: `LISTEN_PID` is the shell's own pid, which
    /// `exec` keeps for the daemon.
    fn start(&self, dir: &TestDir, args: &[&str]) -> Daemon {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let fd = self.listener.as_raw_fd();
        let mut all = vec!["daemon", "--no-gateway"];
        all.extend_from_slice(args);
        let daemon = dir.command(&all);
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg("LISTEN_PID=$$ LISTEN_FDS=1 LISTEN_FDNAMES=rpc exec \"$@\"")
            .arg("sh")
            .arg(daemon.get_program())
            .args(daemon.get_args());
        for (key, value) in daemon.get_envs() {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        // SAFETY: between fork and exec only dup2 and fcntl, which are async-signal-safe:
        // the listener becomes descriptor 3, kept open across exec, in the child only.
        unsafe {
            cmd.pre_exec(move || {
                use std::os::fd::FromRawFd;
                let listener = std::os::fd::BorrowedFd::borrow_raw(fd);
                let mut three = std::os::fd::OwnedFd::from_raw_fd(3);
                let moved = rustix::io::dup2(listener, &mut three);
                let three = std::mem::ManuallyDrop::new(three);
                moved?;
                rustix::io::fcntl_setfd(&*three, rustix::io::FdFlags::empty())?;
                Ok(())
            });
        }
        dir.spawn_command(cmd, self.endpoint.clone())
    }
}

#[test]
#[cfg(unix)]
fn an_idle_activated_daemon_exits_and_the_next_connection_is_served_by_the_next_instance() {
    let dir = TestDir::new();
    let manager = Manager::bind(&dir);
    let idle = ["--exit-when-idle", "300ms"];

    let mut first = manager.start(&dir, &idle);
    first.wait_for_log("listening");
    let mut client = Conn::connect(&manager.endpoint);
    client.initialize();
    assert!(client.call("status", json!({}))["pid"].as_u64() == Some(first.pid().into()));
    drop(client);

    // It decides to exit: from this line on it accepts nothing.
    first.wait_for_log("idle; exiting");
    // A client arriving now waits in the manager's backlog, its request already sent.
    let mut late = Conn::connect(&manager.endpoint);
    late.send(&json!({"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": 1}, "id": 1}));
    assert!(first.wait_exit().success());
    assert!(
        manager.endpoint.exists(),
        "the daemon removed the manager's socket"
    );

    // The manager starts the next instance on the pending connection: it is served.
    let second = manager.start(&dir, &idle);
    let answer = late.recv();
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer.get("result").is_some(), "{answer}");
    let status = late.call("status", json!({}));
    assert_eq!(status["pid"].as_u64(), Some(second.pid().into()));
}

// ---------------------------------------------------------------------------------------
// Readiness, status, watchdog, stopping
// ---------------------------------------------------------------------------------------

/// A notification socket as a service manager binds it, and the messages it reads.
#[cfg(unix)]
struct NotifySocket {
    socket: std::os::unix::net::UnixDatagram,
    path: PathBuf,
}

#[cfg(unix)]
impl NotifySocket {
    fn bind(dir: &TestDir) -> Self {
        let path = dir.path().join("notify");
        let socket = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
        socket.set_read_timeout(Some(HANG_GUARD)).unwrap();
        Self { socket, path }
    }

    /// The next datagram's assignments, in order.
    fn next(&self) -> Vec<String> {
        let mut buf = vec![0u8; 4096];
        let n = self
            .socket
            .recv(&mut buf)
            .expect("no notification (hang guard)");
        String::from_utf8_lossy(&buf[..n])
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Reads until a datagram holds `wanted`; returns every assignment read before it.
    fn until(&self, wanted: &str) -> Vec<String> {
        self.until_line(|l| l == wanted)
    }

    /// Reads until a datagram holds a line `wanted` accepts; returns every assignment read.
    fn until_line(&self, wanted: impl Fn(&str) -> bool) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            let message = self.next();
            let found = message.iter().any(|l| wanted(l));
            seen.extend(message);
            if found {
                return seen;
            }
        }
    }
}

#[test]
#[cfg(unix)]
fn the_manager_hears_ready_once_the_socket_accepts_then_watchdog_pings_then_stopping() {
    let dir = TestDir::new();
    let notify = NotifySocket::bind(&dir);
    let mut daemon = dir.spawn_with(
        &[],
        &[
            ("NOTIFY_SOCKET", notify.path.to_str().unwrap()),
            ("WATCHDOG_USEC", "400000"),
        ],
    );
    let before = notify.until("READY=1");
    assert!(!before.iter().any(|l| l == "STOPPING=1"), "{before:?}");
    // READY=1 comes with a first status line.
    assert!(
        before.iter().any(|l| l.starts_with("STATUS=serving ")),
        "{before:?}"
    );
    // READY=1 came after the doors opened: the socket accepts and serves at once.
    daemon.wait_for_log("listening");
    let mut client = daemon.initialized();
    assert!(client.call("status", json!({}))["pid"].is_u64());
    // The status line follows what it does: the client that came is counted (watchdog
    // pings may come before or between, in any order).
    notify.until_line(|l| l.starts_with("STATUS=serving ") && l.contains(" 1 clients"));
    // The watchdog pings go on while it is healthy.
    notify.until("WATCHDOG=1");
    notify.until("WATCHDOG=1");
    drop(client);

    #[cfg(unix)]
    daemon.signal(rustix::process::Signal::TERM);
    notify.until("STOPPING=1");
    assert!(daemon.wait_exit().success());
    // The variables went no further than the daemon: its children never see them.
    assert!(!daemon.log_text().contains("could not notify"));
}

// ---------------------------------------------------------------------------------------
// `zeroclaw service install --dry-run`
// ---------------------------------------------------------------------------------------

/// The files `service install --dry-run` prints, by path.
fn dry_run(dir: &TestDir, platform: &str) -> BTreeMap<String, String> {
    let out = dir
        .command(&[
            "service",
            "install",
            "--user",
            "--dry-run",
            "--platform",
            platform,
        ])
        .env("HOME", dir.path())
        .env("USERPROFILE", dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("xdg"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut files = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in text.lines() {
        if let Some(path) = line
            .strip_prefix("==> ")
            .and_then(|l| l.strip_suffix(" <=="))
        {
            files.extend(current.take());
            current = Some((path.to_owned(), String::new()));
        } else if line.starts_with("$ ") {
            files.extend(current.take());
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    files.extend(current);
    assert!(!files.is_empty(), "no file in:\n{text}");
    files
}

#[test]
fn the_systemd_units_install_would_write_pass_systemd_analyze_verify() {
    let dir = TestDir::new();
    let files = dry_run(&dir, "linux");
    let socket = files
        .iter()
        .find(|(p, _)| p.ends_with("zeroclaw.socket"))
        .map(|(_, t)| t.clone())
        .unwrap();
    let service = files
        .iter()
        .find(|(p, _)| p.ends_with("zeroclaw.service"))
        .map(|(_, t)| t.clone())
        .unwrap();
    // The contract of the pair: activation by name, owner-only, readiness and watchdog.
    for line in [
        "FileDescriptorName=rpc",
        "SocketMode=0600",
        &format!("ListenStream={}", dir.default_endpoint().display()),
    ] {
        assert!(socket.lines().any(|l| l == line), "{line} not in\n{socket}");
    }
    for line in [
        "Type=notify",
        "WatchdogSec=30",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
    ] {
        assert!(
            service.lines().any(|l| l == line),
            "{line} not in\n{service}"
        );
    }
    let Ok(probe) = Command::new("systemd-analyze").arg("--version").output() else {
        eprintln!("skipped: systemd-analyze is not installed");
        return;
    };
    assert!(probe.status.success());
    let units = dir.path().join("units");
    std::fs::create_dir_all(&units).unwrap();
    std::fs::write(units.join("zeroclaw.socket"), &socket).unwrap();
    std::fs::write(units.join("zeroclaw.service"), &service).unwrap();
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(units.join("zeroclaw.socket"))
        .arg(units.join("zeroclaw.service"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "systemd-analyze verify: {said}");
    // Nothing it says is about our units (it may note the host's own).
    assert!(
        !said.contains("zeroclaw."),
        "systemd-analyze verify: {said}"
    );
}

#[test]
fn the_launchd_agent_install_would_write_parses_as_a_plist() {
    let dir = TestDir::new();
    let files = dry_run(&dir, "macos");
    let (path, text) = files.iter().next().unwrap();
    assert!(
        std::path::Path::new(path).ends_with(
            std::path::Path::new("Library")
                .join("LaunchAgents")
                .join("dev.zeroclaw.daemon.plist")
        ),
        "{path}"
    );
    let plist = plist::Value::from_reader_xml(text.as_bytes()).unwrap();
    let dict = plist.as_dictionary().unwrap();
    assert_eq!(
        dict.get("Label").and_then(|v| v.as_string()),
        Some("dev.zeroclaw.daemon")
    );
    let args: Vec<&str> = dict
        .get("ProgramArguments")
        .and_then(|v| v.as_array())
        .unwrap()
        .iter()
        .map(|v| v.as_string().unwrap())
        .collect();
    assert_eq!(
        args[1..],
        ["--config-dir", dir.config_dir().to_str().unwrap(), "daemon"]
    );
    // launchd holds the endpoint and starts the daemon on the first connection.
    let endpoint = dir.command(&["endpoint"]).output().unwrap();
    let endpoint = String::from_utf8(endpoint.stdout).unwrap();
    let rpc = dict
        .get("Sockets")
        .and_then(|v| v.as_dictionary())
        .and_then(|s| s.get("rpc"))
        .and_then(|v| v.as_dictionary())
        .unwrap();
    assert_eq!(
        rpc.get("SockPathName").and_then(|v| v.as_string()),
        Some(endpoint.trim())
    );
    assert_eq!(
        rpc.get("SockPathMode").and_then(|v| v.as_signed_integer()),
        Some(0o600)
    );
    assert!(dict.get("RunAtLoad").is_none(), "started on demand");
}

// ---------------------------------------------------------------------------------------
// /metrics, /healthz, /readyz
// ---------------------------------------------------------------------------------------

/// Parses the Prometheus text format strictly: every line a `# HELP`/`# TYPE`/`# UNIT`
/// comment, the closing `# EOF`, or `name{labels} value`, each sample of a declared
/// family. Returns the samples by `name{labels}`.
fn parse_prometheus(text: &str) -> BTreeMap<String, f64> {
    let mut families = Vec::new();
    let mut samples = BTreeMap::new();
    let mut eof = false;
    for line in text.lines() {
        assert!(!eof, "a line after # EOF: {line}");
        if line == "# EOF" {
            eof = true;
            continue;
        }
        if let Some(rest) = line.strip_prefix("# ") {
            let mut words = rest.splitn(3, ' ');
            let kind = words.next().unwrap();
            let name = words.next().unwrap();
            assert!(["HELP", "TYPE", "UNIT"].contains(&kind), "{line}");
            assert!(
                name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "{line}"
            );
            if kind == "TYPE" {
                let ty = words.next().unwrap();
                assert!(
                    [
                        "counter",
                        "gauge",
                        "histogram",
                        "info",
                        "summary",
                        "unknown"
                    ]
                    .contains(&ty),
                    "{line}"
                );
                families.push(name.to_owned());
            }
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap();
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("not a number: {line}")),
        };
        let name = series.split('{').next().unwrap();
        if let Some(labels) = series.strip_prefix(name)
            && !labels.is_empty()
        {
            {
                assert!(labels.starts_with('{') && labels.ends_with('}'), "{line}");
                for pair in labels[1..labels.len() - 1].split("\",") {
                    let (key, value) = pair.split_once("=\"").unwrap();
                    assert!(
                        key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                        "{line}"
                    );
                    assert!(!value.contains('\n'), "{line}");
                }
            }
        }
        assert!(
            families.iter().any(|f| name == f
                || ["_total", "_bucket", "_sum", "_count", "_created"]
                    .iter()
                    .any(|s| name.strip_suffix(s) == Some(f))),
            "a sample of no declared family: {line}"
        );
        samples.insert(series.to_owned(), value);
    }
    assert!(eof, "no # EOF");
    samples
}

async fn scrape(gw: &Gw, token: Option<&str>) -> (u16, String) {
    let mut request = http().get(format!("{}/metrics", gw.url));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[test]
fn metrics_parse_as_prometheus_text_and_their_counters_move_with_the_calls_made() {
    let gw = Gw::new();
    let token = gw.token("prometheus", "read");
    let status_ok = "zeroclaw_requests_total{method=\"status\",outcome=\"ok\"}";
    let unknown = "zeroclaw_requests_total{method=\"other\",outcome=\"error\"}";
    let sockets = "zeroclaw_connections_total{door=\"socket\"}";
    let before = block(async {
        // No token: refused, as every gateway route that reads the daemon is.
        let (status, _) = scrape(&gw, None).await;
        assert_eq!(status, 401);
        let (status, text) = scrape(&gw, Some(&token)).await;
        assert_eq!(status, 200, "{text}");
        parse_prometheus(&text)
    });
    let mut client = gw.env.daemon.initialized();
    for _ in 0..3 {
        client.call("status", json!({}));
    }
    let answer = client.request("no/such/method", json!({}));
    assert_eq!(error_code(&answer), -32601);
    drop(client);
    let after = block(async { parse_prometheus(&scrape(&gw, Some(&token)).await.1) });
    let get = |m: &BTreeMap<String, f64>, k: &str| m.get(k).copied().unwrap_or(0.0);
    assert_eq!(get(&after, status_ok) - get(&before, status_ok), 3.0);
    assert_eq!(get(&after, unknown) - get(&before, unknown), 1.0);
    assert!(get(&after, sockets) - get(&before, sockets) >= 1.0);
    let histogram = "zeroclaw_request_duration_seconds_count{method=\"status\"}";
    assert!(get(&after, histogram) - get(&before, histogram) >= 3.0);
    for gauge in [
        "zeroclaw_sessions_loaded",
        "zeroclaw_turns_running",
        "zeroclaw_approvals_waiting",
        "zeroclaw_store_size_bytes",
    ] {
        assert!(after.contains_key(gauge), "no {gauge}");
    }
    assert!(get(&after, "zeroclaw_store_size_bytes") > 0.0);
}

#[test]
fn metrics_public_on_a_loopback_gateway_needs_no_token() {
    let gw = Gw::with("metrics_public = true", "");
    let (status, text) = block(scrape(&gw, None));
    assert_eq!(status, 200, "{text}");
    parse_prometheus(&text);
}

#[cfg(unix)]
async fn health(gw: &Gw, path: &str) -> (u16, serde_json::Value) {
    json_of(
        http()
            .get(format!("{}{path}", gw.url))
            .send()
            .await
            .unwrap(),
    )
    .await
}

// Unix: a file the daemon holds open cannot be renamed away on Windows.
#[test]
#[cfg(unix)]
fn healthz_and_readyz_answer_without_a_token_and_readyz_turns_unready_without_the_store() {
    let gw = Gw::new();
    let (status, alive) = block(health(&gw, "/healthz"));
    assert_eq!((status, &alive), (200, &json!({"status": "alive"})));
    let (status, ready) = block(health(&gw, "/readyz"));
    assert_eq!(status, 200, "{ready}");
    assert_eq!(
        ready,
        json!({"status": "ready", "checks": {"store": "ok", "doors": "ok", "provider": "ok"}})
    );

    // The database file is taken away under the daemon (a clean-up gone wrong): what it
    // writes would go nowhere anyone reads, so it is not ready.
    let db = gw.env.dir.data_dir().join("zeroclaw.db");
    let away = gw.env.dir.path().join("zeroclaw.db.away");
    std::fs::rename(&db, &away).unwrap();
    let (status, unready) = block(health(&gw, "/readyz"));
    assert_eq!(status, 503, "{unready}");
    assert_eq!(unready["status"], "unready");
    assert_eq!(unready["checks"]["store"], "unavailable");
    // Nothing private: no path, no error text.
    assert!(!unready.to_string().contains('/'), "{unready}");
    // Still alive: the runtime answers.
    assert_eq!(block(health(&gw, "/healthz")).0, 200);

    std::fs::rename(&away, &db).unwrap();
    let (status, ready) = block(health(&gw, "/readyz"));
    assert_eq!(status, 200, "{ready}");
}

#[test]
fn the_service_docs_list_every_metric_the_daemon_serves() {
    let gw = Gw::new();
    let token = gw.token("docs", "read");
    let text = block(async { scrape(&gw, Some(&token)).await.1 });
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/service.md"),
    )
    .unwrap();
    for line in text.lines().filter(|l| l.starts_with("# TYPE ")) {
        let mut words = line.split(' ').skip(2);
        let (name, ty) = (words.next().unwrap(), words.next().unwrap());
        let shown = if ty == "counter" {
            format!("{name}_total")
        } else {
            name.to_owned()
        };
        assert!(
            doc.contains(&format!("| `{shown}` | {ty} |")),
            "docs/service.md has no row `| `{shown}` | {ty} |`"
        );
    }
}

/// Runs on Linux and, under Wine, as a Windows binary (scripts/windows-tests.sh): the logon
/// task's command line names this binary, the config dir and `daemon`.
#[test]
fn the_windows_logon_task_install_would_create_runs_the_daemon_of_this_config_dir() {
    let dir = TestDir::new();
    let out = dir
        .command(&[
            "service",
            "install",
            "--user",
            "--dry-run",
            "--platform",
            "windows",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let command = text
        .lines()
        .find_map(|l| l.strip_prefix("$ "))
        .unwrap_or_else(|| panic!("no command in:\n{text}"));
    assert!(
        command.starts_with("schtasks /Create /TN zeroclaw /SC ONLOGON /RL LIMITED /TR "),
        "{command}"
    );
    let config_dir = dir.config_dir();
    let expected = format!(
        "\"--config-dir\" \"{}\" \"daemon\" /F",
        config_dir.display()
    );
    assert!(
        command.ends_with(&expected),
        "{command}\nwanted the end: {expected}"
    );
}

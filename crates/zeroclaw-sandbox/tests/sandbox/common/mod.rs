//! The escape suite's harness: a fixture laid out like a user's machine (a workspace, a
//! directory outside it, the daemon's config and data dirs with a database, its sockets),
//! real `sh -c` commands run through a real sandbox, and a helper that the test binary
//! itself runs inside the sandbox for what a shell cannot do (connect a socket, ptrace).

use std::io::Read;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use zeroclaw_sandbox::{Mode, Policy, Prepared, Support};

/// What the victim file outside the workspace holds, and must still hold.
pub const ORIGINAL: &str = "original\n";
/// What the daemon's database and config hold: must never appear in a command's output.
pub const DB_SECRET: &str = "secret-database-row";
pub const CONFIG_SECRET: &str = "secret-config-key";

/// How long a command may run before the harness kills it and fails the test (a hang guard,
/// never a timing assertion).
const HANG_GUARD: Duration = Duration::from_secs(60);

pub struct Fixture {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// A directory outside the workspace, with `victim.txt`.
    pub outside: PathBuf,
    /// A writable root (workspace-write).
    pub extra: PathBuf,
    /// A home directory holding the config dir.
    pub home: PathBuf,
    /// The daemon's config dir (`home/.zeroclaw`, with `config.toml`).
    pub config_dir: PathBuf,
    /// The daemon's data dir (`config_dir/data`, with `zeroclaw.db` and `daemon.sock`).
    pub data_dir: PathBuf,
    /// A socket outside the hidden dirs, as `ZEROCLAW_SOCKET` can place it.
    pub socket: PathBuf,
    pub socket_listener: UnixListener,
    /// The default socket, inside the data dir.
    pub data_socket: PathBuf,
    pub data_socket_listener: UnixListener,
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::Builder::new()
            .prefix("zeroclaw-sandbox-test-")
            .tempdir()
            .unwrap();
        let root = dir.path().canonicalize().unwrap();
        let cwd = root.join("work");
        let outside = root.join("outside");
        let extra = root.join("extra");
        let home = root.join("home");
        let config_dir = home.join(".zeroclaw");
        let data_dir = config_dir.join("data");
        let run = root.join("run");
        for d in [&cwd, &outside, &extra, &data_dir, &run] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(outside.join("victim.txt"), ORIGINAL).unwrap();
        std::fs::write(home.join("notes.txt"), "notes\n").unwrap();
        std::fs::write(
            config_dir.join("config.toml"),
            format!("key = \"{CONFIG_SECRET}\"\n"),
        )
        .unwrap();
        std::fs::write(data_dir.join("zeroclaw.db"), DB_SECRET).unwrap();
        let socket = run.join("daemon.sock");
        let socket_listener = UnixListener::bind(&socket).unwrap();
        socket_listener.set_nonblocking(true).unwrap();
        let data_socket = data_dir.join("daemon.sock");
        let data_socket_listener = UnixListener::bind(&data_socket).unwrap();
        data_socket_listener.set_nonblocking(true).unwrap();
        Fixture {
            _dir: dir,
            root,
            cwd,
            outside,
            extra,
            home,
            config_dir,
            data_dir,
            socket,
            socket_listener,
            data_socket,
            data_socket_listener,
        }
    }

    /// The session's policy: the workspace, one writable root, the daemon's paths hidden.
    pub fn policy(&self, mode: Mode) -> Policy {
        Policy::new(mode, &self.cwd)
            .writable_root(&self.extra)
            .hide(&self.data_dir)
            .hide(&self.config_dir)
            .hide(&self.socket)
    }

    pub fn victim(&self) -> PathBuf {
        self.outside.join("victim.txt")
    }

    /// Panics unless the victim outside the workspace is untouched.
    pub fn assert_victim_intact(&self, what: &str) {
        let now = std::fs::read_to_string(self.victim()).unwrap_or_default();
        assert_eq!(
            now, ORIGINAL,
            "{what}: the file outside the workspace was changed"
        );
    }

    /// Panics if any connection reached the daemon's sockets.
    pub fn assert_no_connection(&self, what: &str) {
        for l in [&self.socket_listener, &self.data_socket_listener] {
            match l.accept() {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                other => panic!("{what}: a command reached the daemon's socket: {other:?}"),
            }
        }
    }

    /// Environment variables naming the fixture's paths, for the scripts.
    pub fn env(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("ROOT", self.root.clone()),
            ("OUT", self.outside.clone()),
            ("VICTIM", self.victim()),
            ("EXTRA", self.extra.clone()),
            ("HOMEDIR", self.home.clone()),
            ("CONFIG", self.config_dir.clone()),
            ("DATA", self.data_dir.clone()),
            ("SOCK", self.socket.clone()),
            ("DATASOCK", self.data_socket.clone()),
        ]
    }
}

/// The sandbox variants every escape is tried against: with a user namespace (where the
/// kernel allows one) and without (the fallback).
pub fn variants() -> Vec<(&'static str, Support)> {
    let support = support();
    let mut out = Vec::new();
    if support.user_namespaces() {
        out.push(("userns", support.clone()));
    } else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI's kernel allows user namespaces, but the probe found none: {}",
            support.gaps().join("; ")
        );
        eprintln!("NOTE: no user namespaces here; only the fallback is tested");
    }
    out.push(("no userns", support.without_user_namespaces()));
    out
}

/// This machine's support, probed once; the suite needs a sandbox.
pub fn support() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT
        .get_or_init(|| {
            let s = Support::probe();
            assert!(
                s.is_available(),
                "the escape suite needs a sandbox here: {s}"
            );
            s
        })
        .clone()
}

pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// Kept alive until the caller is done: it owns the command's temp dir.
    pub prepared: Prepared,
}

impl Run {
    /// stdout and stderr, for messages and `explain`.
    pub fn output(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    pub fn assert_ok(&self, what: &str) {
        assert!(
            self.status.success(),
            "{what}: the command failed ({}):\n{}",
            self.status,
            self.output()
        );
    }

    pub fn assert_failed(&self, what: &str) {
        assert!(
            !self.status.success(),
            "{what}: the command succeeded:\n{}",
            self.output()
        );
    }
}

/// Runs `script` with `sh -c` under `policy`, with the fixture's variables set.
pub fn run(fixture: &Fixture, policy: &Policy, support: &Support, script: &str) -> Run {
    let prepared = policy.prepare(support).unwrap();
    run_prepared(fixture, prepared, script)
}

/// Runs `script` with `sh -c` in an already prepared sandbox.
pub fn run_prepared(fixture: &Fixture, prepared: Prepared, script: &str) -> Run {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("HELPER", std::env::current_exe().unwrap());
    for (k, v) in fixture.env() {
        cmd.env(k, v);
    }
    prepared.install(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| prepared.spawn_error(e))
        .expect("spawning the sandboxed shell");
    let pid = child.id();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let guard = std::thread::spawn(move || {
        if done_rx.recv_timeout(HANG_GUARD).is_err() {
            // SAFETY: kills the hung child (not yet reaped: the waiter is still blocked).
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            return true;
        }
        false
    });
    let mut stdout = String::new();
    let mut stderr = String::new();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let _ = out.read_to_string(&mut stdout);
    stderr.push_str(&reader.join().unwrap());
    let status = child.wait().unwrap();
    let _ = done_tx.send(());
    assert!(!guard.join().unwrap(), "the command hung: {script}");
    Run {
        status,
        stdout,
        stderr,
        prepared,
    }
}

/// A line for a script that runs the helper (this test binary) with `action`, printing
/// `RESULT ok` or `RESULT err <errno>`.
pub fn helper(action: &str) -> String {
    format!(
        "ZC_SANDBOX_ACT='{action}' \"$HELPER\" --ignored --exact act::helper --nocapture \
         --test-threads 1 2>&1"
    )
}

/// The helper's result in `output`: `Ok(())`, or the errno.
pub fn helper_result(output: &str) -> Result<(), i32> {
    let line = output
        .lines()
        .find_map(|l| l.split_once("RESULT ").map(|(_, r)| r.trim()))
        .unwrap_or_else(|| panic!("the helper printed no result:\n{output}"));
    if line == "ok" {
        Ok(())
    } else {
        Err(line
            .strip_prefix("err ")
            .and_then(|e| e.trim().parse().ok())
            .unwrap_or_else(|| panic!("odd helper result: {line}")))
    }
}

/// Whether `program` is on the PATH (optional tools are skipped, and say so).
pub fn have(program: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

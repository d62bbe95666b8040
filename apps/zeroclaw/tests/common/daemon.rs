//! A temp dir, and the `zeroclaw daemon` process started in it with its stderr collected
//! line by line: the log lines are the events tests wait on.

use super::{Client, Conn, HANG_GUARD, Limits, bin, open_stream};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// A temp dir holding the config dir (`cfg/`), and with it the default data dir and socket.
pub struct TestDir {
    pub dir: tempfile::TempDir,
}

impl TestDir {
    pub fn new() -> Self {
        // Short names: a Unix socket path must fit in 107 bytes.
        let dir = tempfile::Builder::new()
            .prefix("zc")
            .tempdir_in(std::env::temp_dir())
            .unwrap();
        Self { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn config_dir(&self) -> PathBuf {
        self.dir.path().join("cfg")
    }

    /// The default data dir: `<config dir>/data`.
    pub fn data_dir(&self) -> PathBuf {
        self.config_dir().join("data")
    }

    /// The endpoint a daemon of this config dir listens on by default: `<data
    /// dir>/daemon.sock` on Unix, the pipe named after the data dir on Windows.
    pub fn default_endpoint(&self) -> PathBuf {
        #[cfg(unix)]
        return self.data_dir().join("daemon.sock");
        #[cfg(windows)]
        return PathBuf::from(zeroclaw_ipc::endpoint::pipe_name_for(&self.data_dir()));
    }

    /// Writes `<config dir>/config.toml`.
    pub fn write_config(&self, text: &str) {
        std::fs::create_dir_all(self.config_dir()).unwrap();
        std::fs::write(self.config_dir().join("config.toml"), text).unwrap();
    }

    /// `<config dir>/config.toml` as written, or "" before any.
    pub fn config_text(&self) -> String {
        std::fs::read_to_string(self.config_dir().join("config.toml")).unwrap_or_default()
    }

    /// `zeroclaw --config-dir <dir>/cfg <args>` with a clean environment.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin());
        cmd.arg("--config-dir").arg(self.config_dir()).args(args);
        cmd.env_remove("ZEROCLAW_SOCKET")
            .env_remove("ZEROCLAW_DATA_DIR")
            .env_remove("ZEROCLAW_CONFIG_DIR")
            .env("RUST_LOG", "info");
        cmd
    }

    /// Starts `zeroclaw daemon <args>` and waits until it listens.
    pub fn start(&self, args: &[&str]) -> Daemon {
        self.start_with(args, &[])
    }

    /// `start` with these environment variables set.
    pub fn start_with(&self, args: &[&str], env: &[(&str, &str)]) -> Daemon {
        self.start_limited(args, env, Limits::default())
    }

    /// `start_with`, with `limits` applied to the daemon process.
    pub fn start_limited(&self, args: &[&str], env: &[(&str, &str)], limits: Limits) -> Daemon {
        let daemon = self.spawn(args, env, limits);
        daemon.wait_for_log("listening");
        daemon
    }

    /// Spawns the daemon without waiting for it to listen (for daemons that must refuse).
    pub fn spawn_with(&self, args: &[&str], env: &[(&str, &str)]) -> Daemon {
        self.spawn(args, env, Limits::default())
    }

    fn spawn(&self, args: &[&str], env: &[(&str, &str)], limits: Limits) -> Daemon {
        let mut all = vec!["daemon"];
        all.extend_from_slice(args);
        // Test daemons never bind the gateway's default port (42617): parallel tests, and a
        // developer's own daemon, would collide on it. A test that wants a gateway says so
        // with a `[gateway]` table (port 0) or `--gateway ADDR`.
        let gateway_asked = args
            .iter()
            .any(|a| a.starts_with("--gateway") || *a == "--no-gateway")
            || self.config_text().contains("[gateway]");
        if !gateway_asked {
            all.push("--no-gateway");
        }
        let mut cmd = self.command(&all);
        let mut endpoint = self.default_endpoint();
        for (k, v) in env {
            cmd.env(k, v);
            if *k == "ZEROCLAW_SOCKET" {
                endpoint = PathBuf::from(v);
            }
        }
        limits.set_on(&mut cmd);
        self.spawn_command(cmd, endpoint)
    }

    /// Spawns `cmd` (a daemon, or a program that starts one: a service manager) with its
    /// stderr collected as the daemon's log; `endpoint` is where its clients connect.
    pub fn spawn_command(&self, mut cmd: Command, endpoint: PathBuf) -> Daemon {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = spawn_process(&mut cmd);
        let log = Arc::new(Log::default());
        let stderr = child.stderr.take().unwrap();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                sink.lines.lock().unwrap().0.push(line);
                sink.changed.notify_all();
            }
            sink.lines.lock().unwrap().1 = true;
            sink.changed.notify_all();
        });
        Daemon {
            child,
            endpoint,
            log,
            status: None,
        }
    }
}

/// Starts `cmd`; see [`start_retrying`].
pub fn spawn_process(cmd: &mut Command) -> std::process::Child {
    let what = format!("{cmd:?}");
    start_retrying(&what, || cmd.spawn())
}

/// Runs `start`, which starts a process described by `what`. Under Wine (the Windows tests),
/// `CreateProcess` now and then fails with ERROR_INTERNAL_ERROR (1359): Wine's
/// `NtCreateUserProcess` returns it when the new process ends before it has told wineserver
/// it started, which happens when many tests start processes at once on a loaded machine.
/// Nothing of the program ran; it is started again, at most three times in all. Any other
/// error, or a third 1359, fails the test.
pub fn start_retrying<T>(what: &str, mut start: impl FnMut() -> std::io::Result<T>) -> T {
    const WINE_START_FAILED: i32 = 1359;
    let mut attempt = 1;
    loop {
        match start() {
            Ok(started) => return started,
            Err(e)
                if cfg!(windows) && e.raw_os_error() == Some(WINE_START_FAILED) && attempt < 3 =>
            {
                eprintln!("starting {what} failed ({e}), attempt {attempt}; starting it again");
                attempt += 1;
            }
            Err(e) => panic!("cannot start {what}: {e}"),
        }
    }
}

/// Lines the daemon wrote to stderr, and whether stderr has ended; shared with the thread
/// that reads them.
#[derive(Default)]
struct Log {
    lines: Mutex<(Vec<String>, bool)>,
    changed: Condvar,
}

/// A running (or exited) daemon. Dropping it kills the process if it is still running.
pub struct Daemon {
    pub child: Child,
    pub endpoint: PathBuf,
    log: Arc<Log>,
    status: Option<ExitStatus>,
}

impl Daemon {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Blocks until a stderr line contains `needle` (searching from the start), and returns it.
    pub fn wait_for_log(&self, needle: &str) -> String {
        self.wait_for_log_after(0, needle).1
    }

    /// Like `wait_for_log`, but only lines after index `from`; returns (index, line).
    pub fn wait_for_log_after(&self, from: usize, needle: &str) -> (usize, String) {
        let mut found = None;
        self.wait_on_log(&format!("{needle:?}"), |lines| {
            found = lines
                .iter()
                .enumerate()
                .skip(from)
                .find(|(_, l)| l.contains(needle))
                .map(|(i, l)| (i, l.clone()));
            found.is_some()
        });
        found.unwrap()
    }

    /// Blocks until a stderr line contains one of `needles` (that line) or stderr ends
    /// (`None`: the process is gone without writing any of them).
    pub fn wait_for_any_log_or_exit(&self, needles: &[&str]) -> Option<String> {
        let deadline = Instant::now() + HANG_GUARD;
        let mut guard = self.lines();
        loop {
            let found = guard
                .0
                .iter()
                .find(|l| needles.iter().any(|n| l.contains(n)));
            if let Some(line) = found {
                return Some(line.clone());
            }
            if guard.1 {
                return None;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "none of {needles:?} in daemon stderr");
            guard = self.log.changed.wait_timeout(guard, left).unwrap().0;
        }
    }

    /// Blocks until at least `n` stderr lines contain `needle`.
    pub fn wait_for_log_count(&self, needle: &str, n: usize) {
        self.wait_on_log(&format!("{n} of {needle:?}"), |lines| {
            lines.iter().filter(|l| l.contains(needle)).count() >= n
        });
    }

    /// Blocks until every connection accepted so far has closed (its slot free: the line
    /// comes after).
    pub fn wait_for_connections_closed(&self) {
        self.wait_on_log("every connection closed", |lines| {
            let count = |needle: &str| lines.iter().filter(|l| l.contains(needle)).count();
            count("connection accepted") == count("connection closed")
        });
    }

    /// How many stderr lines so far contain `needle`.
    pub fn log_count(&self, needle: &str) -> usize {
        let guard = self.lines();
        guard.0.iter().filter(|l| l.contains(needle)).count()
    }

    pub fn log_len(&self) -> usize {
        self.lines().0.len()
    }

    pub fn log_text(&self) -> String {
        self.lines().0.join("\n")
    }

    /// Blocks until stderr is closed (the process is gone) and returns everything it wrote.
    pub fn wait_for_stderr_end(&self) -> String {
        let deadline = Instant::now() + HANG_GUARD;
        let mut guard = self.lines();
        while !guard.1 {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "daemon did not exit");
            guard = self.log.changed.wait_timeout(guard, left).unwrap().0;
        }
        guard.0.join("\n")
    }

    fn lines(&self) -> MutexGuard<'_, (Vec<String>, bool)> {
        self.log.lines.lock().unwrap()
    }

    /// Blocks (hang-guarded) until `done` holds for the lines so far; `what` names the wait
    /// in the failure message. Fails at once if stderr ends first.
    fn wait_on_log(&self, what: &str, mut done: impl FnMut(&[String]) -> bool) {
        let deadline = Instant::now() + HANG_GUARD;
        let mut guard = self.lines();
        while !done(&guard.0) {
            let text = || guard.0.join("\n");
            assert!(!guard.1, "daemon stderr ended without {what}:\n{}", text());
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "no {what} in daemon stderr:\n{}", text());
            guard = self.log.changed.wait_timeout(guard, left).unwrap().0;
        }
    }

    /// Kills the daemon at once (SIGKILL; TerminateProcess on Windows) and waits for it.
    pub fn kill(&mut self) -> ExitStatus {
        #[cfg(unix)]
        self.signal(rustix::process::Signal::KILL);
        #[cfg(windows)]
        self.child.kill().unwrap();
        self.wait_exit()
    }

    /// Stops the daemon in order and waits for it: SIGTERM on Unix; on Windows, which has
    /// no signal to send another console's process, the `shutdown` method (which stops it
    /// "as on SIGTERM").
    pub fn stop(&mut self) -> ExitStatus {
        #[cfg(unix)]
        self.signal(rustix::process::Signal::TERM);
        #[cfg(windows)]
        assert_eq!(self.initialized().call("shutdown", json!({})), json!({}));
        self.wait_exit()
    }

    /// Whether nothing listens at the endpoint any more: no socket file on Unix, no pipe of
    /// that name on Windows (opening one that exists would connect to it).
    pub fn endpoint_gone(&self) -> bool {
        #[cfg(unix)]
        return !self.endpoint.exists();
        #[cfg(windows)]
        return matches!(
            open_stream(&self.endpoint),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound
        );
    }

    #[cfg(unix)]
    pub fn signal(&self, signal: rustix::process::Signal) {
        let pid = rustix::process::Pid::from_raw(self.pid() as i32).unwrap();
        rustix::process::kill_process(pid, signal).unwrap();
    }

    /// Waits for the process to exit (hang-guarded) and returns its status. The end of its
    /// stderr is the event: the pipe closes when the process is gone.
    pub fn wait_exit(&mut self) -> ExitStatus {
        if let Some(status) = self.status {
            return status;
        }
        self.wait_for_stderr_end();
        let status = self.child.wait().unwrap();
        self.status = Some(status);
        status
    }

    pub fn is_running(&mut self) -> bool {
        self.status.is_none() && self.child.try_wait().unwrap().is_none()
    }

    /// Peak and current resident memory of the daemon, in KiB, from /proc.
    #[cfg(target_os = "linux")]
    pub fn memory_kib(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let field = |name: &str| {
            status
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
                .unwrap()
        };
        (field("VmHWM:"), field("VmRSS:"))
    }

    /// A raw connection that has not initialized.
    pub fn connect(&self) -> Conn {
        Conn::connect(&self.endpoint)
    }

    /// A raw connection that has completed `initialize`.
    pub fn initialized(&self) -> Conn {
        let mut conn = self.connect();
        conn.initialize();
        conn
    }

    /// A client that declared the elicitation capability.
    pub fn client(&self) -> Client {
        self.client_with(json!({"elicitation": {}}))
    }

    /// A client that declared these capabilities.
    pub fn client_with(&self, capabilities: Value) -> Client {
        Client::new(self.connect(), capabilities)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

//! Test harness: the real `zeroclaw` binary in a temp dir, and raw NDJSON connections to it.
//!
//! Steps are ordered by events the daemon reports (its log lines on stderr, its answers on
//! the socket, its exit), never by sleeping. Timeouts here are hang guards only.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Upper bound for anything a test waits on. Generous: CI machines are shared and slow.
pub const HANG_GUARD: Duration = Duration::from_secs(60);

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_zeroclaw")
}

/// Lines the daemon wrote to stderr, shared with a reader thread.
#[derive(Default)]
struct Log {
    lines: Mutex<(Vec<String>, bool)>,
    changed: Condvar,
}

pub struct Daemon {
    pub child: Child,
    pub dir: PathBuf,
    pub config_dir: PathBuf,
    pub endpoint: PathBuf,
    log: Arc<Log>,
    status: Option<ExitStatus>,
}

pub struct TestDir {
    pub dir: tempfile::TempDir,
}

impl TestDir {
    pub fn new() -> Self {
        // Short paths: a Unix socket path must fit in 107 bytes.
        let dir = tempfile::Builder::new()
            .prefix("zc")
            .tempdir_in("/tmp")
            .unwrap();
        Self { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn config_dir(&self) -> PathBuf {
        self.dir.path().join("cfg")
    }

    pub fn default_endpoint(&self) -> PathBuf {
        self.config_dir().join("data").join("daemon.sock")
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

    pub fn start_with(&self, args: &[&str], env: &[(&str, &str)]) -> Daemon {
        let daemon = self.spawn_with(args, env);
        daemon.wait_for_log("listening");
        daemon
    }

    /// Spawns the daemon without waiting for it to listen.
    pub fn spawn_with(&self, args: &[&str], env: &[(&str, &str)]) -> Daemon {
        let (cmd, endpoint) = self.daemon_command(args, env);
        self.spawn_command(cmd, endpoint)
    }

    /// `zeroclaw daemon <args>` with `env` set, and the endpoint it will listen on.
    pub fn daemon_command(&self, args: &[&str], env: &[(&str, &str)]) -> (Command, PathBuf) {
        let mut all = vec!["daemon"];
        all.extend_from_slice(args);
        let mut cmd = self.command(&all);
        let mut endpoint = self.default_endpoint();
        for (k, v) in env {
            cmd.env(k, v);
            if *k == "ZEROCLAW_SOCKET" {
                endpoint = PathBuf::from(v);
            }
        }
        (cmd, endpoint)
    }

    /// Starts `cmd` as the daemon, collecting its stderr.
    pub fn spawn_command(&self, mut cmd: Command, endpoint: PathBuf) -> Daemon {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = Arc::new(Log::default());
        let stderr = child.stderr.take().unwrap();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut guard = sink.lines.lock().unwrap();
                guard.0.push(line);
                sink.changed.notify_all();
            }
            sink.lines.lock().unwrap().1 = true;
            sink.changed.notify_all();
        });
        Daemon {
            child,
            dir: self.path().to_path_buf(),
            config_dir: self.config_dir(),
            endpoint,
            log,
            status: None,
        }
    }
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
        let deadline = Instant::now() + HANG_GUARD;
        let mut guard = self.log.lines.lock().unwrap();
        loop {
            if let Some((i, line)) = guard
                .0
                .iter()
                .enumerate()
                .skip(from)
                .find(|(_, l)| l.contains(needle))
            {
                return (i, line.clone());
            }
            if guard.1 {
                panic!(
                    "daemon stderr ended without {needle:?}:\n{}",
                    guard.0.join("\n")
                );
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "no {needle:?} in daemon stderr:\n{}",
                guard.0.join("\n")
            );
            guard = self.log.changed.wait_timeout(guard, left).unwrap().0;
        }
    }

    pub fn log_len(&self) -> usize {
        self.log.lines.lock().unwrap().0.len()
    }

    pub fn log_text(&self) -> String {
        self.log.lines.lock().unwrap().0.join("\n")
    }

    /// Blocks until stderr is closed (the process is gone) and returns everything it wrote.
    pub fn wait_for_stderr_end(&self) -> String {
        let deadline = Instant::now() + HANG_GUARD;
        let mut guard = self.log.lines.lock().unwrap();
        while !guard.1 {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "daemon did not exit");
            guard = self.log.changed.wait_timeout(guard, left).unwrap().0;
        }
        guard.0.join("\n")
    }

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

    pub fn connect(&self) -> Conn {
        Conn::connect(&self.endpoint)
    }

    /// A connection that has completed `initialize`.
    pub fn client(&self) -> Conn {
        let mut conn = self.connect();
        conn.initialize();
        conn
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

/// A raw NDJSON connection.
pub struct Conn {
    pub stream: UnixStream,
    reader: BufReader<UnixStream>,
    next_id: u64,
}

impl Conn {
    pub fn connect(endpoint: &Path) -> Self {
        let stream = UnixStream::connect(endpoint).unwrap();
        stream.set_read_timeout(Some(HANG_GUARD)).unwrap();
        let reader = BufReader::new(stream.try_clone().unwrap());
        Self {
            stream,
            reader,
            next_id: 1000,
        }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    pub fn send_line(&mut self, line: &str) {
        self.send_raw(format!("{line}\n").as_bytes());
    }

    pub fn send(&mut self, frame: &Value) {
        self.send_line(&frame.to_string());
    }

    /// The next frame from the daemon, parsed.
    pub fn recv(&mut self) -> Value {
        let line = self
            .recv_line()
            .expect("connection closed while waiting for a frame");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("daemon sent invalid JSON {line:?}: {e}"))
    }

    /// The next raw line, or `None` at end of stream.
    pub fn recv_line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.reader.read_line(&mut line).unwrap() {
            0 => None,
            _ => {
                assert!(line.ends_with('\n'), "frame without newline: {line:?}");
                line.pop();
                Some(line)
            }
        }
    }

    /// Whether the daemon closed the connection (reads EOF).
    pub fn at_eof(&mut self) -> bool {
        let mut buf = [0u8; 1];
        matches!(self.reader.read(&mut buf), Ok(0))
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params, "id": id}));
        let answer = self.recv();
        assert_eq!(answer["id"], json!(id), "answer for another id: {answer}");
        answer
    }

    /// Calls a method and returns its `result`, failing the test on an error.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let answer = self.request(method, params);
        assert!(answer.get("error").is_none(), "{method} failed: {answer}");
        answer["result"].clone()
    }

    pub fn initialize(&mut self) -> Value {
        self.call("initialize", json!({"protocolVersion": 1}))
    }
}

/// The error code of an answer, panicking if it is not an error.
pub fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {answer}"))
}

// =======================================================================================
// Hardening helpers (used by faults.rs, security.rs and soak.rs). One appended block: every
// name lives in `hardening`, so nothing here can clash with other helpers.
// =======================================================================================

pub mod hardening {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// Resource limits set on the daemon process between fork and exec.
    #[derive(Debug, Clone, Copy, Default)]
    pub struct Limits {
        /// RLIMIT_NOFILE (soft and hard).
        pub nofile: Option<u64>,
        /// RLIMIT_FSIZE in bytes (soft and hard): writes past it fail.
        pub fsize: Option<u64>,
        /// Sets SIGXFSZ to SIG_IGN (an ignored disposition survives exec), so a write past
        /// `fsize` fails with EFBIG instead of killing the process.
        pub ignore_sigxfsz: bool,
    }

    unsafe extern "C" {
        /// libc's `signal(2)`; std links libc, and it is async-signal-safe.
        fn signal(signum: i32, handler: usize) -> usize;
    }
    const SIG_IGN: usize = 1;
    const SIG_ERR: usize = usize::MAX;

    fn apply(limits: Limits) -> std::io::Result<()> {
        use rustix::process::{Resource, Rlimit, setrlimit};
        let set = |resource, n| {
            setrlimit(
                resource,
                Rlimit {
                    current: Some(n),
                    maximum: Some(n),
                },
            )
            .map_err(std::io::Error::from)
        };
        if let Some(n) = limits.nofile {
            set(Resource::Nofile, n)?;
        }
        if let Some(n) = limits.fsize {
            set(Resource::Fsize, n)?;
        }
        if limits.ignore_sigxfsz {
            // SAFETY: called in the child between fork and exec; signal() is
            // async-signal-safe and SIG_IGN installs no handler code.
            let previous = unsafe { signal(rustix::process::Signal::XFSZ.as_raw(), SIG_IGN) };
            if previous == SIG_ERR {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// Like `TestDir::spawn_with`, with `limits` applied to the daemon process.
    pub fn spawn_limited(
        dir: &TestDir,
        args: &[&str],
        env: &[(&str, &str)],
        limits: Limits,
    ) -> Daemon {
        let (mut cmd, endpoint) = dir.daemon_command(args, env);
        // SAFETY: the closure only makes raw syscalls (setrlimit, signal); it allocates
        // nothing and takes no locks.
        unsafe {
            cmd.pre_exec(move || apply(limits));
        }
        dir.spawn_command(cmd, endpoint)
    }

    /// `spawn_limited`, then waits until the daemon listens.
    pub fn start_limited(
        dir: &TestDir,
        args: &[&str],
        env: &[(&str, &str)],
        limits: Limits,
    ) -> Daemon {
        let daemon = spawn_limited(dir, args, env, limits);
        daemon.wait_for_log("listening");
        daemon
    }

    /// How many stderr lines so far contain `needle`.
    pub fn log_count(daemon: &Daemon, needle: &str) -> usize {
        let guard = daemon.log.lines.lock().unwrap();
        guard.0.iter().filter(|l| l.contains(needle)).count()
    }

    /// Blocks until at least `n` stderr lines contain `needle` (hang-guarded).
    pub fn wait_for_log_count(daemon: &Daemon, needle: &str, n: usize) {
        let deadline = Instant::now() + HANG_GUARD;
        let mut guard = daemon.log.lines.lock().unwrap();
        loop {
            let seen = guard.0.iter().filter(|l| l.contains(needle)).count();
            if seen >= n {
                return;
            }
            assert!(
                !guard.1,
                "daemon stderr ended with {seen} of {n} {needle:?}"
            );
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "only {seen} of {n} {needle:?} in daemon stderr"
            );
            guard = daemon.log.changed.wait_timeout(guard, left).unwrap().0;
        }
    }

    /// `config.toml` for a daemon talking to a fake provider at `base_url`: model "fake", no
    /// retries, `idle_timeout_secs` as given, `[approvals] bash = "allow"` unless `rest`
    /// has an `[approvals]` table, then `rest` (more tables).
    pub fn config_for(base_url: &str, idle_timeout_secs: u64, rest: &str) -> String {
        let mut text = format!(
            "[provider]\nbase_url = {base_url:?}\nmodel = \"fake\"\nmax_retries = 0\nconnect_timeout_secs = 5\nidle_timeout_secs = {idle_timeout_secs}\n"
        );
        if !rest.contains("[approvals]") {
            text.push_str("[approvals]\nbash = \"allow\"\n");
        }
        text.push_str(rest);
        text.push('\n');
        text
    }

    /// Writes `<config dir>/config.toml`.
    pub fn write_config(dir: &TestDir, text: &str) {
        std::fs::create_dir_all(dir.config_dir()).unwrap();
        std::fs::write(dir.config_dir().join("config.toml"), text).unwrap();
    }

    static NEXT_ID: AtomicU64 = AtomicU64::new(1);

    /// Sends a request with a fresh string id (`hz-<n>`) and returns that id.
    pub fn send_request(conn: &mut Conn, method: &str, params: Value) -> Value {
        let id = json!(format!("hz-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed)));
        conn.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// `initialize` with these capabilities.
    pub fn initialize_with(conn: &mut Conn, capabilities: Value) -> Value {
        conn.call(
            "initialize",
            json!({"protocolVersion": 1, "clientInfo": {"name": "hardening-test", "version": "0"}, "capabilities": capabilities}),
        )
    }

    /// Reads frames until one matches `pred`; returns it and every frame read before it.
    pub fn read_until(conn: &mut Conn, pred: impl Fn(&Value) -> bool) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let frame = conn.recv();
            if pred(&frame) {
                return (frame, before);
            }
            before.push(frame);
        }
    }

    pub fn is_answer_to(frame: &Value, id: &Value) -> bool {
        frame.get("method").is_none() && frame.get("id") == Some(id)
    }

    /// The `session/update` params of this type in `frames`.
    pub fn updates<'a>(frames: &'a [Value], kind: &str) -> Vec<&'a Value> {
        frames
            .iter()
            .filter(|f| f["method"] == "session/update" && f["params"]["type"] == kind)
            .map(|f| &f["params"])
            .collect()
    }

    /// Reads until the answer to `id`; returns it and the frames (events, requests) before.
    pub fn answer_of(conn: &mut Conn, id: &Value) -> (Value, Vec<Value>) {
        read_until(conn, |f| is_answer_to(f, id))
    }

    /// `session/new` in `cwd`; returns the session id.
    pub fn new_session(conn: &mut Conn, cwd: &Path) -> String {
        let result = conn.call("session/new", json!({"cwd": cwd}));
        result["sessionId"].as_str().unwrap().to_owned()
    }

    /// Sends a prompt and reads until its answer: (answer frame, frames before it).
    pub fn prompt(conn: &mut Conn, session: &str, text: &str) -> (Value, Vec<Value>) {
        let id = send_request(
            conn,
            "session/prompt",
            json!({"sessionId": session, "prompt": text}),
        );
        answer_of(conn, &id)
    }

    /// `prompt` that must succeed; returns its result.
    pub fn prompt_ok(conn: &mut Conn, session: &str, text: &str) -> Value {
        let (answer, _) = prompt(conn, session, text);
        assert!(answer.get("error").is_none(), "the prompt failed: {answer}");
        answer["result"].clone()
    }

    /// All of a session's messages (`session/messages`, up to 1000).
    pub fn messages(conn: &mut Conn, session: &str) -> Vec<Value> {
        let result = conn.call(
            "session/messages",
            json!({"sessionId": session, "limit": 1000}),
        );
        result["messages"].as_array().unwrap().clone()
    }

    /// The `kind` of each message.
    pub fn kinds(messages: &[Value]) -> Vec<&str> {
        messages
            .iter()
            .map(|m| m["kind"].as_str().unwrap())
            .collect()
    }

    /// Whether this process runs as root.
    pub fn is_root() -> bool {
        rustix::process::geteuid().is_root()
    }

    /// `setpriv` running `program args` as nobody:nogroup, or `None` (with the reason
    /// printed) when this cannot be done here: not root, or no `setpriv`.
    pub fn as_nobody(program: &str, args: &[&str]) -> Option<Command> {
        if !is_root() {
            eprintln!("skipped: needs root to run a process as another user");
            return None;
        }
        let probe = Command::new("setpriv").arg("--version").output();
        if !probe.is_ok_and(|o| o.status.success()) {
            eprintln!("skipped: setpriv (util-linux) is not installed");
            return None;
        }
        let mut cmd = Command::new("setpriv");
        cmd.args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            "--",
            program,
        ])
        .args(args);
        Some(cmd)
    }
}

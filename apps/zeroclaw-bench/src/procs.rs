//! The two servers under test as child processes: the real daemon and the floor (this
//! binary in `--floor-server` mode). Start, wait until the socket accepts, read RSS, stop.

use std::fs::File;
use std::io::{self, BufRead, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to start accepting, or to exit when asked.
const START_GUARD: Duration = Duration::from_secs(30);
const STOP_GUARD: Duration = Duration::from_secs(15);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Daemon,
    Floor,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Daemon => "daemon",
            Kind::Floor => "floor",
        }
    }
}

/// How to start either server, and where.
#[derive(Debug, Clone)]
pub struct Launcher {
    pub daemon_bin: PathBuf,
    pub bench_bin: PathBuf,
    /// `--config-dir` of the daemon; its socket is `<config dir>/data/daemon.sock`.
    pub config_dir: PathBuf,
    pub floor_socket: PathBuf,
    pub log: PathBuf,
}

impl Launcher {
    pub fn socket(&self, kind: Kind) -> PathBuf {
        match kind {
            Kind::Daemon => daemon_socket(&self.config_dir),
            Kind::Floor => self.floor_socket.clone(),
        }
    }

    /// The command that starts `kind`, logging to the run's log file.
    pub fn command(&self, kind: Kind, config_dir: &Path, ephemeral: bool) -> io::Result<Command> {
        let log = File::options().create(true).append(true).open(&self.log)?;
        let mut cmd = match kind {
            Kind::Daemon => {
                let mut cmd = Command::new(&self.daemon_bin);
                cmd.arg("--config-dir").arg(config_dir).arg("daemon");
                if ephemeral {
                    cmd.arg("--ephemeral");
                }
                cmd
            }
            Kind::Floor => {
                let mut cmd = Command::new(&self.bench_bin);
                cmd.arg("--floor-server").arg(&self.floor_socket);
                cmd
            }
        };
        cmd.env_remove("ZEROCLAW_SOCKET")
            .env_remove("ZEROCLAW_DATA_DIR")
            .env_remove("ZEROCLAW_CONFIG_DIR")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        Ok(cmd)
    }

    /// Starts `kind` and waits until its socket accepts a connection.
    pub fn start(&self, kind: Kind) -> io::Result<Server> {
        let mut server = self.spawn_in(kind, &self.config_dir, false)?;
        server.wait_accepting()?;
        Ok(server)
    }

    /// Starts `kind` (the daemon with `config_dir`) without waiting for it.
    pub fn spawn_in(&self, kind: Kind, config_dir: &Path, ephemeral: bool) -> io::Result<Server> {
        let socket = match kind {
            Kind::Daemon => daemon_socket(config_dir),
            Kind::Floor => self.floor_socket.clone(),
        };
        if kind == Kind::Floor {
            let _ = std::fs::remove_file(&socket);
        }
        let child = self.command(kind, config_dir, ephemeral)?.spawn()?;
        Ok(Server {
            kind,
            child,
            socket,
            log: self.log.clone(),
            exited: None,
        })
    }
}

impl Launcher {
    /// Starts the replay floor (this binary with `--replay-floor-server SOCKET --replay-floor-db
    /// DB`) and waits until its socket accepts.
    pub fn start_replay_floor(&self, socket: &Path, db: &Path) -> io::Result<Server> {
        let log = File::options().create(true).append(true).open(&self.log)?;
        let _ = std::fs::remove_file(socket);
        let child = Command::new(&self.bench_bin)
            .arg("--replay-floor-server")
            .arg(socket)
            .arg("--replay-floor-db")
            .arg(db)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()?;
        let mut server = Server {
            kind: Kind::Floor,
            child,
            socket: socket.to_path_buf(),
            log: self.log.clone(),
            exited: None,
        };
        server.wait_accepting()?;
        Ok(server)
    }
}

pub fn daemon_socket(config_dir: &Path) -> PathBuf {
    config_dir.join("data").join("daemon.sock")
}

/// A running server; stopped (and waited for) when dropped.
pub struct Server {
    pub kind: Kind,
    pub child: Child,
    pub socket: PathBuf,
    log: PathBuf,
    exited: Option<ExitStatus>,
}

impl Server {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Polls `connect` until it succeeds (then closes that connection).
    pub fn wait_accepting(&mut self) -> io::Result<Duration> {
        let started = Instant::now();
        self.connect_when_accepting()?;
        Ok(started.elapsed())
    }

    /// Connects as soon as the server accepts, and keeps that connection. (An ephemeral
    /// daemon must be probed this way: a probe that connected and left would be its first
    /// client, and its exit timer would run from there.)
    pub fn connect_when_accepting(&mut self) -> io::Result<UnixStream> {
        let started = Instant::now();
        loop {
            if let Ok(stream) = UnixStream::connect(&self.socket) {
                return Ok(stream);
            }
            if let Some(status) = self.child.try_wait()? {
                self.exited = Some(status);
                return Err(io::Error::other(format!(
                    "the {} exited ({status}) before accepting on {}{}",
                    self.kind.name(),
                    self.socket.display(),
                    log_tail(&self.log)
                )));
            }
            if started.elapsed() > START_GUARD {
                return Err(io::Error::other(format!(
                    "the {} did not accept on {} within {START_GUARD:?}{}",
                    self.kind.name(),
                    self.socket.display(),
                    log_tail(&self.log)
                )));
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    /// Resident set size in bytes, from `/proc/<pid>/status`.
    pub fn rss(&self) -> io::Result<u64> {
        rss_of(self.pid())
    }

    /// Waits for the process to exit on its own; returns how long that took.
    pub fn wait_exit(&mut self) -> io::Result<Duration> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait()? {
                self.exited = Some(status);
                return Ok(started.elapsed());
            }
            if started.elapsed() > STOP_GUARD {
                return Err(io::Error::other(format!(
                    "the {} did not exit within {STOP_GUARD:?}",
                    self.kind.name()
                )));
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    /// `what` failed with `error`: said with the server's exit status if it has exited,
    /// and the end of its log.
    pub fn failure(&mut self, what: &str, error: io::Error) -> String {
        let exited = match self.child.try_wait() {
            Ok(Some(status)) => format!(" (the {} exited: {status})", self.kind.name()),
            _ => String::new(),
        };
        format!("{what}: {error}{exited}{}", log_tail(&self.log))
    }

    /// Asks the process to stop (SIGTERM, the daemon's orderly path) and waits.
    pub fn stop(mut self) -> io::Result<ExitStatus> {
        self.terminate()
    }

    fn terminate(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.exited {
            return Ok(status);
        }
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + STOP_GUARD;
        loop {
            if let Some(status) = self.child.try_wait()? {
                self.exited = Some(status);
                return Ok(status);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let status = self.child.wait()?;
                self.exited = Some(status);
                return Err(io::Error::other(format!(
                    "the {} did not exit within {STOP_GUARD:?} of SIGTERM; killed",
                    self.kind.name()
                )));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.terminate();
    }
}

pub fn rss_of(pid: u32) -> io::Result<u64> {
    status_kib(pid, "VmRSS:")
}

/// Peak resident set size in bytes since the process started (`VmHWM`).
pub fn peak_rss_of(pid: u32) -> io::Result<u64> {
    status_kib(pid, "VmHWM:")
}

/// A `kB` field of `/proc/<pid>/status`, in bytes.
fn status_kib(pid: u32, field: &str) -> io::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map(|kib| kib * 1024)
        .ok_or_else(|| io::Error::other(format!("no {field} in /proc/{pid}/status")))
}

/// The last lines of the log, for an error message.
pub fn log_tail(log: &Path) -> String {
    let Ok(mut file) = File::open(log) else {
        return String::new();
    };
    let mut text = String::new();
    if file.read_to_string(&mut text).is_err() {
        return String::new();
    }
    // Connection bookkeeping would crowd out what matters.
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("connection accepted") && !l.contains("connection closed"))
        .collect();
    let tail = lines[lines.len().saturating_sub(15)..].join("\n  ");
    if tail.is_empty() {
        String::new()
    } else {
        format!("; the log ({}) ends:\n  {tail}", log.display())
    }
}

/// Raises the soft RLIMIT_NOFILE to the hard limit. Children started afterwards inherit
/// it. Returns the soft limit now in force.
pub fn raise_nofile() -> u64 {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let raised = Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    if limit.current != limit.maximum && setrlimit(Resource::Nofile, raised).is_ok() {
        return limit.maximum.unwrap_or(u64::MAX);
    }
    limit.current.unwrap_or(u64::MAX)
}

/// A blocking `initialize` on a connected std socket (for the start-up measurements, which
/// run outside the async client); returns the stream.
pub fn initialize_on(mut stream: UnixStream) -> io::Result<UnixStream> {
    stream.set_read_timeout(Some(START_GUARD))?;
    let mut line = Vec::new();
    crate::client::push_request(&mut line, "initialize", crate::client::INITIALIZE_PARAMS, 1);
    stream.write_all(&line)?;
    let mut reader = io::BufReader::new(stream.try_clone()?);
    let mut answer = String::new();
    reader.read_line(&mut answer)?;
    if !answer.contains("\"result\"") {
        return Err(io::Error::other(format!(
            "initialize failed: {}",
            answer.trim()
        )));
    }
    Ok(stream)
}

/// CPU time the process has used so far, in ns: the sum of its threads' run time from
/// `/proc/<pid>/task/*/schedstat` (nanosecond resolution), or, where that is missing,
/// utime + stime from `/proc/<pid>/stat` (10 ms ticks).
pub fn cpu_ns(pid: u32) -> io::Result<u64> {
    let mut total = 0u64;
    let mut any = false;
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            let Ok(text) = std::fs::read_to_string(task.path().join("schedstat")) else {
                continue;
            };
            if let Some(ns) = text
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
            {
                total += ns;
                any = true;
            }
        }
    }
    if any && total > 0 {
        return Ok(total);
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the `(comm)`, which may itself hold spaces: utime is the 12th, stime
    // the 13th of those.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Ok((ticks(11) + ticks(12)) * 10_000_000)
}

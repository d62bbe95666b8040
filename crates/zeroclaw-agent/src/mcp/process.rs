//! A stdio server's child process: started in its own process group (Unix) with the
//! daemon's secrets scrubbed from its environment as for bash, recorded for reaping after
//! a SIGKILLed daemon (`tools/orphans.rs`), its stderr logged at debug (rate-limited), and
//! its whole group killed when the server stops or the daemon exits.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::Instant;

use super::Settings;
use crate::config::McpServerConfig;
use crate::tools::orphans;

/// Lines of a server's stderr logged per window; the rest are counted and summarised.
const STDERR_LINES: u32 = 20;
const STDERR_WINDOW: Duration = Duration::from_secs(10);
const STDERR_LINE_BYTES: usize = 2048;

/// The child, its group killed (and the record cleared) on drop unless reaped first.
pub struct ChildGuard {
    child: Child,
    #[cfg(unix)]
    pgid: Option<rustix::process::Pid>,
    record: orphans::Record,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
}

impl ChildGuard {
    pub fn pipes(&mut self) -> (Option<ChildStdout>, Option<ChildStdin>) {
        (self.stdout.take(), self.stdin.take())
    }

    fn kill_group(&self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid {
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
    }

    /// Kills the group and reaps the child.
    pub async fn kill(mut self) {
        self.kill_group();
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
        #[cfg(unix)]
        {
            self.pgid = None;
        }
        self.record.clear();
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.kill_group();
    }
}

pub fn spawn(
    command: &str,
    config: &McpServerConfig,
    env: Vec<(String, String)>,
    settings: &Settings,
) -> Result<ChildGuard, String> {
    #[cfg(unix)]
    crate::tools::scrub::protect_process_files();
    let mut cmd = Command::new(command);
    cmd.args(&config.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    for name in settings.scrub.removed() {
        cmd.env_remove(name);
    }
    // What the user wrote for this server is theirs to pass, scrubbed names included.
    cmd.envs(env);
    if let Some(cwd) = config.cwd.as_ref().or(settings.cwd.as_ref()) {
        cmd.current_dir(cwd);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {command:?}: {e}"))?;
    let id = child.id();
    let record = orphans::Record::new(
        settings.records.as_deref().filter(|_| id.is_some()),
        id.unwrap_or(0),
    );
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(log_stderr(config.name.clone(), stderr));
    }
    Ok(ChildGuard {
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        #[cfg(unix)]
        pgid: id
            .and_then(|id| i32::try_from(id).ok())
            .and_then(rustix::process::Pid::from_raw),
        record,
        child,
    })
}

/// Logs the server's stderr at debug, at most `STDERR_LINES` per `STDERR_WINDOW`, each
/// line cut to `STDERR_LINE_BYTES` (a server writing without newlines costs no memory).
async fn log_stderr(server: String, stderr: tokio::process::ChildStderr) {
    let mut reader = tokio::io::BufReader::new(stderr);
    let mut window = Instant::now();
    let (mut logged, mut dropped) = (0u32, 0u64);
    let mut line = Vec::with_capacity(STDERR_LINE_BYTES);
    loop {
        let chunk = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(chunk) => chunk,
        };
        let (taken, ended) = match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (chunk.len(), false),
        };
        let room = STDERR_LINE_BYTES.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..taken.min(room)]);
        reader.consume(taken);
        if !ended {
            continue;
        }
        let text = String::from_utf8_lossy(&line).trim_end().to_owned();
        line.clear();
        if window.elapsed() >= STDERR_WINDOW {
            if dropped > 0 {
                tracing::debug!(server = %server, dropped, "MCP server stderr lines not logged");
            }
            window = Instant::now();
            (logged, dropped) = (0, 0);
        }
        if logged < STDERR_LINES {
            logged += 1;
            tracing::debug!(server = %server, "stderr: {text}");
        } else {
            dropped += 1;
        }
    }
}

//! The `bash` tool: run a shell command, capture stdout/stderr, enforce a time limit.
//!
//! On unix the shell is the leader of its own process group, so a time-out or a
//! cancellation kills everything it started (`kill(-pgid, SIGKILL)`), not only the
//! shell; on Linux also its descendants that left the group (`descendants.rs`). Output is read concurrently from both pipes; beyond the cap it is still read
//! (and dropped) so the child never blocks on a full pipe. Once the shell has exited,
//! pipes held open by background grandchildren are given a short grace and then
//! abandoned.

use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::time::Instant;

use super::preview::PreviewAt;
use super::spill::Spill;
use super::text::{utf8_head, utf8_tail};
use super::{Tool, ToolContext, ToolDef, ToolOutput, orphans};
use zeroclaw_protocol::events::ApprovalPreview;

/// How long to keep reading after the shell exited while a pipe is still open.
const PIPE_GRACE: Duration = Duration::from_millis(500);
const READ_CHUNK: usize = 16 * 1024;

pub(super) struct Bash;

#[derive(Deserialize)]
pub(super) struct Args {
    command: String,
    /// At least 1: the schema's `minimum` is checked before decoding.
    timeout_secs: Option<u64>,
}

impl Tool for Bash {
    type Args = Args;

    fn definition(&self) -> ToolDef {
        ToolDef {
            name: "bash".into(),
            description:
                "Run a shell command with `bash -c` in the session's working directory and \
                return its output. stdin is empty (/dev/null), so interactive programs will not \
                work; pass flags such as `--yes` or `--no-pager` instead. stdout and stderr are \
                both captured; the result ends with `[exit code N]`. Long output keeps only its \
                beginning and end. The command and everything it starts are killed when the time \
                limit expires. Background processes (`cmd &`) may keep running after the command \
                exits, but their later output is not captured."
                    .into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "command": {
                        "type": "string",
                        "description": "The command line to run, e.g. `cargo test 2>&1 | tail -50`. \
                            Runs in the working directory; use `cd dir && ...` to run elsewhere."
                    },
                    "timeout_secs": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "Time limit in seconds (default 120, at most 600). The whole \
                            process group is killed when it expires."
                    }
                },
                "required": ["command"],
                "additionalProperties": false
            }),
            read_only: false,
        }
    }

    fn check(&self, args: &Args) -> Result<(), String> {
        if args.command.trim().is_empty() {
            return Err("`command` must not be empty".into());
        }
        Ok(())
    }

    async fn preview(&self, args: Args, at: &PreviewAt) -> Option<ApprovalPreview> {
        Some(ApprovalPreview::Command {
            command: args.command,
            cwd: at.cwd.display().to_string(),
        })
    }

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let timeout = args
            .timeout_secs
            .map_or(ctx.limits.bash_default_timeout, Duration::from_secs)
            .min(ctx.limits.bash_max_timeout);
        match execute(&args.command, timeout, ctx).await {
            Ok(out) => out,
            Err(e) => ToolOutput::error(format!("bash: {e}")),
        }
    }
}

/// Why the wait ended before the shell exited on its own.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stopped {
    TimedOut,
    Cancelled,
}

async fn execute(
    command: &str,
    timeout: Duration,
    ctx: &ToolContext,
) -> std::io::Result<ToolOutput> {
    let mut child = spawn(command, ctx)?;
    // Armed until the shell is reaped: if this future is dropped mid-run, the group dies.
    let mut guard = GroupGuard::new(&child, ctx);
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();

    let half = ctx.limits.output_limit_bytes / 2;
    let mut out_cap = Capture::new(half, ctx.limits.output_limit_bytes - half);
    let mut err_cap = Capture::new(half, ctx.limits.output_limit_bytes - half);
    // Once the output passes what the result holds, all of it goes to a file as well.
    let mut spill: Option<Spill> = None;
    let limit = ctx.limits.output_limit_bytes;
    let mut out_buf = vec![0u8; READ_CHUNK];
    let mut err_buf = vec![0u8; READ_CHUNK];

    let deadline = Instant::now() + timeout;
    let mut status: Option<ExitStatus> = None;
    let mut stopped: Option<Stopped> = None;
    let mut grace_until: Option<Instant> = None;
    let mut pipes_abandoned = false;

    loop {
        if status.is_some() && stdout.is_none() && stderr.is_none() {
            break;
        }
        tokio::select! {
            r = read_some(&mut stdout, &mut out_buf) => {
                match r {
                    Some(n) => {
                        save(&mut spill, ctx, limit, [&out_cap, &err_cap], &out_buf[..n]);
                        out_cap.push(&out_buf[..n]);
                    }
                    None => stdout = None,
                }
            }
            r = read_some(&mut stderr, &mut err_buf) => {
                match r {
                    Some(n) => {
                        save(&mut spill, ctx, limit, [&out_cap, &err_cap], &err_buf[..n]);
                        err_cap.push(&err_buf[..n]);
                    }
                    None => stderr = None,
                }
            }
            s = child.wait(), if status.is_none() => {
                status = Some(s?);
                guard.disarm();
                grace_until = Some(Instant::now() + PIPE_GRACE);
            }
            () = tokio::time::sleep_until(deadline), if status.is_none() => {
                stopped = Some(Stopped::TimedOut);
                status = Some(kill_and_reap(&mut child, &mut guard).await?);
                grace_until = Some(Instant::now() + PIPE_GRACE);
            }
            () = ctx.cancel.cancelled(), if status.is_none() => {
                stopped = Some(Stopped::Cancelled);
                status = Some(kill_and_reap(&mut child, &mut guard).await?);
                grace_until = Some(Instant::now() + PIPE_GRACE);
            }
            () = sleep_until_opt(grace_until) => {
                pipes_abandoned = true;
                break;
            }
        }
    }
    // Dropping the read ends here; a grandchild that still writes gets EPIPE/SIGPIPE.
    drop(stdout);
    drop(stderr);

    let mut text = String::new();
    let (out_budget, err_budget) =
        split_budget(ctx.limits.output_limit_bytes, out_cap.total, err_cap.total);
    let out_text = out_cap.render(out_budget);
    text.push_str(&out_text);
    if err_cap.total > 0 {
        end_line(&mut text);
        text.push_str("[stderr]\n");
        text.push_str(&err_cap.render(err_budget));
    }
    if pipes_abandoned {
        end_line(&mut text);
        text.push_str(&format!(
            "[note: the command exited but a background process still holds stdout/stderr open; \
             stopped reading after {} ms]\n",
            PIPE_GRACE.as_millis()
        ));
    }
    if let Some(spill) = &spill {
        end_line(&mut text);
        text.push_str(&spill.note());
    }
    end_line(&mut text);
    let is_error = match stopped {
        Some(Stopped::TimedOut) => {
            text.push_str(&format!(
                "[timed out after {} s; the process group was killed]",
                timeout.as_secs()
            ));
            true
        }
        Some(Stopped::Cancelled) => {
            text.push_str("[cancelled; the process group was killed]");
            true
        }
        None => {
            let (line, ok) = describe_status(status);
            text.push_str(&line);
            !ok
        }
    };
    Ok(ToolOutput { text, is_error })
}

/// Saves `data` (just read) to the call's spill file, creating it the first time the
/// output passes `limit`: then with what the captures hold, which is everything so far (they
/// hold `limit` bytes before dropping any), stdout's first.
fn save(
    spill: &mut Option<Spill>,
    ctx: &ToolContext,
    limit: usize,
    caps: [&Capture; 2],
    data: &[u8],
) {
    if spill.is_none() {
        let Some(to) = &ctx.spill else { return };
        let total: usize = caps.iter().map(|c| c.total).sum();
        if total + data.len() <= limit {
            return;
        }
        let mut created = Spill::create(to);
        for cap in caps {
            created.write(&cap.whole());
        }
        *spill = Some(created);
    }
    if let Some(spill) = spill {
        spill.write(data);
    }
}

fn end_line(text: &mut String) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
}

/// Reads one chunk; `None` at EOF or on error (the pipe is then closed by the caller).
/// Pends forever once the pipe is gone, so a `select!` arm on it simply never fires.
async fn read_some<R: AsyncRead + Unpin>(pipe: &mut Option<R>, buf: &mut [u8]) -> Option<usize> {
    match pipe {
        Some(p) => match p.read(buf).await {
            Ok(0) | Err(_) => None,
            Ok(n) => Some(n),
        },
        None => std::future::pending().await,
    }
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn describe_status(status: Option<ExitStatus>) -> (String, bool) {
    let Some(status) = status else {
        return ("[exit status unknown]".to_string(), false);
    };
    if let Some(code) = status.code() {
        return (format!("[exit code {code}]"), code == 0);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return (format!("[killed by signal {sig}]"), false);
        }
    }
    (format!("[{status}]"), false)
}

#[cfg(unix)]
fn spawn(command: &str, ctx: &ToolContext) -> std::io::Result<Child> {
    super::scrub::protect_process_files();
    let removed = ctx.scrub.removed();
    let build = |shell: &str| {
        let mut cmd = Command::new(shell);
        cmd.arg("-c")
            .arg(command)
            .current_dir(&ctx.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        for name in &removed {
            cmd.env_remove(name);
        }
        cmd
    };
    match build("bash").spawn() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Distinguish "no bash" from "no such working directory".
            if !ctx.cwd.is_dir() {
                return Err(cwd_error(ctx));
            }
            build("sh").spawn().map_err(|e| spawn_error(e, ctx))
        }
        other => other.map_err(|e| spawn_error(e, ctx)),
    }
}

#[cfg(windows)]
fn spawn(command: &str, ctx: &ToolContext) -> std::io::Result<Child> {
    let mut cmd = Command::new("cmd");
    cmd.arg("/C")
        .raw_arg(command)
        .current_dir(&ctx.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for name in ctx.scrub.removed() {
        cmd.env_remove(name);
    }
    cmd.spawn().map_err(|e| spawn_error(e, ctx))
}

fn cwd_error(ctx: &ToolContext) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::NotFound,
        format!(
            "working directory {} does not exist or is not a directory",
            ctx.cwd.display()
        ),
    )
}

fn spawn_error(e: std::io::Error, ctx: &ToolContext) -> std::io::Error {
    if e.kind() == std::io::ErrorKind::NotFound && !ctx.cwd.is_dir() {
        return cwd_error(ctx);
    }
    std::io::Error::new(e.kind(), format!("could not start the shell: {e}"))
}

/// Kills the whole process group (unix) or the shell (elsewhere), then reaps the shell.
async fn kill_and_reap(child: &mut Child, guard: &mut GroupGuard) -> std::io::Result<ExitStatus> {
    guard.kill();
    // Also the shell itself (the only thing there is to kill without process groups);
    // it is not reaped yet, so its pid cannot have been reused.
    let _ = child.start_kill();
    let status = child.wait().await;
    guard.disarm();
    status
}

/// Kills the child's process group on drop unless disarmed (after the shell is reaped,
/// the group id may be reused, so it must not be signalled any more).
/// While armed, the group is also recorded on disk, so the next daemon kills it if this
/// one dies without doing so (`orphans.rs`).
struct GroupGuard {
    #[cfg(unix)]
    pgid: Option<rustix::process::Pid>,
    record: orphans::Record,
}

impl GroupGuard {
    fn new(child: &Child, ctx: &ToolContext) -> Self {
        let record = match child.id() {
            Some(id) => orphans::Record::new(ctx.process_records.as_deref(), id),
            None => orphans::Record::new(None, 0),
        };
        #[cfg(unix)]
        {
            let pgid = child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .and_then(rustix::process::Pid::from_raw);
            Self { pgid, record }
        }
        #[cfg(not(unix))]
        {
            Self { record }
        }
    }

    fn kill(&self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid {
            // Found while the shell (the group's leader) is alive: its descendants that
            // left the group (`setsid`) are reached through it only.
            #[cfg(target_os = "linux")]
            let strays = super::descendants::stop_all(pgid);
            if let Err(e) = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL)
            {
                tracing::debug!(pgid = pgid.as_raw_nonzero().get(), error = %e, "killing bash process group");
            }
            #[cfg(target_os = "linux")]
            super::descendants::kill(&strays);
        }
    }

    fn disarm(&mut self) {
        #[cfg(unix)]
        {
            self.pgid = None;
        }
        self.record.clear();
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Keeps the first `head_cap` and the last `tail_cap` bytes of a stream, counting all.
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    total: usize,
}

impl Capture {
    fn new(head_cap: usize, tail_cap: usize) -> Self {
        Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_cap,
            tail_cap,
            total: 0,
        }
    }

    fn push(&mut self, data: &[u8]) {
        self.total = self.total.saturating_add(data.len());
        let n = (self.head_cap - self.head.len()).min(data.len());
        self.head.extend_from_slice(&data[..n]);
        let rest = &data[n..];
        if rest.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&rest[rest.len() - self.tail_cap..]);
        } else {
            let overflow = (self.tail.len() + rest.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(rest);
        }
    }

    /// Every byte pushed, while nothing has been dropped (`total` ≤ head_cap + tail_cap).
    fn whole(&self) -> Vec<u8> {
        let mut all = self.head.clone();
        all.extend(self.tail.iter());
        all
    }

    /// The stream as text, cut to at most `budget` bytes (head and tail, half each) with
    /// a marker saying how many bytes were left out. `budget` ≤ head_cap + tail_cap.
    fn render(&self, budget: usize) -> String {
        let keep_head = budget / 2;
        let keep_tail = budget - keep_head;
        if self.total <= self.head_cap + self.tail_cap {
            // Nothing was dropped while reading: head + tail is the whole stream.
            let all: Vec<u8> = self.head.iter().chain(self.tail.iter()).copied().collect();
            if all.len() <= budget {
                return String::from_utf8_lossy(&all).into_owned();
            }
            return Self::join(&all[..keep_head], &all[all.len() - keep_tail..], self.total);
        }
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let keep_head = keep_head.min(self.head.len());
        let keep_tail = keep_tail.min(tail.len());
        Self::join(
            &self.head[..keep_head],
            &tail[tail.len() - keep_tail..],
            self.total,
        )
    }

    fn join(head: &[u8], tail: &[u8], total: usize) -> String {
        let head = utf8_head(head);
        let tail = utf8_tail(tail);
        let cut = total - head.len() - tail.len();
        format!(
            "{}\n[... {cut} bytes cut ...]\n{}",
            String::from_utf8_lossy(head),
            String::from_utf8_lossy(tail)
        )
    }
}

/// Shares `limit` bytes between stdout (`a` bytes) and stderr (`b` bytes): a stream
/// smaller than half keeps everything and leaves the rest to the other one.
fn split_budget(limit: usize, a: usize, b: usize) -> (usize, usize) {
    if a.saturating_add(b) <= limit {
        return (a, b);
    }
    let half = limit / 2;
    if a <= half {
        (a, limit - a)
    } else if b <= limit - half {
        (limit - b, b)
    } else {
        (half, limit - half)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::super::testing::{ctx, run as run_tool};
    use super::*;
    use serde_json::Value;
    use std::path::Path;

    async fn bash(ctx: &ToolContext, args: Value) -> ToolOutput {
        match tokio::time::timeout(Duration::from_secs(20), run_tool("bash", &args, ctx)).await {
            Ok(out) => out,
            Err(_) => panic!("bash tool hung: {args}"),
        }
    }

    /// True if `pid` no longer exists (or is a zombie waiting for its new parent to reap it).
    /// Waits for the kernel to finish a SIGKILL: delivery is asynchronous, so right after
    /// `killpg` returns a grandchild may still show as running for a moment. Hang guard only.
    fn process_gone(pid: i32) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            if process_gone_now(pid) {
                return true;
            }
            std::thread::yield_now();
        }
        false
    }

    fn process_gone_now(pid: i32) -> bool {
        let Some(p) = rustix::process::Pid::from_raw(pid) else {
            return true;
        };
        if rustix::process::test_kill_process(p).is_err() {
            return true;
        }
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => {
                // "pid (comm) S ..." — comm may contain spaces/parens; the state follows the last ')'.
                let state = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.trim_start().chars().next());
                matches!(state, Some('Z') | Some('X'))
            }
        }
    }

    fn read_pid(dir: &Path) -> i32 {
        let s = std::fs::read_to_string(dir.join("pid")).unwrap_or_default();
        s.trim()
            .parse()
            .unwrap_or_else(|_| panic!("bad pid file: {s:?}"))
    }

    #[tokio::test]
    async fn stdout_stderr_and_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let out = bash(&c, json!({"command": "echo out; echo err >&2; exit 0"})).await;
        assert_eq!(out, ToolOutput::ok("out\n[stderr]\nerr\n[exit code 0]"));
        let out = bash(&c, json!({"command": "printf abc"})).await;
        assert_eq!(out, ToolOutput::ok("abc\n[exit code 0]"));
        let out = bash(&c, json!({"command": "true"})).await;
        assert_eq!(out, ToolOutput::ok("[exit code 0]"));
    }

    #[tokio::test]
    async fn nonzero_exit_is_error() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let out = bash(&c, json!({"command": "echo failing >&2; exit 3"})).await;
        assert!(out.is_error);
        assert_eq!(out.text, "[stderr]\nfailing\n[exit code 3]");
        let out = bash(&c, json!({"command": "kill -TERM $$"})).await;
        assert!(out.is_error);
        assert_eq!(out.text, "[killed by signal 15]");
    }

    #[tokio::test]
    async fn cwd_is_honoured() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let c = ctx(&real);
        let out = bash(&c, json!({"command": "pwd"})).await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(out.text, format!("{}\n[exit code 0]", real.display()));
        // stdin is /dev/null: `cat` ends immediately instead of waiting.
        let out = bash(&c, json!({"command": "cat; echo done"})).await;
        assert_eq!(out.text, "done\n[exit code 0]");
    }

    #[tokio::test]
    async fn missing_cwd_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(&dir.path().join("nope"));
        let out = bash(&c, json!({"command": "true"})).await;
        assert!(out.is_error);
        assert!(out.text.contains("working directory"), "{}", out.text);
        assert!(out.text.contains("nope"), "{}", out.text);
    }

    #[tokio::test]
    async fn invalid_args() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        for (args, want) in [
            (json!({}), "missing required string argument `command`"),
            (
                json!({"command": 5}),
                "`command` must be a string, got a number",
            ),
            (json!({"command": "  "}), "`command` must not be empty"),
            (
                json!({"command": "true", "timeout_secs": "5"}),
                "`timeout_secs` must be an integer",
            ),
            (
                json!({"command": "true", "timeout_secs": -1}),
                "must be a non-negative integer",
            ),
            (
                json!({"command": "true", "timeout_secs": 1.5}),
                "must be a non-negative integer",
            ),
            (
                json!({"command": "true", "timeout_secs": 0}),
                "must be at least 1",
            ),
            (
                json!({"command": "true", "cwd": "/"}),
                "unknown argument `cwd`",
            ),
            (json!(["true"]), "expected a JSON object"),
        ] {
            let out = bash(&c, args.clone()).await;
            assert!(out.is_error, "{args}");
            assert!(
                out.text.starts_with("invalid arguments for bash: "),
                "{}",
                out.text
            );
            assert!(out.text.contains(want), "{args}: {}", out.text);
        }
        // null for the optional argument means "default".
        let out = bash(&c, json!({"command": "true", "timeout_secs": null})).await;
        assert_eq!(out, ToolOutput::ok("[exit code 0]"));
    }

    #[tokio::test]
    async fn timeout_kills_the_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let out = bash(
            &c,
            json!({"command": "echo started; sleep 60 & echo $! > pid; wait", "timeout_secs": 1}),
        )
        .await;
        assert!(out.is_error);
        assert_eq!(
            out.text,
            "started\n[timed out after 1 s; the process group was killed]"
        );
        let pid = read_pid(dir.path());
        assert!(process_gone(pid), "grandchild {pid} survived the time-out");
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn timeout_kills_descendants_that_left_the_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        // `setsid` gives the sleep a session and group of its own: killing the shell's
        // group alone leaves it running.
        let out = bash(
            &c,
            json!({"command": "setsid sleep 60 >/dev/null 2>&1 & echo $! > pid; wait", "timeout_secs": 1}),
        )
        .await;
        assert_eq!(
            out.text,
            "[timed out after 1 s; the process group was killed]"
        );
        let pid = read_pid(dir.path());
        let gone = process_gone(pid);
        if !gone && let Some(p) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
        }
        assert!(gone, "the setsid child {pid} survived the time-out");
    }

    #[tokio::test]
    async fn timeout_is_clamped_to_the_maximum() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = ctx(dir.path());
        c.limits.bash_max_timeout = Duration::from_secs(1);
        let out = bash(&c, json!({"command": "sleep 60", "timeout_secs": 500})).await;
        assert!(out.is_error);
        assert_eq!(
            out.text,
            "[timed out after 1 s; the process group was killed]"
        );
        c.limits.bash_default_timeout = Duration::from_secs(1);
        c.limits.bash_max_timeout = Duration::from_secs(600);
        let out = bash(&c, json!({"command": "sleep 60"})).await;
        assert_eq!(
            out.text,
            "[timed out after 1 s; the process group was killed]"
        );
    }

    #[tokio::test]
    async fn cancel_kills_the_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let marker = dir.path().join("marker");
        let cancel = c.cancel.clone();
        let waiter = tokio::spawn(async move {
            // Polling is only used to learn that the child is running.
            while !marker.exists() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            cancel.cancel();
        });
        let out = bash(
            &c,
            json!({"command": "sleep 60 & echo $! > pid; touch marker; wait", "timeout_secs": 60}),
        )
        .await;
        waiter.await.unwrap();
        assert!(out.is_error);
        assert_eq!(out.text, "[cancelled; the process group was killed]");
        let pid = read_pid(dir.path());
        assert!(
            process_gone(pid),
            "grandchild {pid} survived the cancellation"
        );
    }

    #[tokio::test]
    async fn output_is_capped_head_and_tail() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = ctx(dir.path());
        c.limits.output_limit_bytes = 1000;
        let out = bash(
            &c,
            json!({"command": "head -c 100000 /dev/zero | tr '\\0' a; printf END"}),
        )
        .await;
        assert!(!out.is_error, "{}", &out.text[..200.min(out.text.len())]);
        let marker = "\n[... 99003 bytes cut ...]\n";
        assert!(out.text.contains(marker), "{}", out.text);
        assert!(out.text.len() <= 1000 + marker.len() + "\n[exit code 0]".len());
        let (head, tail) = out.text.split_once(marker).unwrap();
        assert_eq!(head, "a".repeat(500));
        assert_eq!(tail, format!("{}END\n[exit code 0]", "a".repeat(497)));
    }

    #[tokio::test]
    async fn output_cap_is_shared_with_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = ctx(dir.path());
        c.limits.output_limit_bytes = 1000;
        // Small stdout is kept whole; stderr gets the rest of the budget.
        let out = bash(
            &c,
            json!({"command": "echo hi; head -c 50000 /dev/zero | tr '\\0' e >&2"}),
        )
        .await;
        let want = format!(
            "hi\n[stderr]\n{}\n[... {} bytes cut ...]\n{}\n[exit code 0]",
            "e".repeat(498),
            50000 - 997,
            "e".repeat(499)
        );
        assert_eq!(out.text, want);
        // Both large: half each.
        let out = bash(
            &c,
            json!({"command": "head -c 50000 /dev/zero | tr '\\0' o; head -c 50000 /dev/zero | tr '\\0' e >&2"}),
        )
        .await;
        let marker = "\n[... 49500 bytes cut ...]\n";
        let (o, e) = ("o".repeat(250), "e".repeat(250));
        let want = format!("{o}{marker}{o}\n[stderr]\n{e}{marker}{e}\n[exit code 0]");
        assert_eq!(out.text, want);
    }

    #[tokio::test]
    async fn large_output_does_not_block_the_child() {
        // 4 MiB on each pipe, far beyond any pipe buffer: the child must finish.
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let out = bash(
            &c,
            json!({"command": "head -c 4194304 /dev/zero; head -c 4194304 /dev/zero >&2; echo; echo finished"}),
        )
        .await;
        assert!(!out.is_error);
        assert!(out.text.contains("\nfinished\n[stderr]\n"));
        assert!(out.text.ends_with("\n[exit code 0]"));
        assert_eq!(out.text.matches(" bytes cut ...]").count(), 2);
        assert!(out.text.len() < 33 * 1024, "{}", out.text.len());
    }

    #[tokio::test]
    async fn utf8_is_not_split_at_the_cut() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = ctx(dir.path());
        c.limits.output_limit_bytes = 101;
        // 3-byte characters: a cut at 50 bytes would fall inside one.
        let out = bash(
            &c,
            json!({"command": "for i in $(seq 100); do printf '€'; done"}),
        )
        .await;
        assert!(!out.text.contains('\u{FFFD}'), "{}", out.text);
        let (head, rest) = out.text.split_once("\n[... ").unwrap();
        assert_eq!(head, "€".repeat(16));
        let (cut, tail) = rest.split_once(" bytes cut ...]\n").unwrap();
        let tail = tail.trim_end_matches("\n[exit code 0]");
        assert_eq!(tail, "€".repeat(17));
        assert_eq!(cut.parse::<usize>().unwrap(), 300 - 33 * 3);
    }

    #[tokio::test]
    async fn background_process_holding_the_pipe_does_not_hang() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let out = bash(
            &c,
            json!({"command": "sleep 30 & echo $! > pid; echo done; exit 0"}),
        )
        .await;
        let pid = read_pid(dir.path());
        // Clean up the background sleep regardless of the outcome.
        if let Some(p) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
        }
        assert!(!out.is_error, "{}", out.text);
        assert!(out.text.starts_with("done\n[note: "), "{}", out.text);
        assert!(out.text.contains("background process"), "{}", out.text);
        assert!(out.text.ends_with("\n[exit code 0]"), "{}", out.text);
    }

    #[tokio::test]
    async fn background_process_with_redirected_output_is_not_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let out = bash(
            &c,
            json!({"command": "sleep 30 >/dev/null 2>&1 & echo $! > pid; echo done"}),
        )
        .await;
        let pid = read_pid(dir.path());
        if let Some(p) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
        }
        assert_eq!(out, ToolOutput::ok("done\n[exit code 0]"));
    }

    #[test]
    fn budget_split() {
        assert_eq!(split_budget(1000, 10, 20), (10, 20));
        assert_eq!(split_budget(1000, 10, 5000), (10, 990));
        assert_eq!(split_budget(1000, 5000, 10), (990, 10));
        assert_eq!(split_budget(1000, 5000, 5000), (500, 500));
        assert_eq!(split_budget(1001, 5000, 5000), (500, 501));
        assert_eq!(split_budget(0, 1, 0), (0, 0));
    }

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = Capture::new(3, 3);
        for chunk in [&b"ab"[..], b"cdefg", b"h", b"ijklmnop"] {
            c.push(chunk);
        }
        assert_eq!(c.total, 16);
        assert_eq!(c.render(6), "abc\n[... 10 bytes cut ...]\nnop");
        assert_eq!(c.render(2), "a\n[... 14 bytes cut ...]\np");
        let mut c = Capture::new(3, 3);
        c.push(b"abcde");
        assert_eq!(c.render(6), "abcde");
        assert_eq!(c.render(2), "a\n[... 3 bytes cut ...]\ne");
    }
}

/// The Windows twins: the tool runs `cmd /C`, whose lines end in CRLF; the comparisons
/// tolerate that, nothing else.
#[cfg(all(test, windows))]
mod windows_tests {
    use super::super::testing::{ctx, run as run_tool};
    use super::*;
    use serde_json::Value;

    async fn shell(ctx: &ToolContext, args: Value) -> ToolOutput {
        match tokio::time::timeout(Duration::from_secs(20), run_tool("bash", &args, ctx)).await {
            Ok(mut out) => {
                out.text = out.text.replace("\r\n", "\n");
                out
            }
            Err(_) => panic!("the shell tool hung: {args}"),
        }
    }

    #[tokio::test]
    async fn stdout_stderr_and_exit_code_through_cmd() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let out = shell(&c, json!({"command": "echo out&& echo err>&2&& exit /b 0"})).await;
        assert_eq!(out, ToolOutput::ok("out\n[stderr]\nerr\n[exit code 0]"));
        let out = shell(&c, json!({"command": "exit /b 0"})).await;
        assert_eq!(out, ToolOutput::ok("[exit code 0]"));
    }

    #[tokio::test]
    async fn nonzero_exit_is_error_through_cmd() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let out = shell(&c, json!({"command": "echo failing>&2&& exit /b 3"})).await;
        assert!(out.is_error);
        assert_eq!(out.text, "[stderr]\nfailing\n[exit code 3]");
    }

    #[tokio::test]
    async fn cwd_is_honoured_and_stdin_is_empty_through_cmd() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("here.txt"), "x").unwrap();
        let c = ctx(dir.path());
        let out = shell(&c, json!({"command": "if exist here.txt echo found"})).await;
        assert_eq!(out, ToolOutput::ok("found\n[exit code 0]"));
        // stdin is NUL: `more` ends at once instead of waiting.
        let out = shell(&c, json!({"command": "more&& echo done"})).await;
        assert_eq!(out.text, "done\n[exit code 0]");
    }
}

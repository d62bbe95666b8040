//! Running the shell to its end: both pipes read at once, the exit, the time limit and
//! the cancellation raced in one loop; then the result the model reads.

use std::process::ExitStatus;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::time::Instant;

use super::super::spill::Spill;
use super::super::{ToolContext, ToolOutput};
use super::capture::{Capture, split_budget};
use super::group::{GroupGuard, kill_and_reap};
use super::spawn::spawn;
use crate::sandbox::Prepared;

/// How long to keep reading after the shell exited while a pipe is still open.
const PIPE_GRACE: Duration = Duration::from_millis(500);
const READ_CHUNK: usize = 16 * 1024;

/// Why the wait ended before the shell exited on its own.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stopped {
    TimedOut,
    Cancelled,
}

/// Runs `command` to its end, in `sandbox` when one is prepared (kept until the shell
/// has exited: it owns the command's temp dir).
pub(super) async fn execute(
    command: &str,
    timeout: Duration,
    ctx: &ToolContext,
    sandbox: Option<&Prepared>,
) -> std::io::Result<ToolOutput> {
    let mut child = spawn(command, ctx, sandbox)?;
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
    // Read before the notes below: only the command's own words can show a refusal.
    let refusal = sandbox.and_then(|s| s.explain(&text));
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
    // What the model reads to adapt, and the user to understand: the sandbox said no.
    if let Some(refusal) = refusal {
        text.push_str(&format!("\n[{refusal}]"));
    }
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

//! Starting the shell: `bash -c` (or `sh`) on unix as the leader of a new process group,
//! `cmd /C` on Windows; stdin empty, the scrubbed variables removed; in the session's
//! sandbox when one is prepared (its `pre_exec` hook runs after std's `setpgid`, so the
//! reaper's process group holds the confined shell and everything it starts).

use std::process::Stdio;

use tokio::process::{Child, Command};

use super::super::ToolContext;
use crate::sandbox::Prepared;

#[cfg(unix)]
pub(super) fn spawn(
    command: &str,
    ctx: &ToolContext,
    sandbox: Option<&Prepared>,
) -> std::io::Result<Child> {
    super::super::scrub::protect_process_files();
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
        if let Some(sandbox) = sandbox {
            sandbox.install(cmd.as_std_mut());
        }
        cmd
    };
    match build("bash").spawn() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Distinguish "no bash" from "no such working directory".
            if !ctx.cwd.is_dir() {
                return Err(cwd_error(ctx));
            }
            build("sh")
                .spawn()
                .map_err(|e| spawn_error(e, ctx, sandbox))
        }
        other => other.map_err(|e| spawn_error(e, ctx, sandbox)),
    }
}

/// No sandbox is ever prepared here (it is unavailable on Windows: a required one refused
/// the call before it came here).
#[cfg(windows)]
pub(super) fn spawn(
    command: &str,
    ctx: &ToolContext,
    sandbox: Option<&Prepared>,
) -> std::io::Result<Child> {
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
    cmd.spawn().map_err(|e| spawn_error(e, ctx, sandbox))
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

fn spawn_error(e: std::io::Error, ctx: &ToolContext, sandbox: Option<&Prepared>) -> std::io::Error {
    if e.kind() == std::io::ErrorKind::NotFound && !ctx.cwd.is_dir() {
        return cwd_error(ctx);
    }
    // The child can report only an errno: the sandbox names the step that failed in it.
    let e = match sandbox {
        Some(sandbox) => sandbox.spawn_error(e),
        None => e,
    };
    std::io::Error::new(e.kind(), format!("could not start the shell: {e}"))
}

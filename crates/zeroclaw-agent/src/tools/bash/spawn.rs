//! Starting the shell: `bash -c` (or `sh`) on unix as the leader of a new process group,
//! `cmd /C` on Windows; stdin empty, the scrubbed variables removed.

use std::process::Stdio;

use tokio::process::{Child, Command};

use super::super::ToolContext;

#[cfg(unix)]
pub(super) fn spawn(command: &str, ctx: &ToolContext) -> std::io::Result<Child> {
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
pub(super) fn spawn(command: &str, ctx: &ToolContext) -> std::io::Result<Child> {
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

//! The `bash` tool: run a shell command, capture stdout/stderr, enforce a time limit.
//!
//! On unix the shell is the leader of its own process group, so a time-out or a
//! cancellation kills everything it started (`kill(-pgid, SIGKILL)`), not only the
//! shell; on Linux also its descendants that left the group (`descendants.rs`). Output is
//! read concurrently from both pipes; beyond the cap it is still read (and dropped) so the
//! child never blocks on a full pipe. Once the shell has exited, pipes held open by
//! background grandchildren are given a short grace and then abandoned.
//!
//! The parts: `spawn.rs` starts the shell (the one place a command becomes a process),
//! `group.rs` holds the process group and kills it (the reaper), `capture.rs` keeps and
//! renders the output, `run.rs` waits for all of it and writes the result.
//!
//! Every command runs in the session's sandbox (`ctx.sandbox`, docs/sandbox.md), prepared
//! here per call; a refusal the kernel made is explained at the end of the result.

mod capture;
mod group;
mod run;
mod spawn;

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use super::preview::PreviewAt;
use super::{Tool, ToolContext, ToolOutput};
use crate::config::Policy;
use zeroclaw_protocol::events::ApprovalPreview;

pub(super) struct Bash;

#[derive(Deserialize, JsonSchema)]
pub(super) struct Args {
    /// The command line to run, e.g. `cargo test 2>&1 | tail -50`. Runs in the working
    /// directory; use `cd dir && ...` to run elsewhere.
    command: String,
    // At least 1: the schema's `minimum` is checked before decoding.
    /// Time limit in seconds (default 120, at most 600). The whole process group is killed when
    /// it expires.
    #[schemars(range(min = 1))]
    timeout_secs: Option<u64>,
    /// Only to run outside the sandbox, when a command cannot work inside it: "escape".
    /// The user is always asked, with your justification; they may refuse.
    sandbox: Option<SandboxArg>,
    /// Why the command must run outside the sandbox (required with `sandbox`).
    justification: Option<String>,
}

/// `sandbox`'s one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum SandboxArg {
    Escape,
}

impl Tool for Bash {
    const NAME: &'static str = "bash";
    const DESCRIPTION: &'static str = "Run a shell command with `bash -c` in the session's working directory and return its \
        output. stdin is empty (/dev/null), so interactive programs will not work; pass \
        flags such as `--yes` or `--no-pager` instead. stdout and stderr are both captured; \
        the result ends with `[exit code N]`. Long output keeps only its beginning and end. \
        The command and everything it starts are killed when the time limit expires. \
        Background processes (`cmd &`) may keep running after the command exits, but their \
        later output is not captured. Commands may run in a sandbox that limits where they \
        write and whether they reach the network; a refusal ends the result with `[blocked by \
        the sandbox: ...]`.";
    const READ_ONLY: bool = false;
    const APPROVAL: Policy = Policy::Ask;
    type Args = Args;

    fn check(&self, args: &Args) -> Result<(), String> {
        if args.command.trim().is_empty() {
            return Err("`command` must not be empty".into());
        }
        if args.sandbox.is_some()
            && args
                .justification
                .as_deref()
                .is_none_or(|j| j.trim().is_empty())
        {
            return Err(
                "`sandbox: \"escape\"` needs a `justification`: say why the command \
                 cannot run inside the sandbox"
                    .into(),
            );
        }
        Ok(())
    }

    fn escape<'a>(&self, args: &'a Args) -> Option<&'a str> {
        args.sandbox
            .and(args.justification.as_deref())
            .map(str::trim)
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
        // An escape reaches here only approved by a person (`turn/permission.rs`): it runs
        // unconfined. Otherwise refused here, before anything starts, when the sandbox is
        // required and missing.
        let sandbox = match args.sandbox {
            Some(SandboxArg::Escape) => Ok(None),
            None => ctx.sandbox.prepare(),
        };
        let sandbox = match sandbox {
            Ok(sandbox) => sandbox,
            Err(why) => return ToolOutput::error(format!("bash: {why}")),
        };
        match run::execute(&args.command, timeout, ctx, sandbox.as_ref()).await {
            Ok(out) => out,
            Err(e) => ToolOutput::error(format!("bash: {e}")),
        }
    }
}

#[cfg(all(test, unix))]
mod tests;
#[cfg(all(test, windows))]
mod windows_tests;

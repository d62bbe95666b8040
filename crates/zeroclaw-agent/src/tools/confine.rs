//! The session's sandbox, in-process: a file tool's path is checked with the turn's
//! [`Checker`](crate::sandbox::Checker) before it is read or written, and refused with the
//! sandbox's own words (`blocked by the sandbox: ...`), the same a command gets from the
//! kernel for the same path. The check applies whether or not the kernel could confine
//! commands here: it needs nothing from it.

use std::path::PathBuf;

use super::{ToolContext, ToolOutput, resolve};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    Read,
    Write,
}

/// `path` resolved against the working directory, once the sandbox allows `access` to it;
/// the refusal as the call's result otherwise. On the blocking pool: the check asks the
/// file system about each component (symbolic links are followed as the kernel would).
pub(super) async fn checked(
    tool: &'static str,
    path: &str,
    ctx: &ToolContext,
    access: Access,
) -> Result<PathBuf, ToolOutput> {
    let path = resolve(&ctx.cwd, path);
    let checker = ctx.sandbox.checker.clone();
    let saved = ctx.spill.as_ref().map(|to| to.dir.clone());
    let checked = tokio::task::spawn_blocking(move || {
        // The session's saved outputs live in the daemon's data dir, hidden from the
        // session's commands; the result that names one tells the model to read it with
        // read_file, which the daemon does for it.
        if access == Access::Read
            && let Some(saved) = saved
            && checker.resolve(&path).starts_with(checker.resolve(&saved))
        {
            return Ok(path);
        }
        let verdict = match access {
            Access::Read => checker.check_read(&path),
            Access::Write => checker.check_write(&path),
        };
        verdict.map(|_| path)
    })
    .await;
    match checked {
        Ok(Ok(path)) => Ok(path),
        Ok(Err(refusal)) => Err(ToolOutput::error(format!("{tool}: {refusal}"))),
        Err(e) => Err(ToolOutput::error(format!("{tool}: internal error: {e}"))),
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::super::testing::{ctx, run};
    use crate::sandbox::{Mode, Sandbox, SandboxConfig, Support};
    use serde_json::json;

    /// The daemon's data dir inside the working directory (a session in the home directory
    /// that holds `~/.zeroclaw`): grep passes over it, the other tools are refused.
    #[tokio::test]
    async fn a_hidden_directory_inside_the_workspace_is_out_of_every_file_tools_reach() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join(".zeroclaw");
        std::fs::create_dir(&data).unwrap();
        std::fs::write(data.join("secret.txt"), "needle in the data dir\n").unwrap();
        std::fs::write(dir.path().join("open.txt"), "needle in the open\n").unwrap();
        let mut ctx = ctx(dir.path());
        let sandbox = Sandbox::new(Support::unavailable("not needed in-process"), vec![data]);
        let choice = SandboxConfig::default().choice();
        ctx.sandbox = sandbox.for_turn(
            &SandboxConfig::default(),
            choice,
            false,
            dir.path().to_path_buf(),
        );
        assert_eq!(ctx.sandbox.policy.mode, Mode::WorkspaceWrite);

        let found = run("grep", &json!({"pattern": "needle"}), &ctx).await;
        assert!(found.text.contains("open.txt"), "{}", found.text);
        assert!(!found.text.contains("data dir"), "{}", found.text);
        let refused = run(
            "grep",
            &json!({"pattern": "needle", "path": ".zeroclaw"}),
            &ctx,
        )
        .await;
        assert!(refused.is_error);
        assert!(
            refused.text.starts_with("grep: blocked by the sandbox: ")
                && refused.text.contains("daemon's own files"),
            "{}",
            refused.text
        );
        for (tool, args) in [
            ("read_file", json!({"path": ".zeroclaw/secret.txt"})),
            ("list_dir", json!({"path": ".zeroclaw"})),
            (
                "write_file",
                json!({"path": ".zeroclaw/new", "content": "x"}),
            ),
        ] {
            let out = run(tool, &args, &ctx).await;
            assert!(out.is_error, "{tool}: {}", out.text);
            assert!(
                out.text
                    .starts_with(&format!("{tool}: blocked by the sandbox: ")),
                "{tool}: {}",
                out.text
            );
        }
        assert!(!dir.path().join(".zeroclaw/new").exists());
        // Outside the hidden directory, as before.
        let read = run("read_file", &json!({"path": "open.txt"}), &ctx).await;
        assert!(!read.is_error, "{}", read.text);
    }
}

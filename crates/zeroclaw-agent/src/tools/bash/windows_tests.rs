//! The Windows twins: the tool runs `cmd /C`, whose lines end in CRLF; the comparisons
//! tolerate that, nothing else.

use super::super::testing::{ctx, run as run_tool};
use super::*;
use serde_json::{Value, json};

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

//! The tool run for real: `bash` processes, their groups, their output.

use super::super::testing::{ctx, run as run_tool};
use super::*;
use serde_json::{Value, json};
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

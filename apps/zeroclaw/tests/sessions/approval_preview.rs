//! The `preview` of an `approval_request`: what the call would do, computed by the daemon
//! from the file as it is: a diff for `write_file` (all added for a new file) and
//! `edit_file` (or why the edit would fail), the command and its cwd for `bash`; bounded,
//! with the cut stated.

use crate::common::*;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

/// Runs one call, rejecting it, and returns its approval request's `preview`.
fn preview_of(env: &Env, name: &str, args: Value) -> Value {
    env.fake.push(tool_call("call_1", name, args, 2));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "go", decide_all("reject"));
    assert_eq!(turn.result()["stopReason"], "end_turn");
    turn.one("approval_request")["preview"].clone()
}

/// The working directory as the daemon resolves it (through symbolic links).
fn real_work(env: &Env) -> std::path::PathBuf {
    env.work.canonicalize().unwrap()
}

#[test]
fn write_file_to_a_new_file_previews_every_line_as_added_and_says_it_is_new() {
    let env = Env::new("", "");
    let preview = preview_of(
        &env,
        "write_file",
        json!({"path": "notes/new.txt", "content": "first\nsecond\n"}),
    );
    let path = real_work(&env).join("notes").join("new.txt");
    assert_eq!(
        preview,
        json!({
            "kind": "diff",
            "path": path.display().to_string(),
            "created": true,
            "diff": "@@ -0,0 +1,2 @@\n+first\n+second\n",
        })
    );
    assert!(!path.exists(), "the rejected write ran");
}

#[test]
fn write_file_over_an_existing_file_previews_the_diff_against_it() {
    let env = Env::new("", "");
    let old: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    std::fs::write(env.work.join("f.txt"), &old).unwrap();
    let new = old.replace("line 5\n", "line five\n");
    let preview = preview_of(&env, "write_file", json!({"path": "f.txt", "content": new}));
    assert_eq!(preview["kind"], "diff", "{preview}");
    assert_eq!(preview.get("created"), None, "{preview}");
    assert_eq!(
        preview["diff"],
        "@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+line five\n line 6\n line 7\n line 8\n"
    );
    assert_eq!(
        std::fs::read_to_string(env.work.join("f.txt")).unwrap(),
        old
    );
}

#[test]
fn edit_file_previews_the_diff_the_edit_would_make_through_a_symbolic_link() {
    let env = Env::new("", "");
    std::fs::write(
        env.work.join("main.rs"),
        "fn main() {\n    println!(\"hi\");\n}\n",
    )
    .unwrap();
    // Through a link where the platform lets a test make one.
    #[cfg(unix)]
    let written = {
        std::os::unix::fs::symlink("main.rs", env.work.join("link.rs")).unwrap();
        "link.rs"
    };
    #[cfg(not(unix))]
    let written = "main.rs";
    let preview = preview_of(
        &env,
        "edit_file",
        json!({"path": written, "old_text": "println!(\"hi\");", "new_text": "println!(\"hello\");\n    println!(\"bye\");"}),
    );
    assert_eq!(
        preview,
        json!({
            "kind": "diff",
            "path": real_work(&env).join("main.rs").display().to_string(),
            "diff": "@@ -1,3 +1,4 @@\n fn main() {\n-    println!(\"hi\");\n+    println!(\"hello\");\n+    println!(\"bye\");\n }\n",
        })
    );
}

#[test]
fn an_edit_that_would_fail_is_previewed_with_the_reason() {
    let env = Env::new("", "");
    std::fs::write(env.work.join("a.txt"), "same\nsame\n").unwrap();
    let twice = preview_of(
        &env,
        "edit_file",
        json!({"path": "a.txt", "old_text": "same", "new_text": "other"}),
    );
    assert_eq!(twice["kind"], "unavailable", "{twice}");
    let reason = twice["reason"].as_str().unwrap();
    assert!(reason.starts_with("the edit would fail: "), "{reason}");
    assert!(reason.contains("appears 2 times"), "{reason}");

    let env = Env::new("", "");
    let missing = preview_of(
        &env,
        "edit_file",
        json!({"path": "nowhere.txt", "old_text": "a", "new_text": "b"}),
    );
    assert_eq!(missing["kind"], "unavailable", "{missing}");
    assert!(
        missing["reason"]
            .as_str()
            .unwrap()
            .contains("no such file or directory"),
        "{missing}"
    );
}

#[test]
fn a_binary_file_is_said_plainly_instead_of_diffed() {
    let env = Env::new("", "");
    std::fs::write(env.work.join("blob.bin"), [0xff, 0xfe, 0x00, 0x80]).unwrap();
    let preview = preview_of(
        &env,
        "write_file",
        json!({"path": "blob.bin", "content": "text\n"}),
    );
    assert_eq!(preview["kind"], "unavailable", "{preview}");
    assert_eq!(
        preview["reason"],
        "replaces a binary file (4 bytes, not UTF-8 text) with 5 bytes of text"
    );
}

#[test]
fn bash_previews_the_full_command_and_the_cwd_it_runs_in() {
    let env = Env::new("", "");
    let command = "echo one && echo two | tr a-z A-Z";
    let preview = preview_of(&env, "bash", json!({"command": command}));
    assert_eq!(
        preview,
        json!({"kind": "command", "command": command, "cwd": env.work.display().to_string()})
    );
}

#[test]
fn a_huge_new_file_is_previewed_cut_with_the_count_of_lines_left_out() {
    let env = Env::new("", "");
    let content: String = (0..20_000).map(|i| format!("line number {i}\n")).collect();
    let preview = preview_of(
        &env,
        "write_file",
        json!({"path": "big.txt", "content": content}),
    );
    assert_eq!(preview["kind"], "diff");
    let diff = preview["diff"].as_str().unwrap();
    let shown = diff.lines().count();
    assert!(diff.len() <= 64 * 1024, "{} bytes", diff.len());
    assert!(shown <= 400, "{shown} lines");
    assert!(diff.starts_with("@@ -0,0 +1,20000 @@\n+line number 0\n"));
    // The hunk header and 20 000 added lines, less those shown.
    assert_eq!(preview["omittedLines"], 20_001 - shown as u64);
}

#[test]
fn a_tool_with_nothing_to_preview_sends_no_preview_member() {
    let env = Env::new("", "[approvals]\nlist_dir = \"ask\"\n");
    let ask = {
        env.fake
            .push(tool_call("call_1", "list_dir", json!({"path": "."}), 1));
        env.fake.push(openai::text(&["ok"]));
        let mut client = env.daemon.client();
        let session = client.new_session(&env.work);
        let turn = client.prompt(&session, "go", decide_all("reject"));
        turn.one("approval_request").clone()
    };
    assert_eq!(ask.get("preview"), None, "{ask}");
}

//! The file tools obey the session's sandbox in-process, refused with the same words as a
//! command: the daemon's files even once a person approved the call, writes outside the
//! workspace even with `tools.confine_to_cwd` off, any write in a read-only session.

use crate::common::*;
use crate::{Outcome, Sandboxed};
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

/// `[tools] confine_to_cwd = false` and every file tool allowed: only the sandbox decides.
const OPEN: &str =
    "write_file = \"allow\"\nedit_file = \"allow\"\nlist_dir = \"allow\"\nread_file = \"allow\"";
const UNCONFINED: &str = "[tools]\nconfine_to_cwd = false";

/// One call of `tool`, every approval request answered `allow_once` (the daemon's own
/// files are always asked about).
fn approved(s: &mut Sandboxed, tool: &str, args: Value) -> Outcome {
    let id = format!("f{}", s.env.fake.requests().len());
    s.env.fake.push(tool_call(&id, tool, args, 1));
    s.env.fake.push(openai::text(&["ok"]));
    let turn = s.client.prompt(&s.session, "go", decide_all("allow_once"));
    let result = turn.one("tool_result").clone();
    let requests = s.env.fake.requests();
    let model = tool_content(&requests[requests.len() - 1].body, &id);
    assert_eq!(output(&result), model);
    Outcome {
        text: model,
        is_error: result["isError"] == true,
    }
}

#[test]
fn the_daemons_files_are_refused_to_the_file_tools_even_when_approved() {
    let mut s = Sandboxed::with(OPEN, UNCONFINED, Value::Null);
    let db = s.env.dir.data_dir().join("zeroclaw.db");
    let read = approved(&mut s, "read_file", json!({"path": db}));
    read.blocked("one of the daemon's own files");
    assert!(read.text.starts_with("read_file: "), "{}", read.text);
    let config_dir = s.env.dir.config_dir();
    approved(&mut s, "list_dir", json!({"path": config_dir}))
        .blocked("one of the daemon's own files");
    let config = config_dir.join("config.toml");
    approved(
        &mut s,
        "write_file",
        json!({"path": config, "content": "[agent]\n"}),
    )
    .blocked("one of the daemon's own files");
    assert!(!s.env.dir.config_text().contains("[agent]"));
}

#[test]
fn writes_outside_the_workspace_are_refused_with_the_commands_words() {
    let mut s = Sandboxed::with(OPEN, UNCONFINED, Value::Null);
    let outside = s.outside.join("x.txt");
    let link = s.env.work.join("link");
    std::os::unix::fs::symlink(&s.outside, &link).unwrap();
    for path in [
        outside.clone(),
        link.join("y.txt"),
        s.env.work.join("../z.txt"),
    ] {
        approved(&mut s, "write_file", json!({"path": path, "content": "no"}))
            .blocked("write outside the workspace");
    }
    assert!(!outside.exists() && !s.outside.join("y.txt").exists());
    assert!(!s.env.dir.path().join("z.txt").exists());
    // The kernel says the same of a command writing there.
    s.bash(&format!("echo no > {}", outside.display()))
        .blocked("write outside the workspace");
    // Inside, and reading outside: allowed.
    approved(
        &mut s,
        "write_file",
        json!({"path": "in.txt", "content": "yes"}),
    )
    .allowed();
    let readable = s.outside.join("readable.txt");
    std::fs::write(&readable, "hello").unwrap();
    let read = approved(&mut s, "read_file", json!({ "path": readable }));
    read.allowed();
    assert!(read.text.contains("hello"));
}

#[test]
fn a_read_only_session_cannot_write_with_the_file_tools() {
    let mut s = Sandboxed::with(OPEN, UNCONFINED, json!({"mode": "read-only"}));
    approved(
        &mut s,
        "write_file",
        json!({"path": "in.txt", "content": "no"}),
    )
    .blocked("write in a read-only session");
    assert!(!s.env.work.join("in.txt").exists());
    std::fs::write(s.env.work.join("e.txt"), "a").unwrap();
    approved(
        &mut s,
        "edit_file",
        json!({"path": "e.txt", "old_text": "a", "new_text": "b"}),
    )
    .blocked("write in a read-only session");
    assert_eq!(
        std::fs::read_to_string(s.env.work.join("e.txt")).unwrap(),
        "a"
    );
}

#[test]
fn a_saved_output_in_the_hidden_data_dir_is_still_readable_with_read_file() {
    let mut s = Sandboxed::with(
        "read_file = \"allow\"",
        "[tools]\noutput_limit_bytes = 1024",
        Value::Null,
    );
    let long = s.bash("seq 1 5000");
    let (_, rest) = long.text.split_once(") is saved in ").unwrap();
    let (saved, _) = rest.split_once("; read parts").unwrap();
    assert!(
        saved.starts_with(&*s.env.dir.data_dir().to_string_lossy()),
        "{saved}"
    );
    // The command cannot read it (the data dir is hidden from it)...
    s.bash(&format!("head -c 5 {saved}"))
        .blocked("one of the daemon's own files");
    // ...the daemon reads it for the model, as the result said.
    let read = approved(&mut s, "read_file", json!({"path": saved}));
    read.allowed();
    assert!(read.text.contains("4999\n5000"), "{}", read.text);
}

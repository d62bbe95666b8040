//! Checkpoints (issue 31) through the real daemon: a turn's tools (`write_file`,
//! `edit_file`, `bash` appending, deleting, making directories, a binary file, a mode change,
//! a symlink) change the session's cwd; `session/rewind` to each checkpoint puts back exactly
//! the tree before that turn (compared as a full listing: paths, kinds, executable bits,
//! contents, link targets), files-only and conversation-only rewinds touch only their half,
//! `session/unrewind` reverses the last rewind, an edit made outside the agent is reported
//! rather than overwritten, a fork shares the history up to its checkpoint and then
//! diverges, everything survives a restart, a rewind is refused while a turn runs, and the
//! user's own git repository in the cwd is left byte for byte as it was.

use crate::common::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use zeroclaw_testkit::openai;

/// Tools that change files run without asking.
const TOOLS_ALLOWED: &str =
    "[approvals]\nbash = \"allow\"\nwrite_file = \"allow\"\nedit_file = \"allow\"";

/// One entry of a tree: its kind (`file`, `exec` for an executable file, `dir`, `link`)
/// and content (a file's bytes, a link's target).
type Listing = BTreeMap<String, (&'static str, Vec<u8>)>;

/// Everything under `root` but `.git`.
fn listing(root: &Path) -> Listing {
    fn walk(root: &Path, dir: &Path, out: &mut Listing) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(
                    rel,
                    ("link", target.to_string_lossy().into_owned().into_bytes()),
                );
            } else if meta.is_dir() {
                out.insert(rel, ("dir", Vec::new()));
                walk(root, &path, out);
            } else {
                let kind = if meta.permissions().mode() & 0o111 != 0 {
                    "exec"
                } else {
                    "file"
                };
                out.insert(rel, (kind, std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Listing::new();
    walk(root, root, &mut out);
    out
}

/// Every file under `dir` and its bytes (the user's `.git`).
fn bytes_under(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A turn that makes one tool call then ends.
fn push_turn(env: &Env, id: &str, tool: &str, args: Value) {
    env.fake.push(tool_call(id, tool, args, 2));
    env.fake.push(openai::text(&["done"]));
}

/// Runs a prompt to its end; every tool it calls must succeed.
fn run(client: &mut Client, session: &str, prompt: &str) {
    let turn = client.prompt(session, prompt, no_questions);
    assert_eq!(
        turn.result()["stopReason"],
        "end_turn",
        "{:?}",
        turn.types()
    );
    for result in turn.of_type("tool_result") {
        assert_eq!(result["isError"], false, "{result}");
    }
}

fn checkpoints(client: &mut Client, session: &str) -> Vec<Value> {
    let result = client.call("session/checkpoints", json!({"sessionId": session}));
    result["checkpoints"].as_array().unwrap().clone()
}

fn rewind(client: &mut Client, session: &str, checkpoint: &Value, extra: Value) -> Value {
    let mut params = json!({"sessionId": session, "checkpointId": checkpoint["checkpointId"]});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    client.call("session/rewind", params)
}

fn changed(checkpoint: &Value) -> Vec<(String, String)> {
    checkpoint["changedFiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["change"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(p, c)| ((*p).to_owned(), (*c).to_owned()))
        .collect()
}

#[test]
fn rewinding_to_each_checkpoint_restores_exactly_the_tree_before_its_turn_and_leaves_the_users_git_alone()
 {
    let env = Env::new("", TOOLS_ALLOWED);
    let work = &env.work;
    // The user's repository: a commit, a stash, a staged file, an untracked one.
    git(work, &["init", "-q"]);
    git(work, &["config", "user.email", "u@example.com"]);
    git(work, &["config", "user.name", "u"]);
    std::fs::write(work.join("a"), "one\n").unwrap();
    std::fs::write(work.join("b"), "bee\n").unwrap();
    git(work, &["add", "a", "b"]);
    git(work, &["commit", "-qm", "first"]);
    std::fs::write(work.join("a"), "stashed\n").unwrap();
    git(work, &["stash", "-q"]);
    std::fs::write(work.join("staged"), "s\n").unwrap();
    git(work, &["add", "staged"]);
    std::fs::write(work.join("untracked"), "u\n").unwrap();
    let status = git(work, &["status", "--porcelain"]);
    let dot_git = bytes_under(&work.join(".git"));

    let mut client = env.daemon.client();
    let session = client.new_session(work);
    let mut before = Vec::new();

    before.push(listing(work));
    push_turn(
        &env,
        "c1",
        "write_file",
        json!({"path": "a", "content": "written\n"}),
    );
    run(&mut client, &session, "first: write a");

    before.push(listing(work));
    push_turn(
        &env,
        "c2",
        "bash",
        json!({"command": "echo more >> a && rm b && mkdir -p x/y && touch x/y/z && printf 'bin\\000\\001\\377' > bin && chmod +x a && ln -s a link"}),
    );
    run(&mut client, &session, "second: shell");

    before.push(listing(work));
    push_turn(
        &env,
        "c3",
        "edit_file",
        json!({"path": "a", "old_text": "more", "new_text": "edited"}),
    );
    run(&mut client, &session, "third: edit\nwith a second line");
    let last = listing(work);
    assert_ne!(last, before[2]);

    let listed = checkpoints(&mut client, &session);
    assert_eq!(listed.len(), 3, "{listed:#?}");
    let turns: Vec<&Value> = listed.iter().map(|c| &c["turn"]).collect();
    assert_eq!(turns, [&json!(1), &json!(2), &json!(3)]);
    assert_eq!(listed[2]["prompt"], "third: edit");
    assert_eq!(changed(&listed[0]), pairs(&[("a", "modified")]));
    assert_eq!(
        changed(&listed[1]),
        pairs(&[
            ("a", "modified"),
            ("b", "deleted"),
            ("bin", "added"),
            ("link", "added"),
            ("x/y/z", "added"),
        ])
    );
    assert_eq!(changed(&listed[2]), pairs(&[("a", "modified")]));

    // Back one turn at a time: each rewind restores the tree before that checkpoint's turn
    // and hides that turn from the conversation.
    let mut undo = Value::Null;
    for n in (0..3).rev() {
        let done = rewind(&mut client, &session, &listed[n], json!({}));
        assert_eq!(listing(work), before[n], "rewind to checkpoint {}", n + 1);
        assert!(done["messagesHidden"].as_u64().unwrap() >= 3, "{done}");
        let event = client.wait_for(|f| {
            is_update(f)
                && f["params"]["type"] == "session_rewound"
                && f["params"]["undoId"] == done["undoId"]
        });
        assert_eq!(event["params"]["checkpointId"], listed[n]["checkpointId"]);
        assert_eq!(checkpoints(&mut client, &session).len(), n);
        undo = done["undoId"].clone();
    }
    assert!(client.messages(&session).is_empty());
    // Back where it started, the user's repository is exactly as it was: not a byte of its
    // `.git` changed (refs, stash, index, reflogs), and git sees the same status.
    assert_eq!(bytes_under(&work.join(".git")), dot_git);
    assert_eq!(git(work, &["status", "--porcelain"]), status);
    assert_eq!(git(work, &["stash", "list"]).lines().count(), 1);

    // The last rewind undone: the tree and the conversation as before it.
    let undone = client.call(
        "session/unrewind",
        json!({"sessionId": session, "undoId": undo}),
    );
    assert_eq!(listing(work), before[1]);
    assert!(
        undone["messagesRestored"].as_u64().unwrap() >= 3,
        "{undone}"
    );
    assert_eq!(checkpoints(&mut client, &session).len(), 1);
    let error = client.fail(
        "session/unrewind",
        json!({"sessionId": session, "undoId": undo}),
    );
    assert_eq!(error["code"], -32031, "{error}");
}

#[test]
fn files_only_and_conversation_only_rewinds_each_touch_only_their_half() {
    let env = Env::new("", TOOLS_ALLOWED);
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let f = env.work.join("f");
    push_turn(
        &env,
        "c1",
        "write_file",
        json!({"path": "f", "content": "1"}),
    );
    run(&mut client, &session, "one");
    push_turn(
        &env,
        "c2",
        "write_file",
        json!({"path": "f", "content": "2"}),
    );
    run(&mut client, &session, "two");
    let listed = checkpoints(&mut client, &session);

    // The conversation only: the file stays, turn two leaves what the model is sent.
    let done = rewind(&mut client, &session, &listed[1], json!({"files": false}));
    assert_eq!(done["restoredFiles"], json!([]));
    assert_eq!(done["messagesHidden"], 4, "prompt, call, result, answer");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "2");
    let all = client.call(
        "session/messages",
        json!({"sessionId": session, "includeHidden": true}),
    );
    let hidden: Vec<bool> = all["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["hidden"] == true)
        .collect();
    assert_eq!(hidden, [false, false, false, false, true, true, true, true]);
    assert_eq!(client.messages(&session).len(), 4);
    env.fake.push(openai::text(&["three"]));
    run(&mut client, &session, "three");
    let body = &env.fake.wait_for_requests(5)[4].body;
    let text = body.to_string();
    assert!(text.contains("one") && !text.contains("\"two\""), "{text}");

    // The files only: back to before turn one (no `f`), the conversation untouched.
    let listed = checkpoints(&mut client, &session);
    assert_eq!(listed.len(), 2, "turn one and turn three");
    let done = rewind(
        &mut client,
        &session,
        &listed[0],
        json!({"conversation": false}),
    );
    assert_eq!(done["messagesHidden"], 0);
    assert_eq!(
        done["restoredFiles"],
        json!([{"path": "f", "change": "deleted"}])
    );
    assert!(!f.exists());
    assert_eq!(checkpoints(&mut client, &session).len(), 2);
}

#[test]
fn an_edit_made_outside_the_agent_is_reported_not_overwritten_until_forced_even_after_a_restart() {
    let mut env = Env::new("", TOOLS_ALLOWED);
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let f = env.work.join("f");
    push_turn(
        &env,
        "c1",
        "write_file",
        json!({"path": "f", "content": "agent"}),
    );
    run(&mut client, &session, "write f");
    // The user edits the file the turn wrote, then the daemon is killed and restarted.
    std::fs::write(&f, "the user's edit").unwrap();
    drop(client);
    env.kill_and_restart();
    let mut client = env.daemon.client();
    client.call("session/load", json!({"sessionId": session}));
    let listed = checkpoints(&mut client, &session);
    assert_eq!(listed.len(), 1);

    let error = client.fail(
        "session/rewind",
        json!({"sessionId": session, "checkpointId": listed[0]["checkpointId"]}),
    );
    assert_eq!(error["code"], -32030, "{error}");
    assert_eq!(
        error["data"]["conflicts"],
        json!([{"path": "f", "reason": "edited_outside"}])
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "the user's edit");
    assert_eq!(client.messages(&session).len(), 4, "nothing was hidden");

    let done = rewind(&mut client, &session, &listed[0], json!({"force": true}));
    assert!(!f.exists(), "{done}");
    // And the user's edit comes back with the unrewind.
    client.call(
        "session/unrewind",
        json!({"sessionId": session, "undoId": done["undoId"]}),
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "the user's edit");
}

#[test]
fn a_fork_shares_the_history_up_to_its_checkpoint_and_then_diverges() {
    let env = Env::new("", TOOLS_ALLOWED);
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    env.fake.push(openai::text(&["answer one"]));
    run(&mut client, &session, "question one");
    env.fake.push(openai::text(&["answer two"]));
    run(&mut client, &session, "question two");
    let listed = checkpoints(&mut client, &session);

    let mut other = env.daemon.client();
    let fork = other.call(
        "session/fork",
        json!({"sessionId": session, "checkpointId": listed[1]["checkpointId"]}),
    );
    assert_eq!(fork["title"], "fork of test");
    assert_eq!(fork["cwd"], json!(env.work));
    let forked = fork["sessionId"].as_str().unwrap().to_owned();
    assert_ne!(forked, session);
    let event = client.wait_event("session_forked");
    assert_eq!(event["newSessionId"], json!(forked));
    assert_eq!(event["sessionId"], json!(session));

    let texts = |client: &mut Client, id: &str| -> Vec<String> {
        client
            .messages(id)
            .iter()
            .map(|m| m["text"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(texts(&mut other, &forked), ["question one", "answer one"]);
    // The fork's caller is attached to it: it prompts there, and the fork diverges.
    env.fake.push(openai::text(&["forked answer"]));
    run(&mut other, &forked, "question in the fork");
    let body = &env.fake.wait_for_requests(3)[2].body.to_string();
    assert!(
        body.contains("answer one") && !body.contains("answer two"),
        "{body}"
    );
    assert_eq!(
        texts(&mut other, &forked),
        [
            "question one",
            "answer one",
            "question in the fork",
            "forked answer"
        ]
    );
    assert_eq!(
        texts(&mut client, &session),
        ["question one", "answer one", "question two", "answer two"],
        "the original is untouched"
    );
    // A whole fork copies everything.
    let whole = other.call("session/fork", json!({"sessionId": session}));
    let whole = whole["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(texts(&mut other, &whole).len(), 4);
}

#[test]
fn a_rewind_is_refused_while_a_turn_runs() {
    let env = Env::new("", TOOLS_ALLOWED);
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    env.fake.push(openai::text(&["first"]));
    run(&mut client, &session, "first");
    let listed = checkpoints(&mut client, &session);
    env.fake
        .push(openai::Builder::new().text("streaming").stall().build());
    let prompt = client.start_prompt(&session, "second");
    client.wait_event("agent_message_chunk");
    let error = client.fail(
        "session/rewind",
        json!({"sessionId": session, "checkpointId": listed[0]["checkpointId"]}),
    );
    assert_eq!(error["code"], -32002, "{error}");
    assert!(error["data"]["turnId"].is_string(), "{error}");
    client.call("session/cancel", json!({"sessionId": session}));
    client.wait_for(|f| f["id"] == prompt);
    // Once it ended, the rewind goes ahead.
    rewind(&mut client, &session, &listed[0], json!({}));
    assert!(client.messages(&session).is_empty());
}

#[test]
fn a_turn_cut_by_sigkill_can_still_be_rewound_after_the_restart() {
    let mut env = Env::new("", TOOLS_ALLOWED);
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let f = env.work.join("f");
    env.fake.push(bash_call("c1", "echo half-done > f", 2));
    env.fake
        .push(openai::Builder::new().text("never stored").stall().build());
    client.start_prompt(&session, "start something");
    // The second model call starts only after the bash call's result is stored.
    env.fake.wait_for_requests(2);
    client.wait_event("agent_message_chunk");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "half-done\n");
    drop(client);
    env.kill_and_restart();

    let mut client = env.daemon.client();
    client.call("session/load", json!({"sessionId": session}));
    let listed = checkpoints(&mut client, &session);
    assert_eq!(listed.len(), 1, "{listed:#?}");
    assert_eq!(listed[0]["changedFiles"], json!([]), "the turn never ended");
    let done = rewind(&mut client, &session, &listed[0], json!({}));
    assert_eq!(
        done["restoredFiles"],
        json!([{"path": "f", "change": "deleted"}])
    );
    assert!(!f.exists());
    assert!(client.messages(&session).is_empty());
}

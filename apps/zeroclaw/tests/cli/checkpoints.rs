//! Issue 31: `zeroclaw sessions checkpoints | rewind | unrewind | fork`, against a real daemon
//! whose turns write a file: the listing shows each turn's prompt and changed files, a
//! files-only rewind restores the file and keeps the conversation, a rewind over an edit made
//! outside the agent is refused with the path and `--force` named, `unrewind` puts it back,
//! and a fork copies the conversation up to the checkpoint.

use super::zeroclaw;
use crate::common::*;
use predicates::prelude::*;
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn sessions_checkpoints_rewind_unrewind_and_fork_work_from_the_command_line() {
    let env = Env::new("", "[approvals]\nwrite_file = \"allow\"");
    let mut client = env.daemon.client();
    let id = client.new_session(&env.work);
    let short = &id[..8];
    let f = env.work.join("f");
    for (n, content) in [(1, "1"), (2, "2")] {
        env.fake.push(tool_call(
            &format!("c{n}"),
            "write_file",
            json!({"path": "f", "content": content}),
            1,
        ));
        env.fake.push(openai::text(&["done"]));
        let turn = client.prompt(&id, &format!("write {content}"), no_questions);
        assert_eq!(turn.result()["stopReason"], "end_turn");
    }

    zeroclaw(&env.dir)
        .args(["sessions", "checkpoints", short])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("write 1")
                .and(predicate::str::contains("write 2"))
                .and(predicate::str::contains("added    f"))
                .and(predicate::str::contains("modified f")),
        );

    // Turn 2 undone on disk only: the file is as turn 1 left it, the conversation whole.
    zeroclaw(&env.dir)
        .args(["sessions", "rewind", short, "2", "--files-only"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains(format!("rewound session {id} to before turn 2"))
                .and(predicate::str::contains("1 file(s) restored"))
                .and(predicate::str::contains("hidden").not()),
        );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "1");
    assert_eq!(client.messages(&id).len(), 8);

    // The user edits the file: a rewind that would remove it is refused, naming it.
    std::fs::write(&f, "mine").unwrap();
    zeroclaw(&env.dir)
        .args(["sessions", "rewind", short, "1"])
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("f (edited_outside)")
                .and(predicate::str::contains("--force"))
                .and(predicate::str::contains("error -32030")),
        );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "mine");
    let out = zeroclaw(&env.dir)
        .args(["sessions", "rewind", short, "1", "--force"])
        .assert()
        .success()
        .stdout(predicate::str::contains("message(s) hidden"))
        .get_output()
        .stdout
        .clone();
    assert!(!f.exists());
    assert!(client.messages(&id).is_empty());
    let out = String::from_utf8(out).unwrap();
    let undo = out
        .lines()
        .find_map(|l| l.strip_prefix(&format!("undo it: zeroclaw sessions unrewind {id} ")))
        .unwrap()
        .to_owned();
    zeroclaw(&env.dir)
        .args(["sessions", "unrewind", short, &undo])
        .assert()
        .success()
        .stdout(predicate::str::contains("undid the rewind"));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "mine");
    assert_eq!(client.messages(&id).len(), 8);

    let out = zeroclaw(&env.dir)
        .args(["sessions", "fork", short, "2", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let fork: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(fork["title"], "fork of test");
    let forked = fork["sessionId"].as_str().unwrap();
    let texts: Vec<String> = client
        .messages(forked)
        .iter()
        .filter_map(|m| m["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(texts, ["write 1", "done"]);

    zeroclaw(&env.dir)
        .args([
            "sessions",
            "rewind",
            short,
            "1",
            "--files-only",
            "--conversation-only",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
}

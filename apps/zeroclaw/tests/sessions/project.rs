//! What the agent knows of its project (docs/project.md): the AGENTS.md (or CLAUDE.md)
//! files from the config dir and from the project root down to the session's cwd in each
//! turn's system prompt, read again when they change and capped; skills listed by name and
//! description, their bodies and files read through the `skill` tool; and what
//! `session/new` and `session/context` say was loaded or skipped.

use crate::common::*;
use serde_json::{Value, json};
use std::path::Path;
use zeroclaw_testkit::openai;

/// The system prompt of an OpenAI request body.
fn system(body: &Value) -> String {
    let first = &body["messages"][0];
    assert_eq!(first["role"], "system", "{body:#}");
    first["content"].as_str().unwrap().to_owned()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Where each needle is in `text`, panicking on one that is missing.
fn positions(text: &str, needles: &[&str]) -> Vec<usize> {
    needles
        .iter()
        .map(|n| {
            text.find(n)
                .unwrap_or_else(|| panic!("{n:?} not in {text}"))
        })
        .collect()
}

#[test]
fn nested_instruction_files_reach_the_system_prompt_in_order_and_a_change_shows_next_turn() {
    let env = Env::new("", "");
    let root = &env.work;
    std::fs::create_dir_all(root.join(".git")).unwrap();
    write(
        &env.dir.config_dir().join("AGENTS.md"),
        "USER-RULE: be brief",
    );
    write(
        &env.dir.path().join("AGENTS.md"),
        "ABOVE-THE-ROOT: never read",
    );
    write(&root.join("AGENTS.md"), "ROOT-RULE: run cargo test");
    // No AGENTS.md in `sub`: its CLAUDE.md is read instead.
    write(&root.join("sub/CLAUDE.md"), "CLAUDE-FALLBACK: use tabs");
    // Both here: the AGENTS.md wins.
    write(
        &root.join("sub/deep/AGENTS.md"),
        "DEEP-RULE: never touch migrations/",
    );
    write(&root.join("sub/deep/CLAUDE.md"), "DEEP-CLAUDE: never read");
    let cwd = root.join("sub").join("deep");

    let mut client = env.daemon.client();
    let info = client.call("session/new", json!({"cwd": cwd}));
    let session = info["sessionId"].as_str().unwrap().to_owned();
    let paths: Vec<&str> = info["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["path"].as_str().unwrap())
        .collect();
    let want = [
        env.dir.config_dir().join("AGENTS.md"),
        root.join("AGENTS.md"),
        root.join("sub").join("CLAUDE.md"),
        root.join("sub").join("deep").join("AGENTS.md"),
    ];
    let want: Vec<String> = want.iter().map(|p| p.display().to_string()).collect();
    assert_eq!(paths, want);
    assert_eq!(info["instructions"][1]["bytes"], 25);
    assert_eq!(info["instructions"][1]["truncated"], false);

    env.fake.push(openai::text(&["ok"]));
    client.prompt(&session, "first", no_questions);
    let first = system(&env.fake.wait_for_requests(1)[0].body);
    let at = positions(
        &first,
        &["USER-RULE", "ROOT-RULE", "CLAUDE-FALLBACK", "DEEP-RULE"],
    );
    assert!(at.windows(2).all(|w| w[0] < w[1]), "out of order: {first}");
    assert!(!first.contains("ABOVE-THE-ROOT") && !first.contains("DEEP-CLAUDE"));
    // The default prompt comes first, the instructions after it.
    assert!(first.starts_with("You are zeroclaw"), "{first}");

    // The next turn reads the changed file, and a file removed is gone.
    write(&root.join("AGENTS.md"), "ROOT-RULE-CHANGED: run make check");
    std::fs::remove_file(root.join("sub/CLAUDE.md")).unwrap();
    env.fake.push(openai::text(&["ok again"]));
    client.prompt(&session, "second", no_questions);
    let second = system(&env.fake.wait_for_requests(2)[1].body);
    positions(&second, &["USER-RULE", "ROOT-RULE-CHANGED", "DEEP-RULE"]);
    assert!(!second.contains("ROOT-RULE:") && !second.contains("CLAUDE-FALLBACK"));

    let context = client.call("session/context", json!({"sessionId": session}));
    assert_eq!(context["projectRoot"], json!(root.display().to_string()));
    assert_eq!(context["instructions"].as_array().unwrap().len(), 3);
    assert_eq!(context["warnings"], json!([]));
}

#[test]
fn instruction_files_are_cut_at_the_per_file_and_total_caps_and_the_cut_is_said() {
    let env = Env::new("", "");
    let root = &env.work;
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let kib = |c: &str, n: usize| c.repeat(n * 1024);
    // 40 KiB, shown 32; 20 KiB whole; 40, shown 32 (84 KiB so far); 40, shown the 12 left
    // of the 96 KiB total; and the last one not at all.
    write(&env.dir.config_dir().join("AGENTS.md"), &kib("u", 40));
    write(&root.join("AGENTS.md"), &kib("r", 20));
    write(&root.join("a/AGENTS.md"), &kib("a", 40));
    write(&root.join("a/b/AGENTS.md"), &kib("b", 40));
    write(&root.join("a/b/c/AGENTS.md"), "LAST-ONE");
    let cwd = root.join("a").join("b").join("c");

    let mut client = env.daemon.client();
    let session = client.new_session(&cwd);
    let context = client.call("session/context", json!({"sessionId": session}));
    let listed: Vec<(u64, bool)> = context["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["bytes"].as_u64().unwrap(),
                i["truncated"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            (40 * 1024, true),
            (20 * 1024, false),
            (40 * 1024, true),
            (40 * 1024, true)
        ]
    );
    let warnings = context["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let warning = warnings[0].as_str().unwrap();
    let last = root.join("a").join("b").join("c").join("AGENTS.md");
    assert!(warning.contains(&last.display().to_string()), "{warning}");
    assert!(warning.contains("96 KiB total cap"), "{warning}");

    env.fake.push(openai::text(&["ok"]));
    client.prompt(&session, "go", no_questions);
    let prompt = system(&env.fake.wait_for_requests(1)[0].body);
    assert!(prompt.contains(&kib("u", 32)) && !prompt.contains(&kib("u", 33)));
    assert!(prompt.contains(&kib("r", 20)));
    assert!(prompt.contains(&kib("b", 12)) && !prompt.contains(&kib("b", 13)));
    assert!(!prompt.contains("LAST-ONE"));
    assert!(
        prompt.contains("the first 32768 of its 40960 bytes (the 32 KiB cap per file)"),
        "{}",
        &prompt[..400]
    );
    assert!(prompt.contains("the first 12288 of its 40960 bytes (the 96 KiB cap on all"));
}

#[test]
fn skills_are_listed_by_description_and_read_whole_only_through_the_skill_tool() {
    let env = Env::new("", "");
    let root = &env.work;
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let skill = root.join(".zeroclaw/skills/release-notes");
    write(
        &skill.join("SKILL.md"),
        "---\nname: release-notes\ndescription: Write release notes from a list of changes.\n\
         metadata:\n  author: us\n---\n\n# Release notes\n\nSKILL-BODY: group the changes.\n",
    );
    write(
        &skill.join("references/style.md"),
        "STYLE-GUIDE: short lines",
    );
    write(&root.join("secret.txt"), "SECRET");
    // Malformed, and a name taken: both skipped with a warning, the turn goes on.
    write(
        &root.join(".claude/skills/broken/SKILL.md"),
        "---\nname: broken\ndescription: never closed\n",
    );
    write(
        &env.dir.config_dir().join("skills/release-notes/SKILL.md"),
        "---\nname: release-notes\ndescription: The user's own.\n---\nUSER-BODY\n",
    );
    write(
        &env.dir.config_dir().join("skills/lint/SKILL.md"),
        "---\nname: lint\ndescription: \"Run the linters: all of them.\"\n---\nLINT-BODY\n",
    );

    let mut client = env.daemon.client();
    let session = client.new_session(root);
    let context = client.call("session/context", json!({"sessionId": session}));
    let names: Vec<&str> = context["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["release-notes", "lint"]);
    assert_eq!(
        context["skills"][1]["description"],
        "Run the linters: all of them."
    );
    let warnings = context["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].as_str().unwrap().contains("broken"));
    assert!(warnings[0].as_str().unwrap().contains("no closing `---`"));
    assert!(warnings[1].as_str().unwrap().contains("is taken"));

    let call = |id: &str, args: Value| tool_call(id, "skill", args, 1);
    env.fake.push(call("c1", json!({"name": "release-notes"})));
    env.fake.push(call(
        "c2",
        json!({"name": "release-notes", "file": "references/style.md"}),
    ));
    env.fake.push(call(
        "c3",
        json!({"name": "release-notes", "file": "../../../secret.txt"}),
    ));
    env.fake.push(call("c4", json!({"name": "nope"})));
    env.fake.push(openai::text(&["done"]));
    let turn = client.prompt(&session, "write the notes", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let requests = env.fake.wait_for_requests(5);

    let first = &requests[0].body;
    let prompt = system(first);
    assert!(prompt.contains("- release-notes: Write release notes from a list of changes."));
    assert!(prompt.contains("- lint: Run the linters: all of them."));
    assert!(!prompt.contains("SKILL-BODY") && !prompt.contains("USER-BODY"));
    assert!(!first.to_string().contains("SKILL-BODY"));
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(offered.contains(&"skill"), "{offered:?}");

    let last = &requests[4].body;
    let body = tool_content(last, "c1");
    assert!(body.contains("SKILL-BODY: group the changes."), "{body}");
    assert!(
        body.contains("- references/style.md") && !body.contains("metadata"),
        "{body}"
    );
    assert_eq!(tool_content(last, "c2"), "STYLE-GUIDE: short lines");
    let escape = tool_content(last, "c3");
    assert!(
        escape.contains("not a path inside the skill's folder"),
        "{escape}"
    );
    assert!(!escape.contains("SECRET"));
    let unknown = tool_content(last, "c4");
    assert!(unknown.contains("release-notes, lint"), "{unknown}");
    // The tool needs no approval: the turn asked nothing.
    assert!(turn.of_type("approval_request").is_empty());
}

#[test]
fn custom_commands_are_listed_and_expanded_with_their_arguments() {
    let env = Env::new("", "");
    let root = &env.work;
    std::fs::create_dir_all(root.join(".git")).unwrap();
    write(
        &root.join(".zeroclaw/commands/fix-issue.md"),
        "---\ndescription: Fix a GitHub issue\nargument-hint: \"[number] [priority]\"\n---\n\
         Fix issue #$1 (priority: $2). All of it: $ARGUMENTS\n",
    );
    write(
        &root.join(".zeroclaw/commands/summarise.md"),
        "Summarise the diff.\n",
    );
    write(
        &root.join(".claude/commands/broken.md"),
        "---\ndescription: \"never closed\n---\nbody\n",
    );
    write(
        &env.dir.config_dir().join("commands/fix-issue.md"),
        "the user's own, hidden by the project's\n",
    );
    write(
        &env.dir.config_dir().join("commands/mine.md"),
        "MINE $ARGUMENTS\n",
    );
    write(&root.join(".zeroclaw/commands/notes.txt"), "not a command");

    let mut client = env.daemon.client();
    let session = client.new_session(root);
    let list = client.call("commands/list", json!({"sessionId": session}));
    let commands = list["commands"].as_array().unwrap();
    let names: Vec<&str> = commands
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["fix-issue", "summarise", "mine"]);
    assert_eq!(commands[0]["description"], "Fix a GitHub issue");
    assert_eq!(commands[0]["argumentHint"], "[number] [priority]");
    assert!(commands[1].get("description").is_none(), "{list}");

    let context = client.call("session/context", json!({"sessionId": session}));
    let warnings = context["warnings"].to_string();
    assert!(warnings.contains("broken.md skipped"), "{warnings}");
    assert!(warnings.contains("is taken"), "{warnings}");

    let expand = |client: &mut Client, name: &str, arguments: &str| {
        client.call(
            "commands/expand",
            json!({"sessionId": session, "name": name, "arguments": arguments}),
        )["prompt"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        expand(&mut client, "fix-issue", r#"123 "very high""#),
        "Fix issue #123 (priority: very high). All of it: 123 \"very high\"\n"
    );
    assert_eq!(
        expand(&mut client, "summarise", "only src/"),
        "Summarise the diff.\n\nARGUMENTS: only src/"
    );
    assert_eq!(expand(&mut client, "mine", ""), "MINE \n");
    let error = client.fail(
        "commands/expand",
        json!({"sessionId": session, "name": "nope"}),
    );
    assert_eq!(error["code"], -32602, "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("fix-issue, summarise, mine")
    );
    let error = client.fail("commands/list", json!({"sessionId": "no-such-session"}));
    assert_eq!(error["code"], -32000, "{error}");
}

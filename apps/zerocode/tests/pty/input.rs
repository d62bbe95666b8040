//! Input and commands: multi-line prompts (a bracketed paste, Alt-Enter, a trailing `\`),
//! `@path` attachments, Tab completion, Ctrl-R across runs, `/model`, `/status`, `/clear`.

use crate::harness::*;
use serde_json::Value;
use zeroclaw_testkit::openai;

/// The text of the last user message of a recorded chat request.
fn user_text(body: &Value) -> String {
    match &last_user_message(body)["content"] {
        Value::String(text) => text.clone(),
        parts => parts
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect(),
    }
}

/// Sends `keys` as a prompt; the fake model answers `reply`; returns the request's user
/// text once the turn ended.
fn turn(env: &Env, term: &mut Term, keys: &str, reply: &str, n: usize) -> Value {
    env.fake.push(openai::text(&[reply]));
    term.send(keys);
    term.expect(reply);
    term.expect("[end_turn]");
    term.expect("> ");
    env.fake.wait_for_requests(n)[n - 1].body.clone()
}

#[test]
fn a_pasted_block_alt_enter_and_a_trailing_backslash_each_make_one_prompt() {
    let env = Env::new();
    let mut term = env.ready(&[]);

    // A bracketed paste of two lines, then Enter: one prompt with both lines.
    let body = turn(
        &env,
        &mut term,
        "\x1b[200~line one\nline two\x1b[201~\r",
        "Pasted.",
        1,
    );
    assert_eq!(user_text(&body), "line one\nline two");

    // Alt-Enter (ESC, CR) adds a line instead of sending.
    let body = turn(&env, &mut term, "first half\x1b\rsecond half\r", "Alt.", 2);
    assert_eq!(user_text(&body), "first half\nsecond half");

    // A trailing backslash continues on the next line; the backslash goes.
    let body = turn(&env, &mut term, "alpha\\\rbeta\\\rgamma\r", "Backslash.", 3);
    assert_eq!(user_text(&body), "alpha\nbeta\ngamma");

    // A pasted backslash at a line's end is the user's text, kept as it is.
    let body = turn(
        &env,
        &mut term,
        "\x1b[200~ls \\\n  -l\x1b[201~\r",
        "Kept.",
        4,
    );
    assert_eq!(user_text(&body), "ls \\\n  -l");

    // The history keeps the pasted prompt as one entry: its first (Alt-<) is both lines.
    let body = turn(&env, &mut term, "\x1b<\r", "Again.", 5);
    assert_eq!(user_text(&body), "line one\nline two");

    term.quit();
    let history = std::fs::read_to_string(env.config_dir.join("data/zerocode_history")).unwrap();
    assert!(
        history.lines().any(|l| l == "line one\\nline two"),
        "one entry, its new line escaped: {history}"
    );
}

#[test]
fn mentions_attach_files_and_tab_completes_names_and_commands() {
    let env = Env::new();
    std::fs::create_dir(env.work.join("src")).unwrap();
    std::fs::write(
        env.work.join("src/main.rs"),
        "fn main() { zc_marker_42(); }\n",
    )
    .unwrap();
    std::fs::write(env.work.join("notes.md"), "the note says zc-note-7\n").unwrap();
    std::fs::write(env.work.join("blob.bin"), b"\x00\x01\x02").unwrap();
    std::fs::write(env.work.parent().unwrap().join("outside.txt"), "zc-outside").unwrap();
    let mut term = env.ready(&[]);

    // Tab completes a directory, then a file in it; the file's content is attached.
    env.fake.push(openai::text(&["Read it."]));
    term.send("explain @s\t");
    term.send("m\t");
    term.send(" and @no\t\r");
    let attached = term.expect("Read it.");
    assert!(
        attached.contains("attached: src/main.rs (30 B) · notes.md (24 B)"),
        "{attached}"
    );
    term.expect("> ");
    let text = user_text(&env.fake.wait_for_requests(1)[0].body);
    assert!(
        text.starts_with("explain @src/main.rs and @notes.md\n\nAttached file `src/main.rs` (30 bytes):\n```\nfn main() { zc_marker_42(); }\n```"),
        "{text}"
    );
    assert!(text.contains("the note says zc-note-7"), "{text}");

    // Missing, binary and outside files are refused, each with its reason, and the text is
    // sent as typed.
    env.fake.push(openai::text(&["Nothing attached."]));
    term.send("look at @missing.txt @blob.bin @../outside.txt\r");
    let refused = term.expect("Nothing attached.");
    assert!(
        refused.contains("@missing.txt: no such file in"),
        "{refused}"
    );
    assert!(
        refused.contains("@blob.bin: a binary file; not attached"),
        "{refused}"
    );
    assert!(
        refused.contains("@../outside.txt: outside the session's directory"),
        "{refused}"
    );
    term.expect("> ");
    let text = user_text(&env.fake.wait_for_requests(2)[1].body);
    assert_eq!(text, "look at @missing.txt @blob.bin @../outside.txt");

    // Tab twice lists the commands a prefix can be, each with its line of help.
    term.send("/c\t\t");
    term.expect("start a new session in this session's directory");
    term.expect("fold older turns into a summary the model is sent instead");
    // Ctrl-U clears the line; Tab completes a command.
    term.send("\x15/sta\t\r");
    term.expect("running   no");
    term.expect("> ");
    term.quit();
}

#[test]
fn ctrl_r_finds_a_prompt_from_an_earlier_run() {
    let env = Env::new();
    let mut term = env.zerocode(&[]);
    term.expect("> ");
    turn(&env, &mut term, "remember the zebra-17\r", "Noted.", 1);
    turn(&env, &mut term, "something else\r", "Fine.", 2);
    term.quit();
    env.wait_daemon_gone();

    let mut term = env.ready(&[]);
    term.send("\x12zebra");
    term.expect("remember the zebra-17");
    let body = turn(&env, &mut term, "\r", "Found it.", 3);
    assert_eq!(user_text(&body), "remember the zebra-17");
    term.quit();
}

#[test]
fn model_sets_the_model_the_provider_is_asked_for_and_status_shows_it() {
    let env = Env::new();
    let mut term = env.zerocode(&[]);
    let banner = term.expect("/help for commands");
    let id = short_id(&banner, "session ");
    term.expect("> ");

    term.send("/model\r");
    term.expect("model: fake");
    term.expect("> ");
    let body = turn(&env, &mut term, "with the default\r", "Default.", 1);
    assert_eq!(body["model"], "fake");

    term.send("/model bigger-model\r");
    term.expect("model: bigger-model (was fake; from the next turn)");
    term.expect("> ");
    let body = turn(&env, &mut term, "with the bigger one\r", "Bigger.", 2);
    assert_eq!(body["model"], "bigger-model");

    // A bad name is refused with the daemon's reason; the model stays.
    term.send(&format!("/model {}\r", "m".repeat(300)));
    term.expect(
        "cannot set the model: invalid params: `model` is 300 bytes; at most 256 are allowed (error -32602)",
    );
    term.expect("> ");

    term.send("/status\r");
    let status = term.expect("running   no");
    for row in [
        "  daemon    ",
        &format!("  session   {id}"),
        &format!("  cwd       {}", env.work.display()),
        "  model     bigger-model",
        "  messages  4",
    ] {
        assert!(status.contains(row), "{row:?} in {status}");
    }
    assert!(
        status.contains(&format!("  endpoint  {}", env.socket.display())),
        "{status}"
    );
    term.expect("> ");
    term.quit();
}

#[test]
fn clear_starts_a_new_session_in_the_directory_of_the_current_one() {
    let env = Env::new();
    let other = env.work.parent().unwrap().join("other");
    std::fs::create_dir(&other).unwrap();
    let other = other.display().to_string();

    // A session in another directory.
    let mut term = env.zerocode(&["--cwd", &other]);
    let banner = term.expect("/help for commands");
    let first = short_id(&banner, "session ");
    term.expect("> ");
    term.quit();
    env.wait_daemon_gone();

    // zerocode in its own directory loads it; /clear starts a new one there, /new here.
    let mut term = env.ready(&[]);
    term.send(&format!("/load {first}\r"));
    term.expect(&format!("now in session {first}"));
    term.expect("> ");
    term.send("/clear\r");
    let cleared = term.expect(&format!(" · {other}"));
    let second = short_id(&cleared, "new session ");
    assert_ne!(second, first);
    term.expect("> ");
    term.send("/status\r");
    let status = term.expect("running   no");
    assert!(status.contains(&format!("  cwd       {other}")), "{status}");
    assert!(status.contains("  messages  0"), "{status}");
    term.expect("> ");
    term.send("/new\r");
    term.expect(&format!(" · {}", env.work.display()));
    term.expect("> ");
    term.send("/help\r");
    let help = term.expect("/quit");
    for command in [
        "/status",
        "/model [NAME]",
        "/clear",
        "/sessions",
        "/load ID|N",
    ] {
        assert!(help.contains(command), "{command} in {help}");
    }
    term.expect("> ");
    term.quit();
}

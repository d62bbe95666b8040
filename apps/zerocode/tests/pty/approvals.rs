//! Approvals answered with a single key, no Enter (y once, a always, n or Esc rejects, an
//! arrow key is not Esc), after a preview of what the call would do: a coloured diff for an
//! edit, the new content or a diff against the old for a write (plain with `NO_COLOR`), the
//! full command and its cwd for bash.

use crate::harness::*;
use zeroclaw_testkit::openai;

fn bash(id: &str, command: &str) -> zeroclaw_testkit::Reply {
    let args = serde_json::json!({ "command": command }).to_string();
    openai::Builder::new()
        .tool_call(0, id, "bash", &args, 2)
        .build()
}

#[test]
fn one_key_answers_with_no_enter_and_always_is_not_asked_again() {
    let env = Env::new();
    let mut term = env.ready(&[]);

    env.fake.push(bash("call_1", "echo one-$((1+1))"));
    env.fake.push(openai::text(&["First done."]));
    term.send("run one\r");
    term.expect("Allow bash `echo one-$((1+1))`? [y]es / [n]o / [a]lways");
    // Just the key: the call runs.
    term.send("y");
    term.expect("one-2");
    term.expect("First done.");
    term.expect("> ");

    env.fake.push(bash("call_2", "echo two-$((2+2))"));
    env.fake.push(bash("call_3", "echo three-$((3+3))"));
    env.fake.push(openai::text(&["All done."]));
    term.send("run two more\r");
    term.expect("Allow bash `echo two-$((2+2))`?");
    term.send("a");
    term.expect("two-4");
    term.expect("three-6");
    let end = term.expect("All done.");
    assert!(
        !end.contains("Allow bash `echo three"),
        "asked again after always: {end}"
    );
    term.expect("> ");
    assert_eq!(term.screen().matches("Allow bash").count(), 2);
    term.quit();
}

#[test]
fn esc_rejects_and_an_arrow_key_is_not_taken_for_esc() {
    let env = Env::new();
    let mut term = env.ready(&[]);
    let made = env.work.join("made.txt");
    env.fake.push(bash("call_1", "touch made.txt"));
    env.fake.push(openai::text(&["Understood, not made."]));
    term.send("make it\r");
    term.expect("Allow bash `touch made.txt`?");
    // An arrow key's sequence starts with Esc: it is no answer, only a hint.
    term.send("\x1b[A");
    term.expect("press y (allow once), a (always), n or Esc (reject)");
    term.expect("Allow bash `touch made.txt`?");
    term.send("\x1b");
    term.expect("rejected");
    term.expect("Understood, not made.");
    term.expect("> ");
    assert!(!made.exists(), "the rejected command ran");
    let requests = env.fake.wait_for_requests(2);
    assert!(
        requests[1].body.to_string().contains("rejected"),
        "the model is told"
    );
    term.quit();
}

#[test]
fn an_edit_is_previewed_as_a_coloured_diff_before_the_question() {
    let env = Env::new();
    let file = env.work.join("greet.txt");
    std::fs::write(&file, "line 1\nline 2\nhello world\nline 4\n").unwrap();
    let mut term = env.ready(&[]);
    let args = serde_json::json!({
        "path": "greet.txt", "old_text": "hello world", "new_text": "hello there"
    });
    env.fake.push(
        openai::Builder::new()
            .tool_call(0, "call_1", "edit_file", &args.to_string(), 2)
            .build(),
    );
    env.fake.push(openai::text(&["Edited."]));
    term.send("change the greeting\r");
    let shown = term.expect("Allow edit_file `greet.txt`?");
    assert!(
        shown.contains(&format!("changes to {}", file.display())),
        "{shown}"
    );
    let diff = "@@ -1,4 +1,4 @@\n line 1\n line 2\n-hello world\n+hello there\n line 4\n";
    assert!(shown.contains(diff), "{shown}");
    // Coloured: removed red, added green, the hunk header cyan, all before the question.
    let raw = term.raw();
    let question = raw.find("Allow edit_file").unwrap();
    for styled in [
        "\x1b[36m@@ -1,4 +1,4 @@\x1b[0m",
        "\x1b[31m-hello world\x1b[0m",
        "\x1b[32m+hello there\x1b[0m",
    ] {
        let at = raw
            .find(styled)
            .unwrap_or_else(|| panic!("{styled:?} in {raw:?}"));
        assert!(at < question, "{styled:?} after the question");
    }
    term.send("y");
    term.expect("Edited.");
    term.expect("> ");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "line 1\nline 2\nhello there\nline 4\n"
    );
    term.quit();
}

fn write(id: &str, path: &str, content: &str) -> zeroclaw_testkit::Reply {
    let args = serde_json::json!({ "path": path, "content": content }).to_string();
    openai::Builder::new()
        .tool_call(0, id, "write_file", &args, 2)
        .build()
}

#[test]
fn a_write_shows_the_new_file_or_its_diff_against_the_old_one_in_plain_text_with_no_color() {
    let env = Env::new();
    let old = env.work.join("notes.txt");
    std::fs::write(&old, "alpha\nbeta\ngamma\n").unwrap();
    let mut term = env.ready_no_color(&[]);

    env.fake
        .push(write("call_1", "fresh.txt", "first line\nsecond line\n"));
    env.fake
        .push(write("call_2", "notes.txt", "alpha\nBETA\ngamma\n"));
    env.fake.push(openai::text(&["Both written."]));
    term.send("write them\r");
    let first = term.expect_raw("Allow write_file `fresh.txt`?");
    let shown = screen(&first);
    let new_file = format!(
        "new file {}\n@@ -0,0 +1,2 @@\n+first line\n+second line\n",
        env.work.join("fresh.txt").display()
    );
    assert!(shown.contains(&new_file), "{shown}");
    term.send("y");
    let second = term.expect_raw("Allow write_file `notes.txt`?");
    let shown = screen(&second);
    let diff = format!(
        "changes to {}\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n",
        old.display()
    );
    assert!(shown.contains(&diff), "{shown}");
    term.send("y");
    let rest = term.expect_raw("Both written.");
    // NO_COLOR: the previews and everything around them are clean text.
    for raw in [&first, &second, &rest] {
        assert_eq!(sgr_sequences(raw), Vec::<String>::new());
    }
    term.expect("> ");
    assert_eq!(
        std::fs::read_to_string(env.work.join("fresh.txt")).unwrap(),
        "first line\nsecond line\n"
    );
    assert_eq!(
        std::fs::read_to_string(&old).unwrap(),
        "alpha\nBETA\ngamma\n"
    );
    term.quit();
}

#[test]
fn bash_shows_the_whole_command_and_its_cwd_before_the_question() {
    let env = Env::new();
    let mut term = env.ready(&[]);
    // Longer than the question's one-line summary can hold.
    let command = format!("echo start-{} && echo the-end", "x".repeat(120));
    env.fake.push(bash("call_1", &command));
    env.fake.push(openai::text(&["Fine."]));
    term.send("run the long one\r");
    let shown = term.expect("Allow bash");
    let raw = term.raw();
    assert!(raw.contains(&format!("$ {command}")), "{shown}");
    assert!(
        raw.contains(&format!("in {}", env.work.display())),
        "{shown}"
    );
    term.expect("[a]lways");
    term.send("n");
    term.expect("rejected");
    term.expect("Fine.");
    term.expect("> ");
    term.quit();
}

//! Subagents in zerocode: a `task` call's child is nested under the call and collapsed —
//! its steps on the live line while it runs, one summary line when it returns, its text
//! never shown as the parent's answer — and its approval is asked as the subagent's and
//! answered here. The summary names the child session, which `/load` opens with its log.

use crate::harness::*;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

/// Writes an agent profile into the project (the work dir).
fn profile(env: &Env, name: &str, text: &str) {
    let dir = env.work.join(".zeroclaw").join("agents");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.md")), text).unwrap();
}

const RUNNER: &str =
    "---\ndescription: Runs commands\ntools:\n  - bash\n---\nRun what you are told.";

fn call(id: &str, name: &str, args: Value) -> zeroclaw_testkit::Reply {
    openai::Builder::new()
        .tool_call(0, id, name, &args.to_string(), 2)
        .build()
}

/// The content of the tool message answering `call` in a provider request.
fn tool_content(body: &Value, call: &str) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call)
        .unwrap_or_else(|| panic!("no result for {call} in {body}"))["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_task_calls_child_runs_nested_under_it_and_collapses_to_a_summary_line() {
    let env = Env::with("[approvals]\nbash = \"allow\"");
    profile(&env, "runner", RUNNER);
    // The child's command blocks on a FIFO until the test writes to it: the child is
    // still running while the live line is read.
    let fifo = env.work.join("go.fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    env.fake.push(call(
        "call_task",
        "task",
        json!({"description": "Check the pipe", "prompt": "run cat go.fifo", "agent": "runner"}),
    ));
    env.fake
        .push(call("call_bash", "bash", json!({"command": "cat go.fifo"})));
    env.fake
        .push(openai::text(&["CHILD-ANSWER: the pipe ", "said piped"]));
    env.fake.push(openai::text(&["Parent wrap-up."]));
    let mut term = env.zerocode(&[]);
    let banner = term.expect("/help for commands");
    let parent = short_id(&banner, "session ");
    term.expect("> ");

    term.send("look at the pipe\r");
    term.expect("Check the pipe (runner)");
    // While the child runs, the live line says what it does, under its call.
    term.expect("subagent Check the pipe (runner) · 1 tool call · bash `cat go.fifo`");
    std::fs::write(&fifo, "piped\n").unwrap();
    term.expect(
        "└ subagent Check the pipe (runner): 1 tool call — answer: CHILD-ANSWER: the pipe said piped · /load ",
    );
    let child = {
        let rest = term.expect(" for its log");
        rest.chars()
            .take_while(char::is_ascii_hexdigit)
            .collect::<String>()
    };
    assert_eq!(child.len(), 8, "the child's short id: {child:?}");
    term.expect("Parent wrap-up.");
    term.expect("[end_turn]");
    term.expect("> ");

    // Collapsed: the child's call is not in the scrollback, and its answer only in the
    // summary, never as the parent's answer.
    let screen = term.screen();
    assert!(
        screen.contains("⏺ task  Check the pipe (runner)\n  └ subagent Check the pipe"),
        "{screen}"
    );
    assert!(!screen.contains("⏺ bash"), "{screen}");
    assert_eq!(screen.matches("CHILD-ANSWER").count(), 1, "{screen}");
    let requests = env.fake.wait_for_requests(4);
    assert_eq!(
        tool_content(&requests[3].body, "call_task"),
        "CHILD-ANSWER: the pipe said piped"
    );

    // The child session named in the summary holds the whole log.
    term.send(&format!("/load {child}\r"));
    term.expect("cat go.fifo");
    term.expect("a subagent's session: a `task` call of session ");
    term.expect(&format!("/load {parent} goes back"));
    term.expect("> ");
    // The parent's replay: the call and its answer (the child's events are the child's).
    term.send(&format!("/load {parent}\r"));
    term.expect("Check the pipe (runner)");
    term.expect("└ subagent answered: CHILD-ANSWER: the pipe said piped");
    term.expect("Parent wrap-up.");
    term.expect("> ");
    let screen = term.screen();
    assert!(
        screen.contains("⏺ bash  cat go.fifo"),
        "the child's log: {screen}"
    );
    assert_eq!(
        screen.matches("⏺ task  Check the pipe (runner)").count(),
        2,
        "the turn, then the parent's replay: {screen}"
    );
    term.quit();
}

#[test]
fn a_childs_approval_is_asked_as_the_subagents_and_answering_it_lets_the_child_go_on() {
    let env = Env::new();
    profile(&env, "runner", RUNNER);
    env.fake.push(call(
        "call_task",
        "task",
        json!({"description": "Run it", "prompt": "run echo", "agent": "runner"}),
    ));
    env.fake.push(call(
        "call_bash",
        "bash",
        json!({"command": "echo child-$((40+2))"}),
    ));
    env.fake.push(openai::text(&["it printed child-42"]));
    env.fake.push(openai::text(&["All done."]));
    let mut term = env.ready(&[]);
    term.send("go\r");
    term.expect("Run it (runner)");
    // In full, behind the gutter, labelled as the subagent's.
    term.expect("subagent Run it (runner) asks:");
    term.expect("│ Allow bash `echo child-$((40+2))`? [y]es / [n]o / [a]lways");
    let screen = term.screen();
    for nested in [
        "  │ subagent Run it (runner) asks:",
        "  │ $ echo child-$((40+2))",
    ] {
        assert!(screen.contains(nested), "{nested:?} in\n{screen}");
    }
    term.send("y");
    term.expect(
        "└ subagent Run it (runner): 1 tool call, 1 approval — answer: it printed child-42",
    );
    term.expect("All done.");
    term.expect("> ");
    // The answer reached the child: its command ran.
    let requests = env.fake.wait_for_requests(4);
    let ran = tool_content(&requests[2].body, "call_bash");
    assert!(ran.contains("child-42"), "{ran}");
    term.quit();
}

//! Streaming, approvals, cancelling, commands, MCP and losing the daemon: the first tests.

use crate::harness::*;
use expectrl::process::unix::WaitStatus;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use zeroclaw_testkit::openai;

#[test]
fn a_session_streams_asks_and_cancels_in_a_pseudo_terminal() {
    let env = Env::new();
    let mut term = env.zerocode(&[]);

    // zerocode started its own ephemeral daemon.
    let banner = term.expect("/help for commands");
    assert!(banner.contains("daemon "), "{banner}");
    assert!(banner.contains(&env.work.display().to_string()), "{banner}");
    term.expect("> ");

    // A prompt streams: the thought dimmed on its own line, then the answer.
    env.fake.push(
        openai::Builder::new()
            .reasoning("The user wants")
            .reasoning(" a greeting.")
            .text("Hello")
            .text(" from the")
            .text(" fake model.")
            .usage(10, 3)
            .build(),
    );
    term.send("say hello\r");
    term.expect("✻ ");
    // Each chunk is dimmed on its own, so the raw text comes in pieces.
    term.expect("The user wants");
    term.expect(" a greeting.");
    let answer = term.expect("Hello from the fake model.");
    assert!(
        answer.starts_with('\n'),
        "the answer starts on a line of its own: {answer:?}"
    );
    term.expect("[end_turn]  10 in · 3 out tokens");
    term.expect("> ");

    // A bash call: the call line, the approval question, y, the output, the answer.
    env.fake.push(
        openai::Builder::new()
            .text("Let me run it.")
            .tool_call(
                0,
                "call_1",
                "bash",
                r#"{"command":"echo zc-$((6*7)); seq 1 8"}"#,
                2,
            )
            .build(),
    );
    env.fake.push(openai::text(&["The command printed it."]));
    term.send("run the command\r");
    term.expect("Let me run it.");
    term.expect("⏺ ");
    term.expect("echo zc-$((6*7)); seq 1 8");
    term.expect("Allow bash `echo zc-$((6*7)); seq 1 8`? [y]es / [n]o / [a]lways");
    term.send("y");
    // The output, folded after six lines; the exit code on a line of its own after.
    let output = term.expect("… 3 more lines");
    term.expect("exit code 0");
    assert!(
        output.contains("zc-42") && output.contains("5") && !output.contains("6\n"),
        "{output}"
    );
    term.expect("The command printed it.");
    term.expect("[end_turn]");
    term.expect("> ");

    // ask_user: the question as a form, an answer, and the answer reaches the model.
    env.fake.push(
        openai::Builder::new()
            .tool_call(
                0,
                "call_2",
                "ask_user",
                r#"{"question":"What is your favourite colour?"}"#,
                0,
            )
            .build(),
    );
    env.fake.push(openai::text(&["Teal it is."]));
    term.send("ask me something\r");
    term.expect("? What is your favourite colour?");
    term.expect("answer: ");
    term.send("teal-42\r");
    term.expect("Teal it is.");
    term.expect("[end_turn]");
    term.expect("> ");
    let requests = env.fake.wait_for_requests(5);
    let after_answer = requests[4].body.to_string();
    assert!(after_answer.contains("teal-42"), "{after_answer}");

    // A stalled stream, then Ctrl-C: the turn is cancelled.
    env.fake.push(
        openai::Builder::new()
            // A completed paragraph: an open one is held until it completes.
            .text("thinking about it\n\n")
            .stall()
            .build(),
    );
    term.send("take your time\r");
    term.expect("thinking about it");
    term.send("\x03");
    term.expect("cancelling");
    term.expect("[cancelled]");
    term.expect("> ");

    term.quit();
    let history = std::fs::read_to_string(env.config_dir.join("data/zerocode_history")).unwrap();
    assert!(
        history.contains("say hello") && history.contains("/quit"),
        "{history}"
    );
    assert!(
        !history.contains("teal-42"),
        "answers to questions stay out of the history"
    );

    // The ephemeral daemon it started goes away with its last client.
    env.wait_daemon_gone();
}

#[test]
fn an_mcp_servers_tool_from_the_config_is_asked_about_and_runs() {
    let env = Env::with(&format!(
        "[[mcp_servers]]\nname = \"test\"\ncommand = {:?}\n",
        mcp_test_server().display().to_string()
    ));
    let mut term = env.ready(&[]);
    env.fake.push(
        openai::Builder::new()
            .tool_call(0, "call_1", "test__echo", r#"{"text":"hello from mcp"}"#, 2)
            .build(),
    );
    env.fake.push(openai::text(&["The server echoed it."]));
    term.send("echo it through mcp\r");
    term.expect("Allow test__echo");
    term.send("y");
    term.expect("hello from mcp");
    term.expect("The server echoed it.");
    term.expect("> ");
    term.quit();
}

#[test]
fn commands_sessions_and_idle_keys() {
    let env = Env::new();
    let mut term = env.zerocode(&[]);
    let banner = term.expect("/help for commands");
    let first = short_id(&banner, "session ");
    term.expect("> ");
    env.fake.push(openai::text(&["Hi back."]));
    term.send("hi there\r");
    term.expect("Hi back.");
    term.expect("[end_turn]");
    term.expect("> ");

    // A rejected call: its error result is marked.
    env.fake.push(
        openai::Builder::new()
            .tool_call(0, "call_1", "bash", r#"{"command":"rm -rf build"}"#, 0)
            .build(),
    );
    env.fake.push(openai::text(&["I will not, then."]));
    term.send("clean up\r");
    term.expect("Allow bash `rm -rf build`? [y]es / [n]o / [a]lways");
    term.send("n\r");
    term.expect("✗  the user rejected this bash call");
    term.expect("I will not, then.");
    term.expect("> ");

    // A failed turn (the provider has no reply for it): one readable line.
    term.send("and now?\r");
    let failure = term.expect("(error -");
    assert!(failure.contains("the turn failed: "), "{failure}");
    term.expect("> ");

    term.send("/help\r");
    term.expect("Ctrl-C cancels it");
    term.expect("> ");
    term.send("/bogus\r");
    term.expect("unknown command /bogus; /help lists the commands");
    term.expect("> ");
    term.send("/cancel\r");
    term.expect("nothing is running");
    term.expect("> ");
    term.send("\x03");
    term.expect("(Ctrl-C again or /quit to exit)");
    term.expect("> ");

    term.send("/new\r");
    let second = short_id(&term.expect("> "), "new session ");
    assert_ne!(first, second);
    term.send("/sessions\r");
    let list = term.expect("/load N resumes one");
    assert!(list.contains(&first) && list.contains(&second), "{list}");
    term.expect("> ");

    // Back to the first session by its short id: its history is replayed.
    term.send(&format!("/load {first}\r"));
    let replay = term.expect(&format!("now in session {first}"));
    assert!(replay.contains("> hi there"), "{replay}");
    assert!(replay.contains("Hi back."), "{replay}");
    term.expect("> ");

    // Ctrl-C twice at the prompt quits.
    term.send("\x03");
    term.expect("(Ctrl-C again or /quit to exit)");
    term.expect("> ");
    term.send("\x03");
    assert!(
        matches!(term.exit_status(), WaitStatus::Exited(_, 0)),
        "{}",
        term.screen()
    );
    env.wait_daemon_gone();

    // --session with the short id resumes it, history first; Ctrl-D quits.
    let mut term = env.zerocode(&["--session", &first]);
    let start = term.expect("/help for commands");
    assert!(
        start.contains("> hi there") && start.contains("Hi back."),
        "{start}"
    );
    assert!(start.contains(&format!("session {first}")), "{start}");
    term.expect("> ");
    term.send("\x04");
    assert!(
        matches!(term.exit_status(), WaitStatus::Exited(_, 0)),
        "{}",
        term.screen()
    );
    env.wait_daemon_gone();

    // --resume offers a numbered list.
    let mut term = env.zerocode(&["--resume"]);
    let list = term.expect("Enter = new session]");
    let number = list
        .lines()
        .find(|l| l.contains(&first))
        .and_then(|l| l.trim().split(')').next())
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or_else(|| panic!("{first} is not in {list}"));
    term.send(&format!("{number}\r"));
    let start = term.expect("/help for commands");
    assert!(
        start.contains("Hi back.") && start.contains(&format!("session {first}")),
        "{start}"
    );
    term.expect("> ");
    term.send("/quit\r");
    assert!(
        matches!(term.exit_status(), WaitStatus::Exited(_, 0)),
        "{}",
        term.screen()
    );
    env.wait_daemon_gone();
}

#[test]
fn losing_the_daemon_restores_the_terminal_and_exits_1() {
    let env = Env::new();
    // A daemon of our own (not ephemeral), so the test can kill it.
    let mut daemon = Command::new(daemon_binary())
        .arg("--config-dir")
        .arg(&env.config_dir)
        .arg("daemon")
        .arg("--no-gateway")
        .env_remove("ZEROCLAW_SOCKET")
        .env_remove("ZEROCLAW_DATA_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + DAEMON_EXIT_TIMEOUT;
    while std::os::unix::net::UnixStream::connect(&env.socket).is_err() {
        assert!(
            Instant::now() < deadline,
            "the daemon did not start listening"
        );
        assert!(daemon.try_wait().unwrap().is_none(), "the daemon exited");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut term = env.ready(&[]);
    // The prompt is up: the line editor has the terminal in raw mode.
    assert!(!term.echoes());
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    term.expect("the daemon went away; your sessions are kept. Run zerocode again to start a new one (or `zeroclaw daemon`).");
    assert!(
        matches!(term.exit_status(), WaitStatus::Exited(_, 1)),
        "{}",
        term.screen()
    );
    assert!(term.echoes(), "the terminal was left without echo");
}

//! Permission modes in zerocode: Shift-Tab cycles the session's mode (`session/set_mode`)
//! keeping the line being typed, the prompt and the status line show it, plan mode reaches
//! the model, and a change made by another client is followed at the prompt; Shift-Tab
//! works while a turn runs too.

use crate::harness::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use zeroclaw_testkit::openai;

/// Shift-Tab, as a terminal sends it.
const SHIFT_TAB: &str = "\x1b[Z";

/// Another client of the daemon: NDJSON on its socket.
struct Other {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    next: u64,
}

impl Other {
    fn connect(env: &Env) -> Self {
        let writer = UnixStream::connect(&env.socket).unwrap();
        let reader = BufReader::new(writer.try_clone().unwrap());
        let mut other = Self {
            writer,
            reader,
            next: 0,
        };
        other.call("initialize", json!({"protocolVersion": 1}));
        other
    }

    /// Calls a method; its result (notifications before the answer are skipped).
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let request =
            json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        writeln!(self.writer, "{request}").unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.reader.read_line(&mut line).unwrap() > 0,
                "the daemon closed"
            );
            let frame: Value = serde_json::from_str(&line).unwrap();
            if frame["id"] == json!(self.next) {
                assert!(frame.get("error").is_none(), "{method} failed: {frame}");
                return frame["result"].clone();
            }
        }
    }
}

#[test]
fn shift_tab_cycles_the_mode_and_a_change_elsewhere_is_followed() {
    let env = Env::new();
    let mut term = env.zerocode(&[]);
    let banner = term.expect("/help for commands");
    let short = short_id(&banner, "session ");
    term.expect("> ");

    // Shift-Tab: the next mode, said in a line and in the prompt.
    term.send(SHIFT_TAB);
    term.expect("mode: accept-edits");
    term.expect("accept-edits > ");

    // Shift-Tab in the middle of a line keeps the line.
    term.send("look around");
    term.send(SHIFT_TAB);
    term.expect("mode: plan");
    term.expect("plan > look around");

    // Sent in plan mode: the model is offered only read-only tools, and the status line
    // says the mode.
    env.fake.push(openai::text(&["Planned."]));
    term.send("\r");
    term.expect("mode plan · Ctrl-C cancels");
    term.expect("Planned.");
    term.expect("plan > ");
    let request = &env.fake.wait_for_requests(1)[0];
    let tools: Vec<&str> = request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        tools.contains(&"exit_plan") && !tools.contains(&"write_file"),
        "{tools:?}"
    );
    assert!(request.body.to_string().contains("look around"));

    // Another client sets the mode: zerocode shows it at the prompt.
    let mut other = Other::connect(&env);
    let session = other.call("session/resolve", json!({"prefix": short}))["sessionId"].clone();
    other.call("session/load", json!({"sessionId": session}));
    other.call(
        "session/set_mode",
        json!({"sessionId": session, "mode": "default"}),
    );
    term.expect("mode: default");
    // The next turn runs in it, as its status line says.
    env.fake.push(openai::text(&["Back to asking."]));
    term.send("carry on\r");
    term.expect("mode default · Ctrl-C cancels");
    term.expect("Back to asking.");
    term.expect("> ");
    term.quit();
}

#[test]
fn shift_tab_while_a_turn_runs_changes_the_mode_at_once() {
    let env = Env::with("[approvals]\nbash = \"allow\"");
    // The command blocks on a FIFO until the test writes to it: the turn is still running
    // while Shift-Tab is pressed.
    let fifo = env.work.join("go.fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let args = json!({ "command": "cat go.fifo" }).to_string();
    env.fake.push(
        openai::Builder::new()
            .tool_call(0, "call_1", "bash", &args, 2)
            .build(),
    );
    env.fake.push(openai::text(&["Finished."]));
    let mut term = env.zerocode(&[]);
    let banner = term.expect("/help for commands");
    let short = short_id(&banner, "session ");
    term.expect("> ");
    term.send("wait on the pipe\r");
    term.expect("cat go.fifo");
    term.expect("mode default · Ctrl-C cancels");

    term.send(SHIFT_TAB);
    term.expect("mode: accept-edits");
    // The running turn's status line says it, and so does the daemon.
    term.expect("mode accept-edits · Ctrl-C cancels");
    let mut other = Other::connect(&env);
    let session = other.call("session/resolve", json!({"prefix": short}))["sessionId"].clone();
    let listed = other.call("session/list", json!({}));
    let entry = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionId"] == session)
        .unwrap()
        .clone();
    assert_eq!(entry["mode"], "accept-edits", "{entry}");
    assert_eq!(entry["running"], true, "{entry}");

    std::fs::write(&fifo, "piped\n").unwrap();
    term.expect("Finished.");
    // The next prompt is read in the new mode.
    term.expect("accept-edits > ");
    let screen = term.screen();
    assert_eq!(
        screen.matches("mode: accept-edits").count(),
        1,
        "one line for the change, not one more for the daemon's event: {screen}"
    );
    term.quit();
}

//! Typing while a turn runs: Enter steers it (`session/steer`), and the model gets the
//! message at its next step; an approval question another client answers is withdrawn at
//! once (`approval_resolved`).

use crate::harness::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use zeroclaw_testkit::openai;

/// A second client on the daemon's socket, speaking NDJSON.
struct Other {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    next: u64,
    /// `session/update` params read while waiting for answers.
    updates: Vec<Value>,
}

impl Other {
    fn connect(env: &Env) -> Self {
        let writer = UnixStream::connect(&env.socket).unwrap();
        let reader = BufReader::new(writer.try_clone().unwrap());
        let mut other = Self {
            reader,
            writer,
            next: 0,
            updates: Vec::new(),
        };
        other.call(
            "initialize",
            json!({"protocolVersion": 1, "clientInfo": {"name": "other", "version": "0"}}),
        );
        other
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        assert!(
            self.reader.read_line(&mut line).unwrap() > 0,
            "the daemon closed"
        );
        serde_json::from_str(&line).unwrap()
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.writer, "{frame}").unwrap();
        loop {
            let frame = self.read();
            if frame["method"] == "session/update" {
                self.updates.push(frame["params"].clone());
            } else if frame["id"] == id {
                assert!(frame.get("error").is_none(), "{method}: {frame}");
                return frame["result"].clone();
            }
        }
    }

    fn update(&mut self, kind: &str) -> Value {
        if let Some(at) = self.updates.iter().position(|u| u["type"] == kind) {
            return self.updates.remove(at);
        }
        loop {
            let frame = self.read();
            if frame["method"] == "session/update" && frame["params"]["type"] == kind {
                return frame["params"].clone();
            }
        }
    }

    /// Attaches to zerocode's session (the only one).
    fn attach(&mut self) -> String {
        let list = self.call("session/list", json!({}));
        let id = list["sessions"][0]["sessionId"]
            .as_str()
            .unwrap()
            .to_owned();
        self.call("session/load", json!({"sessionId": id}));
        id
    }
}

#[test]
fn enter_while_a_turn_runs_steers_it_and_the_model_gets_the_message_at_its_next_step() {
    let env = Env::with("[approvals]\nbash = \"allow\"");
    // The command blocks on a FIFO until the test writes to it: the turn is still running
    // while the steer is typed.
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
    env.fake.push(openai::text(&["Also checked the tests."]));
    let mut term = env.ready(&[]);
    term.send("read the pipe\r");
    term.expect("cat go.fifo");
    term.send("also check the tests\r");
    term.expect("steer sent");
    std::fs::write(&fifo, "piped\n").unwrap();
    term.expect("› also check the tests (steered into the turn)");
    term.expect("Also checked the tests.");
    term.expect("> ");
    let requests = env.fake.wait_for_requests(2);
    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    assert_eq!(
        messages.last().unwrap()["content"],
        "also check the tests",
        "{messages:#?}"
    );
    term.quit();
}

#[test]
fn an_approval_question_answered_by_another_client_is_withdrawn_at_once() {
    let env = Env::new();
    let args = json!({ "command": "echo elsewhere-$((2+3))" }).to_string();
    env.fake.push(
        openai::Builder::new()
            .tool_call(0, "call_1", "bash", &args, 2)
            .build(),
    );
    env.fake.push(openai::text(&["Ran it."]));
    let mut term = env.ready(&[]);
    term.send("run it\r");
    term.expect("Allow bash `echo elsewhere-$((2+3))`?");

    let mut other = Other::connect(&env);
    let session = other.attach();
    let ask = other.update("approval_request");
    other.call(
        "session/approve",
        json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
    );
    term.expect("answered in another client: allow_once");
    term.expect("elsewhere-5");
    term.expect("Ran it.");
    term.expect("> ");
    term.quit();
}

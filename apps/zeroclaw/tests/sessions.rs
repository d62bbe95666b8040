//! Sessions end to end: the real daemon, a scripted fake LLM provider on 127.0.0.1, and raw
//! NDJSON clients. Steps are ordered by what the daemon reports (events, answers, its log)
//! and by the requests the fake provider records, never by sleeping. The only timeouts are
//! the configured ones a test is about (approval, ask_user, idle), and hang guards.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use zeroclaw_testkit::{FakeProvider, Gate, Reply, anthropic, openai};

// ---------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------

/// A daemon configured to talk to a fake provider, and a working directory for sessions.
struct Env {
    // Field order is drop order: the daemon goes first, the temp dir last.
    daemon: Daemon,
    fake: FakeProvider,
    work: PathBuf,
    dir: TestDir,
}

/// The `config.toml`: the `[provider]` table (base_url, model "fake", and the defaults below
/// unless `provider` sets them) followed by `rest` (other tables).
fn config_toml(base_url: &str, provider: &str, rest: &str) -> String {
    let mut out = format!("[provider]\nbase_url = {base_url:?}\nmodel = \"fake\"\n");
    // Generous idle timeout: a stalled stream in these tests is ended by a cancel, a kill or
    // a signal, never by the timeout, unless the test sets one.
    for (key, default) in [
        ("idle_timeout_secs", "30"),
        ("max_retries", "0"),
        ("connect_timeout_secs", "5"),
    ] {
        if !provider
            .lines()
            .any(|l| l.trim_start().starts_with(&format!("{key} ")))
        {
            out.push_str(&format!("{key} = {default}\n"));
        }
    }
    out.push_str(provider);
    out.push('\n');
    out.push_str(rest);
    out.push('\n');
    out
}

impl Env {
    fn new(provider: &str, rest: &str) -> Self {
        Self::with_env(provider, rest, &[])
    }

    fn with_env(provider: &str, rest: &str, vars: &[(&str, &str)]) -> Self {
        let fake = FakeProvider::start_blocking().unwrap();
        let url = fake.base_url();
        Self::build(fake, &url, provider, rest, vars)
    }

    /// A daemon whose provider is at `base_url` (the fake provider is started but unused
    /// unless `base_url` is its own).
    fn at(base_url: &str, provider: &str, rest: &str) -> Self {
        let fake = FakeProvider::start_blocking().unwrap();
        Self::build(fake, base_url, provider, rest, &[])
    }

    fn build(
        fake: FakeProvider,
        base_url: &str,
        provider: &str,
        rest: &str,
        vars: &[(&str, &str)],
    ) -> Self {
        let dir = TestDir::new();
        std::fs::create_dir_all(dir.config_dir()).unwrap();
        std::fs::write(
            dir.config_dir().join("config.toml"),
            config_toml(base_url, provider, rest),
        )
        .unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let daemon = dir.start_with(&[], vars);
        Self {
            daemon,
            fake,
            work,
            dir,
        }
    }

    /// A client that declared the elicitation capability.
    fn client(&self) -> Client {
        Client::connect(&self.daemon, true)
    }

    /// Kills the daemon with SIGKILL and starts a new one on the same directory.
    fn kill_and_restart(&mut self) {
        self.daemon.signal(rustix::process::Signal::KILL);
        assert!(!self.daemon.wait_exit().success());
        self.daemon = self.dir.start(&[]);
    }
}

/// What a policy does with an `approval_request` event or an `elicitation/create` request.
enum Act {
    /// Answer the approval request with this decision (`session/approve`).
    Decide(&'static str),
    /// Answer the elicitation request with this result.
    Answer(Value),
    /// Answer the elicitation request with this JSON-RPC error object.
    Fail(Value),
    /// Do not answer.
    Ignore,
}

/// Panics on any question: for turns that must not ask anything.
fn no_questions(frame: &Value) -> Act {
    panic!("unexpected question from the daemon: {frame}")
}

/// Answers every approval request with `decision`; panics on elicitations.
fn decide_all(decision: &'static str) -> impl FnMut(&Value) -> Act {
    move |frame: &Value| {
        assert_eq!(frame["type"], "approval_request", "unexpected: {frame}");
        Act::Decide(decision)
    }
}

/// Answers every elicitation with `result`; panics on approval requests.
fn answer_all(result: Value) -> impl FnMut(&Value) -> Act {
    move |frame: &Value| {
        assert_eq!(frame["method"], "elicitation/create", "unexpected: {frame}");
        Act::Answer(result.clone())
    }
}

fn ignore_all(_: &Value) -> Act {
    Act::Ignore
}

/// Everything one `session/prompt` produced on one connection.
#[derive(Debug)]
struct TurnLog {
    /// `session/update` params, in arrival order.
    events: Vec<Value>,
    /// `elicitation/create` requests (whole frames), in arrival order.
    elicitations: Vec<Value>,
    /// The `session/prompt` answer frame.
    answer: Value,
}

impl TurnLog {
    fn result(&self) -> &Value {
        assert!(
            self.answer.get("error").is_none(),
            "the prompt failed: {}\nevents: {:#?}",
            self.answer,
            self.events
        );
        &self.answer["result"]
    }

    fn error(&self) -> &Value {
        assert!(
            self.answer.get("error").is_some(),
            "the prompt did not fail: {}",
            self.answer
        );
        &self.answer["error"]
    }

    fn types(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect()
    }

    fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == kind).collect()
    }

    fn one(&self, kind: &str) -> &Value {
        let found = self.of_type(kind);
        assert_eq!(found.len(), 1, "expected one {kind}: {:#?}", self.events);
        found[0]
    }
}

fn is_response(frame: &Value) -> bool {
    frame.get("method").is_none() && frame.get("id").is_some()
}

fn is_update(frame: &Value) -> bool {
    frame["method"] == "session/update" && frame.get("id").is_none()
}

/// A raw connection that keeps the frames it read while waiting for something else, so
/// answers to concurrent requests and events can be taken in any order.
struct Client {
    conn: Conn,
    next: u64,
    /// Frames read but not yet taken by `drive`.
    inbox: VecDeque<Value>,
    /// How far `wait_for` has looked into the inbox.
    scanned: usize,
}

impl Client {
    fn connect(daemon: &Daemon, elicitation: bool) -> Self {
        let mut conn = daemon.connect();
        let capabilities = if elicitation {
            json!({"elicitation": {}})
        } else {
            json!({})
        };
        conn.call(
            "initialize",
            json!({"protocolVersion": 1, "clientInfo": {"name": "sessions-test", "version": "0"}, "capabilities": capabilities}),
        );
        Self {
            conn,
            next: 0,
            inbox: VecDeque::new(),
            scanned: 0,
        }
    }

    /// Sends a request and returns its id, without waiting for the answer.
    fn send(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = json!(format!("t-{}", self.next));
        self.conn
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    fn read(&mut self) -> Value {
        match self.inbox.pop_front() {
            Some(frame) => {
                self.scanned = self.scanned.saturating_sub(1);
                frame
            }
            None => self.conn.recv(),
        }
    }

    /// The answer to request `id`, keeping every other frame for later.
    fn answer(&mut self, id: &Value) -> Value {
        if let Some(at) = self
            .inbox
            .iter()
            .position(|f| is_response(f) && &f["id"] == id)
        {
            if at < self.scanned {
                self.scanned -= 1;
            }
            return self.inbox.remove(at).unwrap();
        }
        loop {
            let frame = self.conn.recv();
            if is_response(&frame) && &frame["id"] == id {
                return frame;
            }
            self.inbox.push_back(frame);
        }
    }

    /// Calls a method and returns the whole answer.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.answer(&id)
    }

    /// Calls a method and returns its result, failing on an error.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let answer = self.request(method, params);
        assert!(answer.get("error").is_none(), "{method} failed: {answer}");
        answer["result"].clone()
    }

    /// Calls a method that must fail and returns its error object.
    fn fail(&mut self, method: &str, params: Value) -> Value {
        let answer = self.request(method, params);
        assert!(
            answer.get("error").is_some(),
            "{method} did not fail: {answer}"
        );
        answer["error"].clone()
    }

    fn new_session(&mut self, cwd: &Path) -> String {
        let result = self.call("session/new", json!({"cwd": cwd, "title": "test"}));
        result["sessionId"].as_str().unwrap().to_owned()
    }

    fn start_prompt(&mut self, session: &str, prompt: &str) -> Value {
        self.send(
            "session/prompt",
            json!({"sessionId": session, "prompt": prompt}),
        )
    }

    /// Waits for a frame matching `pred` that no earlier `wait_for` returned. The frames
    /// read stay queued for `drive`.
    fn wait_for(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            while self.scanned < self.inbox.len() {
                let frame = &self.inbox[self.scanned];
                self.scanned += 1;
                if pred(frame) {
                    return frame.clone();
                }
            }
            let frame = self.conn.recv();
            self.inbox.push_back(frame);
        }
    }

    /// Waits for a `session/update` of this type; returns its params.
    fn wait_event(&mut self, kind: &str) -> Value {
        self.wait_for(|f| is_update(f) && f["params"]["type"] == kind)["params"].clone()
    }

    /// Reads frames until the answer to the prompt `prompt_id`, recording events and
    /// answering questions as `policy` says; then until every approval it sent is answered.
    fn drive(&mut self, prompt_id: &Value, mut policy: impl FnMut(&Value) -> Act) -> TurnLog {
        let mut events = Vec::new();
        let mut elicitations = Vec::new();
        let mut answer = None;
        let mut approvals: Vec<Value> = Vec::new();
        while answer.is_none() || !approvals.is_empty() {
            let frame = self.read();
            if is_update(&frame) {
                let params = frame["params"].clone();
                if params["type"] == "approval_request" {
                    match policy(&params) {
                        Act::Decide(decision) => {
                            let id = self.send(
                                "session/approve",
                                json!({"sessionId": params["sessionId"], "requestId": params["requestId"], "decision": decision}),
                            );
                            approvals.push(id);
                        }
                        Act::Ignore => {}
                        Act::Answer(_) | Act::Fail(_) => {
                            panic!("an approval request is answered with a decision")
                        }
                    }
                }
                events.push(params);
            } else if frame["method"] == "elicitation/create" && frame.get("id").is_some() {
                match policy(&frame) {
                    Act::Answer(result) => self
                        .conn
                        .send(&json!({"jsonrpc": "2.0", "id": frame["id"], "result": result})),
                    Act::Fail(error) => self
                        .conn
                        .send(&json!({"jsonrpc": "2.0", "id": frame["id"], "error": error})),
                    Act::Ignore => {}
                    Act::Decide(_) => panic!("an elicitation cannot be answered with a decision"),
                }
                elicitations.push(frame);
            } else if is_response(&frame) && &frame["id"] == prompt_id {
                answer = Some(frame);
            } else if let Some(at) = approvals
                .iter()
                .position(|id| is_response(&frame) && &frame["id"] == id)
            {
                assert!(
                    frame.get("error").is_none(),
                    "session/approve failed: {frame}"
                );
                approvals.remove(at);
            } else {
                panic!("unexpected frame while driving a turn: {frame}");
            }
        }
        TurnLog {
            events,
            elicitations,
            answer: answer.unwrap(),
        }
    }

    /// Sends a prompt and drives it to its answer.
    fn prompt(
        &mut self,
        session: &str,
        prompt: &str,
        policy: impl FnMut(&Value) -> Act,
    ) -> TurnLog {
        let id = self.start_prompt(session, prompt);
        self.drive(&id, policy)
    }

    /// Takes every queued `session/update` (params), dropping the other queued frames.
    fn take_events(&mut self) -> Vec<Value> {
        self.scanned = 0;
        self.inbox
            .drain(..)
            .filter(is_update)
            .map(|f| f["params"].clone())
            .collect()
    }

    fn messages(&mut self, session: &str) -> Vec<Value> {
        let result = self.call("session/messages", json!({"sessionId": session}));
        let messages = result["messages"].as_array().unwrap().clone();
        assert_eq!(result["total"], json!(messages.len()), "{result}");
        messages
    }

    fn kinds(&mut self, session: &str) -> Vec<String> {
        self.messages(session)
            .iter()
            .map(|m| m["kind"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// One bash call (arguments split across `split` deltas), finish reason `tool_calls`.
fn bash_call(id: &str, command: &str, split: usize) -> Reply {
    tool_call(id, "bash", json!({ "command": command }), split)
}

fn tool_call(id: &str, name: &str, args: Value, split: usize) -> Reply {
    openai::Builder::new()
        .tool_call(0, id, name, &args.to_string(), split)
        .usage(5, 2)
        .build()
}

/// The tool message for `call_id` in an OpenAI request body.
fn tool_message<'a>(body: &'a Value, call_id: &str) -> &'a Value {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .unwrap_or_else(|| panic!("no tool message for {call_id} in {body:#}"))
}

fn tool_content(body: &Value, call_id: &str) -> String {
    tool_message(body, call_id)["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Waits (bounded) until `pred` holds; for state outside the protocol (files, /proc).
fn poll_until(what: &str, pred: impl Fn() -> bool) {
    let deadline = Instant::now() + HANG_GUARD;
    while !pred() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether the process is gone (or a zombie nobody reaps yet).
fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

// ---------------------------------------------------------------------------------------
// Streaming
// ---------------------------------------------------------------------------------------

#[test]
fn a_streamed_answer_arrives_as_ordered_chunks_then_turn_complete_then_the_result() {
    let env = Env::new("", "");
    env.fake.push(
        openai::Builder::new()
            .reasoning("Thinking ")
            .reasoning_field("harder.")
            .text("Hel")
            .text("lo, ")
            .text("world")
            .usage(12, 3)
            .build(),
    );
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "say hello", no_questions);

    assert_eq!(
        turn.types(),
        [
            "agent_thought_chunk",
            "agent_thought_chunk",
            "agent_message_chunk",
            "agent_message_chunk",
            "agent_message_chunk",
            "turn_complete"
        ]
    );
    let texts: Vec<&str> = turn
        .events
        .iter()
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert_eq!(texts, ["Thinking ", "harder.", "Hel", "lo, ", "world"]);
    assert_eq!(turn.events[5]["stopReason"], "end_turn");

    let result = turn.result();
    let turn_id = result["turnId"].as_str().unwrap();
    assert!(!turn_id.is_empty());
    for event in &turn.events {
        assert_eq!(event["sessionId"], json!(session), "{event}");
        assert_eq!(event["turnId"], json!(turn_id), "{event}");
    }
    assert_eq!(result["stopReason"], "end_turn");
    assert_eq!(result["text"], "Hello, world");
    assert_eq!(
        result["usage"],
        json!({"inputTokens": 12, "outputTokens": 3})
    );

    // What the model was sent: the prompt, and the tools.
    let request = &env.fake.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.body["model"], "fake");
    assert_eq!(request.body["stream"], true);
    let last = request.body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last, &json!({"role": "user", "content": "say hello"}));
    let tools: Vec<&str> = request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "list_dir",
            "grep",
            "ask_user"
        ]
    );

    // The turn is stored: prompt, thought, answer.
    let messages = client.messages(&session);
    let kinds: Vec<&str> = messages
        .iter()
        .map(|m| m["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["user", "thought", "assistant"]);
    assert_eq!(messages[0]["text"], "say hello");
    assert_eq!(messages[1]["text"], "Thinking harder.");
    assert_eq!(messages[2]["text"], "Hello, world");
    for m in &messages {
        assert_eq!(m["turnId"], json!(turn_id));
        assert!(m.get("cancelled").is_none(), "{m}");
    }
}

#[test]
fn a_malformed_sse_line_in_the_stream_is_skipped_and_the_turn_completes() {
    let env = Env::new("", "");
    env.fake.push(
        openai::Builder::new()
            .text("before ")
            .raw_line("data: {this is not json")
            .text("after")
            .build(),
    );
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "go", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert_eq!(turn.result()["text"], "before after");
    assert_eq!(turn.of_type("agent_message_chunk").len(), 2);
}

#[test]
fn a_stream_that_goes_silent_fails_after_the_idle_timeout_and_keeps_the_text_so_far() {
    let env = Env::new("idle_timeout_secs = 1", "");
    env.fake
        .push(openai::Builder::new().text("so far").stall().build());
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "go", no_questions);
    let error = turn.error();
    assert_eq!(error["code"], -32004, "{error}");
    assert_eq!(error["data"]["kind"], "timeout", "{error}");
    assert_eq!(error["data"]["stored"], true, "{error}");
    let turn_id = error["data"]["turnId"].as_str().unwrap();
    assert_eq!(turn.types(), ["agent_message_chunk", "turn_complete"]);
    assert_eq!(turn.events[1]["stopReason"], "error");
    assert_eq!(turn.events[1]["turnId"], json!(turn_id));
    let messages = client.messages(&session);
    assert_eq!(messages.len(), 2, "{messages:#?}");
    assert_eq!(messages[1]["kind"], "assistant");
    assert_eq!(messages[1]["text"], "so far");
    // The session is usable again.
    env.fake.push(openai::text(&["again"]));
    let turn = client.prompt(&session, "retry", no_questions);
    assert_eq!(turn.result()["text"], "again");
}

// ---------------------------------------------------------------------------------------
// Tool calls and approvals
// ---------------------------------------------------------------------------------------

#[test]
fn an_approved_bash_call_runs_and_its_output_goes_back_to_the_model() {
    let env = Env::new("", "");
    env.fake
        .push(bash_call("call_1", "echo marker-$((6*7))", 8));
    env.fake.push(openai::text(&["The answer ", "is 42."]));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(
        &session,
        "what is six times seven?",
        decide_all("allow_once"),
    );

    assert_eq!(
        turn.types(),
        [
            "tool_call",
            "approval_request",
            "tool_result",
            "agent_message_chunk",
            "agent_message_chunk",
            "turn_complete"
        ]
    );
    let call = turn.one("tool_call");
    assert_eq!(call["toolCallId"], "call_1");
    assert_eq!(call["name"], "bash");
    assert_eq!(call["rawInput"], json!({"command": "echo marker-$((6*7))"}));
    let ask = turn.one("approval_request");
    assert_eq!(ask["toolCallId"], "call_1");
    assert_eq!(ask["name"], "bash");
    assert_eq!(ask["rawInput"], call["rawInput"]);
    assert_eq!(
        ask["options"],
        json!(["allow_once", "allow_always", "reject"])
    );
    assert!(!ask["requestId"].as_str().unwrap().is_empty());
    let result = turn.one("tool_result");
    assert_eq!(result["toolCallId"], "call_1");
    assert_eq!(result["name"], "bash");
    assert_eq!(result["isError"], false, "{result}");
    let output = result["rawOutput"].as_str().unwrap();
    assert!(output.contains("marker-42"), "{output}");

    let answer = turn.result();
    assert_eq!(answer["stopReason"], "end_turn");
    assert_eq!(answer["text"], "The answer is 42.");
    // Usage sums both model calls: 5+10 in, 2+2 out.
    assert_eq!(
        answer["usage"],
        json!({"inputTokens": 15, "outputTokens": 4})
    );

    let requests = env.fake.wait_for_requests(2);
    assert_eq!(requests.len(), 2);
    let body = &requests[1].body;
    let content = tool_content(body, "call_1");
    assert!(content.contains("marker-42"), "{content}");
    let messages = body["messages"].as_array().unwrap();
    let assistant = messages
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("the assistant's tool call is sent back");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_1");
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "bash");
    let args: Value = serde_json::from_str(
        assistant["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(args, json!({"command": "echo marker-$((6*7))"}));

    // The approval request is gone once answered.
    let stale = client.fail(
        "session/approve",
        json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
    );
    assert_eq!(stale["code"], -32602, "{stale}");

    assert_eq!(
        client.kinds(&session),
        ["user", "tool_call", "tool_result", "assistant"]
    );
}

#[test]
fn a_rejected_bash_call_does_not_run_and_the_model_is_told() {
    let env = Env::new("", "");
    env.fake.push(bash_call("call_1", "touch ran.txt", 3));
    env.fake.push(openai::text(&["Understood."]));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "make a file", decide_all("reject"));
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true, "{result}");
    let output = result["rawOutput"].as_str().unwrap();
    assert!(output.contains("rejected"), "{output}");
    assert!(!env.work.join("ran.txt").exists(), "the command ran");
    let requests = env.fake.wait_for_requests(2);
    let content = tool_content(&requests[1].body, "call_1");
    assert!(content.contains("rejected"), "{content}");
}

#[test]
fn allow_always_covers_later_calls_in_the_turn_later_turns_and_a_restart() {
    let mut env = Env::new("", "");
    env.fake.push(bash_call("call_1", "echo one", 2));
    env.fake.push(bash_call("call_2", "echo two", 2));
    env.fake.push(openai::text(&["done"]));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let mut asked = 0;
    let turn = client.prompt(&session, "twice", |frame: &Value| {
        assert_eq!(frame["type"], "approval_request");
        asked += 1;
        assert_eq!(asked, 1, "asked again after allow_always: {frame}");
        Act::Decide("allow_always")
    });
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let results = turn.of_type("tool_result");
    assert_eq!(results.len(), 2);
    assert!(results[0]["rawOutput"].as_str().unwrap().contains("one"));
    assert!(results[1]["rawOutput"].as_str().unwrap().contains("two"));
    assert_eq!(turn.of_type("approval_request").len(), 1);

    env.fake.push(bash_call("call_3", "echo three", 2));
    env.fake.push(openai::text(&["done"]));
    let turn = client.prompt(&session, "again", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert!(
        turn.one("tool_result")["rawOutput"]
            .as_str()
            .unwrap()
            .contains("three")
    );

    // The decision is stored with the session.
    drop(client);
    env.kill_and_restart();
    let mut client = env.client();
    client.call("session/load", json!({"sessionId": session}));
    env.fake.push(bash_call("call_4", "echo four", 2));
    env.fake.push(openai::text(&["done"]));
    let turn = client.prompt(&session, "after restart", no_questions);
    assert!(
        turn.one("tool_result")["rawOutput"]
            .as_str()
            .unwrap()
            .contains("four")
    );

    // Another session is not covered.
    let other = client.new_session(&env.work);
    env.fake.push(bash_call("call_5", "echo five", 2));
    env.fake.push(openai::text(&["done"]));
    let turn = client.prompt(&other, "elsewhere", decide_all("allow_once"));
    assert_eq!(turn.of_type("approval_request").len(), 1);
}

#[test]
fn bash_allow_in_the_config_runs_without_asking() {
    let env = Env::new("", "[approvals]\nbash = \"allow\"");
    env.fake
        .push(bash_call("call_1", "echo allowed-by-config", 4));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "run it", no_questions);
    assert_eq!(
        turn.types(),
        [
            "tool_call",
            "tool_result",
            "agent_message_chunk",
            "turn_complete"
        ]
    );
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], false);
    assert!(
        result["rawOutput"]
            .as_str()
            .unwrap()
            .contains("allowed-by-config")
    );
}

#[test]
fn bash_deny_in_the_config_refuses_without_asking() {
    let env = Env::new("", "[approvals]\nbash = \"deny\"");
    env.fake.push(bash_call("call_1", "touch ran.txt", 4));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "run it", no_questions);
    assert_eq!(
        turn.types(),
        [
            "tool_call",
            "tool_result",
            "agent_message_chunk",
            "turn_complete"
        ]
    );
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    let output = result["rawOutput"].as_str().unwrap();
    assert!(output.contains("deny"), "{output}");
    assert!(!env.work.join("ran.txt").exists());
    let content = tool_content(&env.fake.wait_for_requests(2)[1].body, "call_1");
    assert!(content.contains("deny"), "{content}");
}

#[test]
fn an_unanswered_approval_request_is_refused_after_its_timeout() {
    let env = Env::new("", "[approvals]\ntimeout_secs = 1");
    env.fake.push(bash_call("call_1", "touch ran.txt", 2));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "run it", ignore_all);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let ask = turn.one("approval_request");
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    let output = result["rawOutput"].as_str().unwrap();
    assert!(
        output.contains("nobody answered") && output.contains("refused"),
        "{output}"
    );
    assert!(!env.work.join("ran.txt").exists());
    let late = client.fail(
        "session/approve",
        json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
    );
    assert_eq!(late["code"], -32602, "{late}");
}

#[test]
fn a_tool_call_with_unparsable_arguments_or_an_unknown_tool_gets_an_error_result() {
    let env = Env::new("", "");
    env.fake.push(
        openai::Builder::new()
            .tool_call(0, "call_1", "read_file", "{\"path\": ", 2)
            .tool_call(1, "call_2", "frobnicate", "{}", 1)
            .build(),
    );
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "go", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let calls = turn.of_type("tool_call");
    assert_eq!(calls[0]["rawInput"], "{\"path\": ");
    let results = turn.of_type("tool_result");
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["isError"], true);
    assert!(
        results[0]["rawOutput"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    assert_eq!(results[1]["isError"], true);
    assert!(
        results[1]["rawOutput"]
            .as_str()
            .unwrap()
            .contains("frobnicate")
    );
    let body = &env.fake.wait_for_requests(2)[1].body;
    tool_message(body, "call_1");
    tool_message(body, "call_2");

    // The next turn's conversation, rebuilt from the store: one assistant message with both
    // calls, then both results, in order.
    env.fake.push(openai::text(&["next"]));
    client.prompt(&session, "next", no_questions).result();
    let body = &env.fake.wait_for_requests(3)[2].body;
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "user"
        ]
    );
    let ids: Vec<&str> = messages[2]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_1", "call_2"]);
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"],
        "{\"path\": "
    );
    assert_eq!(messages[3]["tool_call_id"], "call_1");
    assert_eq!(messages[4]["tool_call_id"], "call_2");
    assert_eq!(messages[5]["content"], "ok");
}

#[test]
fn max_steps_stops_a_model_that_keeps_calling_tools_with_max_turns() {
    let env = Env::new("", "[agent]\nmax_steps = 2");
    for i in 0..3 {
        env.fake.push(tool_call(
            &format!("call_{i}"),
            "list_dir",
            json!({"path": "."}),
            1,
        ));
    }
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "loop forever", no_questions);
    assert_eq!(turn.result()["stopReason"], "max_turns");
    assert_eq!(turn.of_type("tool_result").len(), 2);
    assert_eq!(turn.events.last().unwrap()["stopReason"], "max_turns");
    assert_eq!(env.fake.request_count(), 2);
    assert_eq!(env.fake.pending_replies(), 1);
}

// ---------------------------------------------------------------------------------------
// ask_user through elicitation/create
// ---------------------------------------------------------------------------------------

fn ask(id: &str, question: &str, choices: Option<&[&str]>) -> Reply {
    let mut args = json!({ "question": question });
    if let Some(choices) = choices {
        args["choices"] = json!(choices);
    }
    tool_call(id, "ask_user", args, 3)
}

#[test]
fn ask_user_is_an_elicitation_request_whose_answer_the_model_receives() {
    let env = Env::new("", "");
    env.fake
        .push(ask("call_1", "Which colour?", Some(&["red", "blue"])));
    env.fake.push(openai::text(&["Blue it is."]));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(
        &session,
        "paint it",
        answer_all(json!({"action": "accept", "content": {"answer": "blue"}})),
    );
    let result = turn.result();
    assert_eq!(result["text"], "Blue it is.");
    assert_eq!(turn.elicitations.len(), 1);
    let request = &turn.elicitations[0];
    assert!(
        request["id"].as_str().unwrap().starts_with("zc-out-"),
        "{request}"
    );
    let params = &request["params"];
    assert_eq!(params["sessionId"], json!(session));
    assert_eq!(params["turnId"], result["turnId"]);
    assert_eq!(params["message"], "Which colour?");
    let schema = &params["requestedSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["properties"]["answer"]["enum"],
        json!(["red", "blue"])
    );
    assert_eq!(schema["required"], json!(["answer"]));
    let tool_result = turn.one("tool_result");
    assert_eq!(tool_result["isError"], false);
    assert_eq!(tool_result["rawOutput"], "blue");
    assert_eq!(
        tool_content(&env.fake.wait_for_requests(2)[1].body, "call_1"),
        "blue"
    );

    // Without choices: no enum. Declined: an error result.
    env.fake.push(ask("call_2", "Anything else?", None));
    env.fake.push(openai::text(&["ok"]));
    let turn = client.prompt(&session, "again", answer_all(json!({"action": "decline"})));
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let schema = &turn.elicitations[0]["params"]["requestedSchema"];
    assert!(
        schema["properties"]["answer"].get("enum").is_none(),
        "{schema}"
    );
    let tool_result = turn.one("tool_result");
    assert_eq!(tool_result["isError"], true);
    assert!(
        tool_result["rawOutput"]
            .as_str()
            .unwrap()
            .contains("declined")
    );
    let content = tool_content(&env.fake.wait_for_requests(4)[3].body, "call_2");
    assert!(content.contains("declined"), "{content}");

    // Dismissed.
    env.fake.push(ask("call_3", "Sure?", None));
    env.fake.push(openai::text(&["ok"]));
    let turn = client.prompt(
        &session,
        "once more",
        answer_all(json!({"action": "cancel"})),
    );
    let tool_result = turn.one("tool_result");
    assert_eq!(tool_result["isError"], true);
    assert!(
        tool_result["rawOutput"]
            .as_str()
            .unwrap()
            .contains("without answering")
    );

    // The client answers with an error.
    env.fake.push(ask("call_4", "Can you?", None));
    env.fake.push(openai::text(&["ok"]));
    let turn = client.prompt(&session, "last", |_: &Value| {
        Act::Fail(json!({"code": -32601, "message": "no UI here"}))
    });
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let tool_result = turn.one("tool_result");
    assert_eq!(tool_result["isError"], true);
    let output = tool_result["rawOutput"].as_str().unwrap();
    assert!(output.contains("no UI here"), "{output}");
}

#[test]
fn an_unanswered_ask_user_times_out_into_an_error_result() {
    let env = Env::new("", "[agent]\nask_user_timeout_secs = 1");
    env.fake.push(ask("call_1", "Are you there?", None));
    env.fake.push(openai::text(&["No answer, moving on."]));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "ask me", ignore_all);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert_eq!(turn.elicitations.len(), 1);
    let tool_result = turn.one("tool_result");
    assert_eq!(tool_result["isError"], true);
    let output = tool_result["rawOutput"].as_str().unwrap();
    assert!(output.contains("did not answer within 1 s"), "{output}");
    // A late answer is ignored and the connection stays usable.
    let id = turn.elicitations[0]["id"].clone();
    client.conn.send(&json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"answer": "late"}}}));
    client.call("status", json!({}));
}

#[test]
fn ask_user_from_a_client_without_the_elicitation_capability_is_an_error_result() {
    let env = Env::new("", "");
    env.fake.push(ask("call_1", "Which one?", None));
    env.fake.push(openai::text(&["I'll assume."]));
    let mut client = Client::connect(&env.daemon, false);
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "ask me", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert!(turn.elicitations.is_empty());
    let tool_result = turn.one("tool_result");
    assert_eq!(tool_result["isError"], true);
    let output = tool_result["rawOutput"].as_str().unwrap();
    assert!(output.contains("elicitation"), "{output}");
}

// ---------------------------------------------------------------------------------------
// Cancellation, crashes, disconnects
// ---------------------------------------------------------------------------------------

#[test]
fn cancel_while_bash_runs_kills_the_command_and_answers_cancelled() {
    let env = Env::new("", "[approvals]\nbash = \"allow\"");
    env.fake.push(bash_call(
        "call_1",
        "echo $$ > pid.tmp && mv pid.tmp pid && exec sleep 60",
        4,
    ));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "sleep");
    let pid_file = env.work.join("pid");
    poll_until("the pid file", || pid_file.exists());
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!process_gone(pid));
    let cancel = client.call("session/cancel", json!({"sessionId": session}));
    assert_eq!(cancel, json!({"cancelled": true}));
    let turn = client.drive(&prompt, no_questions);
    let result = turn.result();
    assert_eq!(result["stopReason"], "cancelled");
    assert_eq!(turn.types(), ["tool_call", "tool_result", "turn_complete"]);
    assert_eq!(turn.events[2]["stopReason"], "cancelled");
    let tool_result = turn.one("tool_result");
    assert_eq!(tool_result["isError"], true);
    assert!(
        tool_result["rawOutput"]
            .as_str()
            .unwrap()
            .contains("cancelled")
    );
    poll_until("the sleep process to be gone", || process_gone(pid));
    // Only the one model call happened.
    assert_eq!(env.fake.request_count(), 1);

    let messages = client.messages(&session);
    let kinds: Vec<&str> = messages
        .iter()
        .map(|m| m["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["user", "tool_call", "tool_result"]);
    for m in &messages {
        assert_eq!(m["turnId"], result["turnId"]);
    }
    assert_eq!(messages[2]["cancelled"], true, "{:#}", messages[2]);
    assert_eq!(messages[2]["isError"], true);

    // Nothing left to cancel; the session takes the next prompt, and the model sees the
    // cancelled call answered.
    let cancel = client.call("session/cancel", json!({"sessionId": session}));
    assert_eq!(cancel, json!({"cancelled": false}));
    env.fake.push(openai::text(&["fine"]));
    let turn = client.prompt(&session, "next", no_questions);
    assert_eq!(turn.result()["text"], "fine");
    let body = &env.fake.wait_for_requests(2)[1].body;
    assert!(tool_content(body, "call_1").contains("cancelled"));
}

#[test]
fn cancel_during_a_streamed_answer_keeps_the_partial_text_marked_cancelled() {
    let env = Env::new("", "");
    env.fake.push(
        openai::Builder::new()
            .text("partial ")
            .text("answer")
            .stall()
            .build(),
    );
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "talk");
    client.wait_for(|f| is_update(f) && f["params"]["text"] == "answer");
    let cancel = client.call("session/cancel", json!({"sessionId": session}));
    assert_eq!(cancel["cancelled"], true);
    let turn = client.drive(&prompt, no_questions);
    let result = turn.result();
    assert_eq!(result["stopReason"], "cancelled");
    assert_eq!(result["text"], "partial answer");
    assert_eq!(turn.events.last().unwrap()["type"], "turn_complete");
    assert_eq!(turn.events.last().unwrap()["stopReason"], "cancelled");
    let messages = client.messages(&session);
    assert_eq!(messages.len(), 2, "{messages:#?}");
    assert_eq!(messages[1]["kind"], "assistant");
    assert_eq!(messages[1]["text"], "partial answer");
    assert_eq!(messages[1]["cancelled"], true);
}

#[test]
fn cancel_while_a_failed_provider_call_waits_to_be_retried_records_the_prompt() {
    let env = Env::new("max_retries = 3", "");
    // The daemon waits (at most 10 s) before retrying; the cancel lands in that wait.
    env.fake
        .push(Reply::server_error().with_header("retry-after", "30"));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "hello?");
    env.fake.wait_for_requests(1);
    let cancel = client.call("session/cancel", json!({"sessionId": session}));
    assert_eq!(cancel["cancelled"], true);
    let turn = client.drive(&prompt, no_questions);
    assert_eq!(turn.result()["stopReason"], "cancelled");
    assert_eq!(turn.result()["text"], "");
    assert_eq!(turn.types(), ["turn_complete"]);
    assert_eq!(env.fake.request_count(), 1);
    let messages = client.messages(&session);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert_eq!(messages[0]["text"], "hello?");
}

#[test]
fn cancel_after_the_stream_opened_and_before_any_text_records_only_the_prompt() {
    let env = Env::new("", "");
    let gate = Gate::new();
    env.fake.push(
        openai::Builder::new()
            .wait_for(&gate)
            .text("too late")
            .build(),
    );
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "hello?");
    env.fake.wait_for_requests(1);
    let cancel = client.call("session/cancel", json!({"sessionId": session}));
    assert_eq!(cancel["cancelled"], true);
    let turn = client.drive(&prompt, no_questions);
    gate.open();
    assert_eq!(turn.result()["stopReason"], "cancelled");
    assert_eq!(turn.result()["text"], "");
    assert!(turn.of_type("agent_message_chunk").is_empty());
    let messages = client.messages(&session);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert_eq!(messages[0]["text"], "hello?");
}

#[test]
fn a_daemon_killed_mid_turn_restarts_with_the_completed_steps_and_the_turn_interrupted() {
    let mut env = Env::new("", "[approvals]\nbash = \"allow\"");
    env.fake.push(bash_call("call_1", "echo step-one-done", 3));
    env.fake
        .push(openai::Builder::new().text("never stored").stall().build());
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "do two things");
    // The second model call starts only after the first step's result is stored.
    env.fake.wait_for_requests(2);
    let chunk = client.wait_event("agent_message_chunk");
    let turn_id = chunk["turnId"].clone();
    let _ = prompt;
    drop(client);
    env.kill_and_restart();
    // The store marks the turn left running as interrupted when it opens (before
    // "listening"). The protocol has no field for a turn's status, so the log is the
    // observable here.
    let line = env.daemon.wait_for_log("interrupted");
    assert!(line.contains("turns=1"), "{line}");

    let mut client = env.client();
    let (replay, loaded) = load_with_replay(&mut client, &session);
    assert_eq!(loaded["sessionId"], json!(session));
    assert!(loaded.get("turnId").is_none(), "{loaded}");
    let types: Vec<&str> = replay.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["user_message_chunk", "tool_call", "tool_result"]);
    for event in &replay {
        assert_eq!(event["turnId"], turn_id, "{event}");
        assert_eq!(event["sessionId"], json!(session));
    }
    assert_eq!(replay[0]["text"], "do two things");
    assert_eq!(replay[1]["toolCallId"], "call_1");
    assert_eq!(
        replay[1]["rawInput"],
        json!({"command": "echo step-one-done"})
    );
    assert!(
        replay[2]["rawOutput"]
            .as_str()
            .unwrap()
            .contains("step-one-done")
    );
    assert_eq!(replay[2]["isError"], false);
    assert_eq!(client.kinds(&session), ["user", "tool_call", "tool_result"]);
    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["running"], false);

    // The session continues, and the model is sent the surviving history.
    env.fake.push(openai::text(&["resumed"]));
    let turn = client.prompt(&session, "continue", no_questions);
    assert_eq!(turn.result()["text"], "resumed");
    let body = &env.fake.wait_for_requests(3)[2].body;
    assert!(tool_content(body, "call_1").contains("step-one-done"));
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
}

#[test]
fn sigterm_mid_turn_ends_it_as_cancelled_with_its_history_kept() {
    let mut env = Env::new("", "");
    env.fake.push(
        openai::Builder::new()
            .text("half an answer")
            .stall()
            .build(),
    );
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "talk");
    client.wait_event("agent_message_chunk");
    env.daemon.signal(rustix::process::Signal::TERM);
    // The client still hears how its turn ended before the daemon disconnects it.
    let complete = client.wait_event("turn_complete");
    assert_eq!(complete["stopReason"], "cancelled");
    let answer = client.wait_for(|f| f["id"] == prompt);
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    assert_eq!(answer["result"]["text"], "half an answer");
    assert!(env.daemon.wait_exit().success());
    drop(client);
    env.daemon = env.dir.start(&[]);
    assert!(
        !env.daemon.log_text().contains("interrupted"),
        "{}",
        env.daemon.log_text()
    );
    let mut client = env.client();
    let messages = client.messages(&session);
    assert_eq!(messages.len(), 2, "{messages:#?}");
    assert_eq!(messages[1]["text"], "half an answer");
    assert_eq!(messages[1]["cancelled"], true);
}

#[test]
fn a_turn_whose_client_disconnected_still_completes_and_is_stored() {
    let env = Env::new("", "[approvals]\nbash = \"allow\"");
    let gate = Gate::new();
    env.fake.push(
        openai::Builder::new()
            .wait_for(&gate)
            .tool_call(0, "call_1", "bash", r#"{"command":"echo still-here"}"#, 2)
            .build(),
    );
    env.fake.push(openai::text(&["finished ", "without you"]));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let _prompt = client.start_prompt(&session, "work alone");
    env.fake.wait_for_requests(1);
    drop(client);
    env.daemon.wait_for_log("connection closed");
    gate.open();
    env.fake.wait_for_requests(2);
    let line = env.daemon.wait_for_log("turn ended");
    assert!(line.contains("end_turn"), "{line}");

    let mut client = env.client();
    let loaded = client.call("session/load", json!({"sessionId": session}));
    assert!(loaded.get("turnId").is_none(), "{loaded}");
    assert_eq!(loaded["running"], false);
    let messages = client.messages(&session);
    let kinds: Vec<&str> = messages
        .iter()
        .map(|m| m["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["user", "tool_call", "tool_result", "assistant"]);
    assert!(
        messages[2]["rawOutput"]
            .as_str()
            .unwrap()
            .contains("still-here")
    );
    assert_eq!(messages[3]["text"], "finished without you");
}

#[test]
fn every_attached_connection_gets_the_events_and_any_of_them_may_approve() {
    let env = Env::new("", "");
    env.fake.push(bash_call("call_1", "echo shared", 3));
    env.fake.push(openai::text(&["done"]));
    let mut a = env.client();
    let mut b = env.client();
    let session = a.new_session(&env.work);
    b.call("session/load", json!({"sessionId": session}));
    let prompt = a.start_prompt(&session, "run it");
    let ask = b.wait_event("approval_request");

    // A connection that loads mid-turn is sent the pending approval request again.
    let mut c = env.client();
    let loaded = c.call("session/load", json!({"sessionId": session}));
    assert_eq!(loaded["running"], true);
    assert_eq!(loaded["turnId"], ask["turnId"]);
    let resent = c.wait_event("approval_request");
    assert_eq!(resent["requestId"], ask["requestId"]);

    b.call(
        "session/approve",
        json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
    );
    let turn = a.drive(&prompt, ignore_all);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert!(
        turn.one("tool_result")["rawOutput"]
            .as_str()
            .unwrap()
            .contains("shared")
    );

    let done = b.wait_event("turn_complete");
    assert_eq!(done["stopReason"], "end_turn");
    let b_events = b.take_events();
    assert_eq!(b_events, turn.events, "B saw what A saw");
    let done = c.wait_event("turn_complete");
    assert_eq!(done["turnId"], turn.result()["turnId"]);
    let c_types: Vec<String> = c
        .take_events()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        c_types,
        [
            "approval_request",
            "tool_result",
            "agent_message_chunk",
            "turn_complete"
        ]
    );

    // B can cancel A's turn too.
    env.fake
        .push(openai::Builder::new().text("long").stall().build());
    let prompt = a.start_prompt(&session, "talk");
    b.wait_event("agent_message_chunk");
    assert_eq!(
        b.call("session/cancel", json!({"sessionId": session}))["cancelled"],
        true
    );
    let turn = a.drive(&prompt, no_questions);
    assert_eq!(turn.result()["stopReason"], "cancelled");
}

#[test]
fn cancel_while_an_approval_request_is_pending_refuses_the_call_and_answers_cancelled() {
    let env = Env::new("", "");
    env.fake.push(bash_call("call_1", "touch ran.txt", 2));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "make a file");
    let ask = client.wait_event("approval_request");
    let cancel = client.call("session/cancel", json!({"sessionId": session}));
    assert_eq!(cancel["cancelled"], true);
    let turn = client.drive(&prompt, ignore_all);
    assert_eq!(turn.result()["stopReason"], "cancelled");
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    assert!(
        result["rawOutput"].as_str().unwrap().contains("cancelled"),
        "{result}"
    );
    assert!(!env.work.join("ran.txt").exists());
    let late = client.fail(
        "session/approve",
        json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
    );
    assert_eq!(late["code"], -32602, "{late}");
    assert_eq!(env.fake.request_count(), 1);
    let messages = client.messages(&session);
    assert_eq!(messages[2]["kind"], "tool_result");
    assert_eq!(messages[2]["cancelled"], true);
}

#[test]
fn cancel_while_ask_user_waits_answers_cancelled_and_a_late_answer_is_ignored() {
    let env = Env::new("", "");
    env.fake.push(ask("call_1", "Well?", None));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "ask me");
    let question = client.wait_for(|f| f["method"] == "elicitation/create");
    let cancel = client.call("session/cancel", json!({"sessionId": session}));
    assert_eq!(cancel["cancelled"], true);
    let turn = client.drive(&prompt, ignore_all);
    assert_eq!(turn.result()["stopReason"], "cancelled");
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    assert!(result["rawOutput"].as_str().unwrap().contains("cancelled"));
    client.conn.send(&json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"answer": "late"}}}));
    assert_eq!(
        client.call("session/cancel", json!({"sessionId": session}))["cancelled"],
        false
    );
}

#[test]
fn ask_user_whose_client_disconnects_fails_the_question_and_the_turn_goes_on() {
    let env = Env::new("", "");
    env.fake.push(ask("call_1", "Still there?", None));
    env.fake.push(openai::text(&["Carrying on."]));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let _prompt = client.start_prompt(&session, "ask me");
    client.wait_for(|f| f["method"] == "elicitation/create");
    drop(client);
    let body = &env.fake.wait_for_requests(2)[1].body;
    let content = tool_content(body, "call_1");
    assert!(content.contains("disconnected"), "{content}");
    env.daemon.wait_for_log("turn ended");
    let mut client = env.client();
    let messages = client.messages(&session);
    assert_eq!(messages.last().unwrap()["text"], "Carrying on.");
}

#[test]
fn a_daemon_killed_while_a_tool_runs_answers_the_unfinished_call_for_the_model_after_restart() {
    let mut env = Env::new("", "[approvals]\nbash = \"allow\"");
    env.fake.push(bash_call(
        "call_1",
        "echo $$ > pid.tmp && mv pid.tmp pid && exec sleep 60",
        2,
    ));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let _prompt = client.start_prompt(&session, "sleep");
    let pid_file = env.work.join("pid");
    poll_until("the pid file", || pid_file.exists());
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    drop(client);
    env.kill_and_restart();
    // A SIGKILLed daemon cannot stop what it started; end the orphan ourselves.
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid).unwrap(),
        rustix::process::Signal::KILL,
    );
    let mut client = env.client();
    client.call("session/load", json!({"sessionId": session}));
    assert_eq!(client.kinds(&session), ["user", "tool_call"]);
    env.fake.push(openai::text(&["ok"]));
    client
        .prompt(&session, "what happened?", no_questions)
        .result();
    let body = &env.fake.wait_for_requests(2)[1].body;
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
    let content = tool_content(body, "call_1");
    assert!(content.contains("not run"), "{content}");
}

#[test]
fn with_one_turn_slot_a_busy_session_is_still_busy_and_another_session_hits_the_limit() {
    let env = Env::new("", "[agent]\nmax_running_turns = 1");
    env.fake
        .push(openai::Builder::new().text("working").stall().build());
    let mut client = env.client();
    let first = client.new_session(&env.work);
    let second = client.new_session(&env.work);
    let prompt = client.start_prompt(&first, "one");
    let chunk = client.wait_event("agent_message_chunk");
    let busy = client.fail(
        "session/prompt",
        json!({"sessionId": first, "prompt": "two"}),
    );
    assert_eq!(busy["code"], -32002, "{busy}");
    assert_eq!(busy["data"]["turnId"], chunk["turnId"]);
    let limit = client.fail(
        "session/prompt",
        json!({"sessionId": second, "prompt": "three"}),
    );
    assert_eq!(limit["code"], -32001, "{limit}");
    assert_eq!(limit["data"]["limit"], 1);
    client.call("session/cancel", json!({"sessionId": first}));
    assert_eq!(
        client.drive(&prompt, no_questions).result()["stopReason"],
        "cancelled"
    );
    // The slot is free again.
    env.fake.push(openai::text(&["free"]));
    let turn = client.prompt(&second, "four", no_questions);
    assert_eq!(turn.result()["text"], "free");
}

#[test]
fn session_new_checks_its_cwd_and_takes_a_model_override() {
    let env = Env::new("", "");
    let mut client = env.client();
    let created = client.call("session/new", json!({"cwd": env.work}));
    assert_eq!(created["model"], "fake");
    assert_eq!(created["cwd"], json!(env.work));
    assert!(created["createdAt"].as_str().unwrap().ends_with('Z'));
    for cwd in [json!("relative/dir"), json!(env.work.join("missing"))] {
        let error = client.fail("session/new", json!({ "cwd": cwd }));
        assert_eq!(error["code"], -32602, "{error}");
    }
    let session = client.call(
        "session/new",
        json!({"cwd": env.work, "model": "other-model"}),
    );
    assert_eq!(session["model"], "other-model");
    env.fake.push(openai::text(&["hi"]));
    let id = session["sessionId"].as_str().unwrap().to_owned();
    client.prompt(&id, "hi", no_questions).result();
    assert_eq!(env.fake.requests()[0].body["model"], "other-model");
}

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

#[test]
fn busy_sessions_foreign_connections_and_unknown_ids_get_their_error_codes() {
    let env = Env::new("", "");
    env.fake
        .push(openai::Builder::new().text("working").stall().build());
    let mut a = env.client();
    let session = a.new_session(&env.work);
    let prompt = a.start_prompt(&session, "first");
    let chunk = a.wait_event("agent_message_chunk");

    let busy = a.fail(
        "session/prompt",
        json!({"sessionId": session, "prompt": "second"}),
    );
    assert_eq!(busy["code"], -32002, "{busy}");
    assert_eq!(busy["data"]["turnId"], chunk["turnId"], "{busy}");
    // The connection is not blocked by its running prompt.
    let status = a.call("status", json!({}));
    assert_eq!(status["sessions"]["running"], 1);

    // Not attached.
    let mut b = env.client();
    for (method, params) in [
        (
            "session/prompt",
            json!({"sessionId": session, "prompt": "mine"}),
        ),
        ("session/cancel", json!({"sessionId": session})),
        (
            "session/approve",
            json!({"sessionId": session, "requestId": "nope", "decision": "allow_once"}),
        ),
    ] {
        let error = b.fail(method, params);
        assert_eq!(error["code"], -32003, "{method}: {error}");
    }

    // Unknown session.
    let unknown = "00000000-0000-0000-0000-000000000000";
    for (method, params) in [
        ("session/load", json!({"sessionId": unknown})),
        (
            "session/prompt",
            json!({"sessionId": unknown, "prompt": "hi"}),
        ),
        ("session/messages", json!({"sessionId": unknown})),
        ("session/cancel", json!({"sessionId": unknown})),
    ] {
        let error = b.fail(method, params);
        assert_eq!(error["code"], -32000, "{method}: {error}");
    }

    // Unknown approval request; bad decision; empty prompt.
    let error = a.fail(
        "session/approve",
        json!({"sessionId": session, "requestId": "nope", "decision": "allow_once"}),
    );
    assert_eq!(error["code"], -32602, "{error}");
    assert_eq!(error["data"]["requestId"], "nope");
    let error = a.fail(
        "session/approve",
        json!({"sessionId": session, "requestId": "nope", "decision": "maybe"}),
    );
    assert_eq!(error["code"], -32602, "{error}");

    // The running turn was not disturbed by any of it.
    assert_eq!(
        a.call("session/cancel", json!({"sessionId": session}))["cancelled"],
        true
    );
    let turn = a.drive(&prompt, no_questions);
    assert_eq!(turn.result()["stopReason"], "cancelled");
    assert_eq!(turn.result()["text"], "working");
    let error = a.fail(
        "session/prompt",
        json!({"sessionId": session, "prompt": "  "}),
    );
    assert_eq!(error["code"], -32602, "{error}");
}

#[test]
fn an_unreachable_provider_is_a_provider_error_and_stores_nothing() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/v1");
    let env = Env::at(&url, "", "");
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "anyone?", no_questions);
    let error = turn.error();
    assert_eq!(error["code"], -32004, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(&url), "{message}");
    assert_eq!(error["data"]["kind"], "unreachable", "{error}");
    assert_eq!(error["data"]["baseUrl"], json!(url));
    assert_eq!(error["data"]["stored"], false);
    assert!(error["data"]["turnId"].is_string());
    assert!(turn.events.is_empty(), "{:#?}", turn.events);
    assert!(client.messages(&session).is_empty());
    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["messageCount"], 0);
    assert_eq!(list["sessions"][0]["running"], false);
}

#[test]
fn an_http_500_without_retries_is_a_provider_error_and_stores_nothing() {
    let env = Env::new("max_retries = 0", "");
    env.fake.push(Reply::server_error());
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "hi", no_questions);
    let error = turn.error();
    assert_eq!(error["code"], -32004, "{error}");
    assert_eq!(error["data"]["status"], 500, "{error}");
    assert_eq!(error["data"]["kind"], "http", "{error}");
    assert!(turn.events.is_empty());
    assert!(client.messages(&session).is_empty());
    assert_eq!(env.fake.request_count(), 1);
}

#[test]
fn an_http_500_then_success_is_retried_and_the_turn_succeeds() {
    let env = Env::new("max_retries = 2", "");
    env.fake.push(Reply::server_error());
    env.fake.push(openai::text(&["second time lucky"]));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "hi", no_questions);
    assert_eq!(turn.result()["text"], "second time lucky");
    assert_eq!(env.fake.request_count(), 2);
    assert_eq!(client.kinds(&session), ["user", "assistant"]);
}

// ---------------------------------------------------------------------------------------
// Anthropic
// ---------------------------------------------------------------------------------------

#[test]
fn the_anthropic_wire_format_streams_thinking_text_and_tool_use_end_to_end() {
    const KEY: &str = "zc-test-key-7f3a9c";
    let env = Env::with_env(
        "kind = \"anthropic\"\napi_key_env = \"MY_KEY\"",
        "",
        &[("MY_KEY", KEY)],
    );
    env.fake.push(
        anthropic::Builder::new()
            .thinking("Let me ")
            .thinking("check.")
            .text("Running it.")
            .tool_use("toolu_1", "bash", r#"{"command":"echo via-anthropic"}"#, 6)
            .usage(20, 7)
            .build(),
    );
    env.fake.push(
        anthropic::Builder::new()
            .text("All done.")
            .usage(30, 3)
            .build(),
    );
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "run it", decide_all("allow_once"));
    assert_eq!(
        turn.types(),
        [
            "agent_thought_chunk",
            "agent_thought_chunk",
            "agent_message_chunk",
            "tool_call",
            "approval_request",
            "tool_result",
            "agent_message_chunk",
            "turn_complete"
        ]
    );
    let call = turn.one("tool_call");
    assert_eq!(call["toolCallId"], "toolu_1");
    assert_eq!(call["rawInput"], json!({"command": "echo via-anthropic"}));
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], false);
    assert!(
        result["rawOutput"]
            .as_str()
            .unwrap()
            .contains("via-anthropic")
    );
    let answer = turn.result();
    assert_eq!(answer["text"], "Running it.\n\nAll done.");
    assert_eq!(
        answer["usage"],
        json!({"inputTokens": 50, "outputTokens": 10})
    );

    let requests = env.fake.wait_for_requests(2);
    for request in &requests {
        assert_eq!(request.path, "/v1/messages");
        assert_eq!(request.header("x-api-key"), Some(KEY));
        assert!(request.header("anthropic-version").is_some());
        assert!(request.header("authorization").is_none());
    }
    let messages = requests[1].body["messages"].as_array().unwrap();
    let tool_result = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| m["content"].as_array().unwrap())
        .find(|block| block["type"] == "tool_result")
        .unwrap_or_else(|| panic!("no tool_result block: {messages:#?}"));
    assert_eq!(tool_result["tool_use_id"], "toolu_1");
    assert!(
        tool_result["content"]
            .as_str()
            .unwrap()
            .contains("via-anthropic")
    );
    let tool_use = messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["content"].as_array().unwrap())
        .find(|block| block["type"] == "tool_use")
        .unwrap();
    assert_eq!(tool_use["id"], "toolu_1");
    assert_eq!(tool_use["input"], json!({"command": "echo via-anthropic"}));

    // The key is in no log line and nowhere in the database.
    assert!(!env.daemon.log_text().contains(KEY));
    let data = env.dir.config_dir().join("data");
    let mut checked = 0;
    for entry in std::fs::read_dir(&data).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("zeroclaw.db") {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
                "the key is in {name}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 1);
}

// ---------------------------------------------------------------------------------------
// Listing, status, deletion
// ---------------------------------------------------------------------------------------

#[test]
fn list_and_status_count_sessions_and_delete_cancels_a_running_turn() {
    let env = Env::new("", "");
    env.fake.push(openai::text(&["idle now"]));
    env.fake
        .push(openai::Builder::new().text("busy").stall().build());
    let mut client = env.client();
    let idle = client.new_session(&env.work);
    let busy = client.new_session(&env.work);
    client.prompt(&idle, "first", no_questions).result();
    let prompt = client.start_prompt(&busy, "second");
    client.wait_event("agent_message_chunk");

    let list = client.call("session/list", json!({}));
    let sessions = list["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2);
    let find = |id: &str| {
        sessions
            .iter()
            .find(|s| s["sessionId"] == id)
            .unwrap()
            .clone()
    };
    let (i, b) = (find(&idle), find(&busy));
    assert_eq!(i["messageCount"], 2, "{i}");
    assert_eq!(i["running"], false);
    assert_eq!(i["title"], "test");
    assert_eq!(i["cwd"], json!(env.work));
    assert!(i["createdAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(b["messageCount"], 1, "{b}");
    assert_eq!(b["running"], true);
    let status = client.call("status", json!({}));
    assert_eq!(status["sessions"], json!({"total": 2, "running": 1}));

    let deleted = client.call("session/delete", json!({"sessionId": busy}));
    assert_eq!(deleted, json!({"deleted": true}));
    let turn = client.drive(&prompt, no_questions);
    assert_eq!(turn.result()["stopReason"], "cancelled");
    for method in ["session/load", "session/messages"] {
        let error = client.fail(method, json!({"sessionId": busy}));
        assert_eq!(error["code"], -32000, "{method}: {error}");
    }
    let error = client.fail("session/prompt", json!({"sessionId": busy, "prompt": "hi"}));
    assert_eq!(error["code"], -32000, "{error}");
    let status = client.call("status", json!({}));
    assert_eq!(status["sessions"], json!({"total": 1, "running": 0}));
    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(list["sessions"][0]["sessionId"], json!(idle));
    let again = client.call("session/delete", json!({"sessionId": busy}));
    assert_eq!(again, json!({"deleted": false}));
}

#[test]
fn messages_pages_back_through_history_with_limit_and_before() {
    let env = Env::new("", "");
    for i in 0..3 {
        env.fake.push(openai::text(&[&format!("answer {i}")]));
    }
    let mut client = env.client();
    let session = client.new_session(&env.work);
    for i in 0..3 {
        client
            .prompt(&session, &format!("question {i}"), no_questions)
            .result();
    }
    let page = client.call(
        "session/messages",
        json!({"sessionId": session, "limit": 2}),
    );
    assert_eq!(page["total"], 6);
    let texts = |page: &Value| -> Vec<String> {
        page["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["text"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(texts(&page), ["question 2", "answer 2"]);
    let before = page["messages"][0]["id"].clone();
    let page = client.call(
        "session/messages",
        json!({"sessionId": session, "limit": 3, "before": before}),
    );
    assert_eq!(texts(&page), ["answer 0", "question 1", "answer 1"]);
    // The model gets the whole conversation.
    let body = &env.fake.wait_for_requests(3)[2].body;
    let contents: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        contents,
        [
            "question 0",
            "answer 0",
            "question 1",
            "answer 1",
            "question 2"
        ]
    );
}

// ---------------------------------------------------------------------------------------
// Event pacing: a turn keeps to its clients' pace, within a grace
// ---------------------------------------------------------------------------------------

const STREAMED: usize = 20_000;

/// The fake provider streams far faster than the client reads, through an 8-frame queue.
/// The turn waits for the client whenever its queue is nearly full, so every chunk arrives.
/// (Before pacing, the first full queue detached the client.)
#[test]
fn a_client_reading_a_fast_stream_through_a_tiny_queue_loses_no_chunk() {
    let env = Env::new("", "[daemon]\noutbound_queue = 8");
    env.fake.push(openai::many_chunks(STREAMED, "t"));
    let mut client = env.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "stream a lot");
    let turn = client.drive(&prompt, no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let chunks = turn.of_type("agent_message_chunk");
    assert_eq!(chunks.len(), STREAMED);
    assert!(chunks.iter().all(|c| c["text"] == "t"));
    assert_eq!(turn.result()["text"].as_str().unwrap().len(), STREAMED);
    assert!(!env.daemon.log_text().contains("not reading its events"));
}

/// A client that stops reading holds the turn up for the grace (5 s) at most: it is then
/// detached and closed, and the turn streams on to its end for everyone else.
#[test]
fn a_client_that_stops_reading_its_events_is_detached_and_the_turn_completes() {
    let env = Env::new("", "[daemon]\noutbound_queue = 8");
    env.fake.push(openai::many_chunks(STREAMED, "t"));
    let mut stalled = env.client();
    let session = stalled.new_session(&env.work);
    let _prompt = stalled.start_prompt(&session, "stream a lot");
    // `stalled` never reads again; its socket buffers fill, then its queue.
    let line = env.daemon.wait_for_log("client is not reading its events");
    assert!(line.contains(&session), "{line}");
    env.daemon.wait_for_log("turn ended");
    let mut other = env.client();
    assert_eq!(other.call("status", json!({}))["sessions"]["running"], 0);
    let messages = other.messages(&session);
    let reply = messages.last().unwrap();
    assert_eq!(reply["kind"], "assistant");
    let text = reply["text"].as_str().unwrap();
    assert!(text.len() == STREAMED && text.bytes().all(|b| b == b't'));
    drop(stalled);
}

// ---------------------------------------------------------------------------------------
// Joining a running turn: every event exactly once, in the replay or live
// ---------------------------------------------------------------------------------------

/// Sends `session/load` with replay and reads up to its answer: (replayed params, result).
fn load_with_replay(client: &mut Client, session: &str) -> (Vec<Value>, Value) {
    let id = client.send(
        "session/load",
        json!({"sessionId": session, "replay": true}),
    );
    let mut replay = Vec::new();
    loop {
        let frame = client.read();
        if is_update(&frame) {
            replay.push(frame["params"].clone());
        } else {
            assert!(is_response(&frame) && frame["id"] == id, "{frame}");
            return (replay, frame["result"].clone());
        }
    }
}

/// A client that loads a session while its turn is streaming a message gets the message's
/// text so far in the replay, then the rest live. (Before, the text so far was in neither.)
#[test]
fn a_load_in_the_middle_of_a_streamed_message_gets_the_text_so_far_then_the_rest_live() {
    let env = Env::new("", "");
    let gate = Gate::new();
    env.fake.push(
        openai::Builder::new()
            .text("Hel")
            .text("lo ")
            .wait_for(&gate)
            .text("wor")
            .text("ld")
            .build(),
    );
    let mut a = env.client();
    let session = a.new_session(&env.work);
    let prompt = a.start_prompt(&session, "greet");
    let seen = a.wait_for(|f| is_update(f) && f["params"]["text"] == "lo ");
    let turn_id = seen["params"]["turnId"].clone();

    let mut b = env.client();
    let (replay, loaded) = load_with_replay(&mut b, &session);
    assert_eq!(loaded["turnId"], turn_id);
    let got: Vec<(&str, &str)> = replay
        .iter()
        .map(|e| (e["type"].as_str().unwrap(), e["text"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("user_message_chunk", "greet"),
            ("agent_message_chunk", "Hello ")
        ]
    );
    assert_eq!(replay[1]["turnId"], turn_id);

    gate.open();
    let mut live = String::new();
    loop {
        let frame = b.read();
        if !is_update(&frame) {
            continue;
        }
        match frame["params"]["type"].as_str().unwrap() {
            "agent_message_chunk" => live.push_str(frame["params"]["text"].as_str().unwrap()),
            "turn_complete" => break,
            other => panic!("unexpected {other}: {frame}"),
        }
    }
    assert_eq!(live, "world");
    let turn = a.drive(&prompt, no_questions);
    assert_eq!(turn.result()["text"], "Hello world");
}

/// Loads racing a turn that keeps storing tool calls and results: whatever the timing
/// (before, during or after the turn), each loading client gets every stored event of the
/// turn exactly once, counting the replay and what arrives live after it.
#[test]
fn loads_racing_a_turn_get_every_stored_event_exactly_once() {
    const CALLS: usize = 12;
    let env = Env::new("", "[approvals]\nbash = \"allow\"");
    for i in 0..CALLS {
        env.fake
            .push(bash_call(&format!("call_{i}"), &format!("echo {i}"), 1));
    }
    env.fake.push(openai::text(&["done"]));
    let mut a = env.client();
    let session = a.new_session(&env.work);
    let prompt = a.start_prompt(&session, "many steps");
    let mut loaders = Vec::new();
    for _ in 0..6 {
        let mut b = env.client();
        let (replay, _) = load_with_replay(&mut b, &session);
        loaders.push((b, replay));
    }
    let turn = a.drive(&prompt, no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    for (mut b, replay) in loaders {
        // A barrier: the turn is over, and an answer never overtakes events queued before
        // its request, so every live event has arrived once `status` is answered.
        let barrier = b.send("status", json!({}));
        let mut events = replay;
        loop {
            let frame = b.read();
            if is_update(&frame) {
                events.push(frame["params"].clone());
            } else if is_response(&frame) && frame["id"] == barrier {
                break;
            }
        }
        for kind in ["tool_call", "tool_result"] {
            let mut ids: Vec<&str> = events
                .iter()
                .filter(|e| e["type"] == kind)
                .map(|e| e["toolCallId"].as_str().unwrap())
                .collect();
            ids.sort();
            let mut want: Vec<String> = (0..CALLS).map(|i| format!("call_{i}")).collect();
            want.sort();
            assert_eq!(ids, want, "{kind} events: {events:#?}");
        }
    }
}

//! A connection that keeps the frames it read while waiting for something else, so answers
//! to concurrent requests and `session/update` events can be taken in any order; and the
//! driving of one turn: its events recorded, its questions answered by a policy.

use super::Conn;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::path::Path;

/// Whether `frame` is an answer (to any request).
pub fn is_response(frame: &Value) -> bool {
    frame.get("method").is_none() && frame.get("id").is_some()
}

/// Whether `frame` is a `session/update` notification.
pub fn is_update(frame: &Value) -> bool {
    frame["method"] == "session/update" && frame.get("id").is_none()
}

/// The `type` of each `session/update` (params).
pub fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

/// The `kind` of each stored message.
pub fn kinds(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .map(|m| m["kind"].as_str().unwrap())
        .collect()
}

/// The `rawOutput` of a tool result (a `tool_result` event or a stored message).
pub fn output(result: &Value) -> &str {
    result["rawOutput"]
        .as_str()
        .unwrap_or_else(|| panic!("no rawOutput: {result}"))
}

/// What a policy does with an `approval_request` event or an `elicitation/create` request.
pub enum Act {
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
pub fn no_questions(frame: &Value) -> Act {
    panic!("unexpected question from the daemon: {frame}")
}

/// Answers every approval request with `decision`; panics on elicitations.
pub fn decide_all(decision: &'static str) -> impl FnMut(&Value) -> Act {
    move |frame: &Value| {
        assert_eq!(frame["type"], "approval_request", "unexpected: {frame}");
        Act::Decide(decision)
    }
}

/// Answers every elicitation with `result`; panics on approval requests.
pub fn answer_all(result: Value) -> impl FnMut(&Value) -> Act {
    move |frame: &Value| {
        assert_eq!(frame["method"], "elicitation/create", "unexpected: {frame}");
        Act::Answer(result.clone())
    }
}

pub fn ignore_all(_: &Value) -> Act {
    Act::Ignore
}

/// Everything one `session/prompt` produced on one connection.
#[derive(Debug)]
pub struct TurnLog {
    /// `session/update` params, in arrival order, but `usage_update`s.
    pub events: Vec<Value>,
    /// The `usage_update` events (params), in arrival order: apart, so the tests of what a
    /// turn does read its events without the accounting between them.
    pub usage: Vec<Value>,
    /// `elicitation/create` requests (whole frames), in arrival order.
    pub elicitations: Vec<Value>,
    /// The `session/prompt` answer frame.
    pub answer: Value,
}

impl TurnLog {
    pub fn result(&self) -> &Value {
        assert!(
            self.answer.get("error").is_none(),
            "the prompt failed: {}\nevents: {:#?}",
            self.answer,
            self.events
        );
        &self.answer["result"]
    }

    pub fn error(&self) -> &Value {
        assert!(
            self.answer.get("error").is_some(),
            "the prompt did not fail: {}",
            self.answer
        );
        &self.answer["error"]
    }

    pub fn types(&self) -> Vec<&str> {
        types(&self.events)
    }

    pub fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == kind).collect()
    }

    pub fn one(&self, kind: &str) -> &Value {
        let found = self.of_type(kind);
        assert_eq!(found.len(), 1, "expected one {kind}: {:#?}", self.events);
        found[0]
    }
}

pub struct Client {
    pub conn: Conn,
    next: u64,
    /// Frames read but not yet taken by `drive`.
    inbox: VecDeque<Value>,
    /// How far `wait_for` has looked into the inbox.
    scanned: usize,
}

impl Client {
    /// Initializes `conn` with these capabilities.
    pub fn new(mut conn: Conn, capabilities: Value) -> Self {
        conn.call(
            "initialize",
            json!({"protocolVersion": 1, "clientInfo": {"name": "zeroclaw-tests", "version": "0"}, "capabilities": capabilities}),
        );
        Self {
            conn,
            next: 0,
            inbox: VecDeque::new(),
            scanned: 0,
        }
    }

    /// Sends a request and returns its id, without waiting for the answer.
    pub fn send(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = json!(format!("t-{}", self.next));
        self.conn
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The next frame: the oldest kept one, else the next from the daemon.
    pub fn read(&mut self) -> Value {
        match self.inbox.pop_front() {
            Some(frame) => {
                self.scanned = self.scanned.saturating_sub(1);
                frame
            }
            None => self.conn.recv(),
        }
    }

    /// The answer to request `id`, keeping every other frame for later.
    pub fn answer(&mut self, id: &Value) -> Value {
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
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.answer(&id)
    }

    /// Calls a method and returns its result, failing on an error.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let answer = self.request(method, params);
        assert!(answer.get("error").is_none(), "{method} failed: {answer}");
        answer["result"].clone()
    }

    /// Calls a method that must fail and returns its error object.
    pub fn fail(&mut self, method: &str, params: Value) -> Value {
        let answer = self.request(method, params);
        assert!(
            answer.get("error").is_some(),
            "{method} did not fail: {answer}"
        );
        answer["error"].clone()
    }

    /// `session/new` in `cwd`; returns the session id.
    pub fn new_session(&mut self, cwd: &Path) -> String {
        let result = self.call("session/new", json!({"cwd": cwd, "title": "test"}));
        result["sessionId"].as_str().unwrap().to_owned()
    }

    /// Sends a prompt; returns its request id.
    pub fn start_prompt(&mut self, session: &str, prompt: &str) -> Value {
        self.send(
            "session/prompt",
            json!({"sessionId": session, "prompt": prompt}),
        )
    }

    /// Waits for a frame matching `pred` that no earlier `wait_for` returned. The frames
    /// read stay queued for `drive`.
    pub fn wait_for(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
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
    pub fn wait_event(&mut self, kind: &str) -> Value {
        self.wait_for(|f| is_update(f) && f["params"]["type"] == kind)["params"].clone()
    }

    /// Reads frames until the answer to the prompt `prompt_id`, recording events and
    /// answering questions as `policy` says; then until every approval it sent is answered.
    pub fn drive(&mut self, prompt_id: &Value, mut policy: impl FnMut(&Value) -> Act) -> TurnLog {
        let mut events = Vec::new();
        let mut usage = Vec::new();
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
                if params["type"] == "usage_update" {
                    usage.push(params);
                } else {
                    events.push(params);
                }
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
            usage,
            elicitations,
            answer: answer.unwrap(),
        }
    }

    /// Sends a prompt and drives it to its answer.
    pub fn prompt(
        &mut self,
        session: &str,
        prompt: &str,
        policy: impl FnMut(&Value) -> Act,
    ) -> TurnLog {
        let id = self.start_prompt(session, prompt);
        self.drive(&id, policy)
    }

    /// Takes every queued `session/update` (params) but `usage_update`s, dropping the other
    /// queued frames.
    pub fn take_events(&mut self) -> Vec<Value> {
        self.scanned = 0;
        self.inbox
            .drain(..)
            .filter(|f| is_update(f) && f["params"]["type"] != "usage_update")
            .map(|f| f["params"].clone())
            .collect()
    }

    /// Sends `session/load` with replay and reads up to its answer: (replayed params,
    /// result).
    pub fn load_with_replay(&mut self, session: &str) -> (Vec<Value>, Value) {
        let id = self.send(
            "session/load",
            json!({"sessionId": session, "replay": true}),
        );
        let mut replay = Vec::new();
        loop {
            let frame = self.read();
            if is_update(&frame) {
                replay.push(frame["params"].clone());
            } else {
                assert!(is_response(&frame) && frame["id"] == id, "{frame}");
                return (replay, frame["result"].clone());
            }
        }
    }

    /// All of a session's messages (`session/messages`, up to 1000), checked against the
    /// `total` it reports.
    pub fn messages(&mut self, session: &str) -> Vec<Value> {
        let result = self.call(
            "session/messages",
            json!({"sessionId": session, "limit": 1000}),
        );
        let messages = result["messages"].as_array().unwrap().clone();
        assert_eq!(result["total"], json!(messages.len()), "{result}");
        messages
    }
}

//! The sandbox end to end: the real daemon, the real kernel, whole turns driven by the
//! scripted provider with `[approvals] bash = "allow"`. Each escape is blocked, nothing
//! changes outside, and the explained text reaches the model (the provider's next request)
//! and the client (the `tool_result` event); the allowed counterparts succeed.
//!
//! Ordering is by the daemon's answers, the provider's requests and the processes
//! themselves (a FIFO a background process blocks on); the only timeouts are hang guards.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(not(target_os = "linux"), allow(unused_imports, dead_code))]

#[path = "../common/mod.rs"]
mod common;

#[cfg(target_os = "linux")]
mod escape;
#[cfg(target_os = "linux")]
mod escapes;
#[cfg(target_os = "linux")]
mod file_tools;
#[cfg(target_os = "linux")]
mod network;
#[cfg(target_os = "linux")]
mod sessions;
mod status;
#[cfg(target_os = "linux")]
mod unattended;

use common::*;
use serde_json::{Value, json};
use std::path::PathBuf;
use zeroclaw_testkit::openai;

/// The start of every explained refusal.
pub const BLOCKED: &str = "blocked by the sandbox: ";

/// A daemon whose bash runs without asking, with `rest` (more tables), a session in its
/// work dir (`sandbox` given to `session/new` if not null), and a directory beside the work
/// dir that is outside every writable set.
pub struct Sandboxed {
    pub env: Env,
    pub client: Client,
    pub session: String,
    pub outside: PathBuf,
    requests: usize,
}

impl Sandboxed {
    pub fn new(rest: &str, sandbox: Value) -> Self {
        Self::with("", rest, sandbox)
    }

    /// `new`, with more `[approvals]` lines (`tool = "allow"`).
    pub fn with(approvals: &str, rest: &str, sandbox: Value) -> Self {
        let env = Env::new("", &format!("{BASH_ALLOWED}\n{approvals}\n{rest}"));
        let outside = env.dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let mut client = env.daemon.client();
        let mut params = json!({"cwd": env.work, "title": "sandbox"});
        if !sandbox.is_null() {
            params["sandbox"] = sandbox;
        }
        let session = client.call("session/new", params)["sessionId"]
            .as_str()
            .unwrap()
            .to_owned();
        Self {
            env,
            client,
            session,
            outside,
            requests: 0,
        }
    }

    /// Runs `command` as one bash call of a whole turn; returns the result the client was
    /// sent and what the model was sent, after checking they say the same.
    pub fn bash(&mut self, command: &str) -> Outcome {
        self.call("bash", json!({ "command": command }))
    }

    /// Runs one call of `tool` as a whole turn (see [`Sandboxed::bash`]).
    pub fn call(&mut self, tool: &str, args: Value) -> Outcome {
        let id = format!("call_{}", self.requests);
        let before = self.env.fake.requests().len();
        self.env.fake.push(tool_call(&id, tool, args, 1));
        self.env.fake.push(openai::text(&["ok"]));
        let turn = self.client.prompt(&self.session, "go", no_questions);
        assert_eq!(turn.result()["stopReason"], "end_turn");
        self.requests = self.env.fake.requests().len();
        let result = turn.one("tool_result").clone();
        assert_eq!(self.requests, before + 2);
        let body = &self.env.fake.wait_for_requests(self.requests)[self.requests - 1].body;
        let model = tool_content(body, &id);
        let client = output(&result).to_owned();
        assert_eq!(
            client, model,
            "the client and the model read the same result"
        );
        Outcome {
            text: model,
            is_error: result["isError"] == true,
        }
    }
}

#[derive(Debug)]
pub struct Outcome {
    pub text: String,
    pub is_error: bool,
}

impl Outcome {
    /// Asserts the result explains a refusal containing `words`.
    #[track_caller]
    pub fn blocked(&self, words: &str) {
        assert!(
            self.text.contains(BLOCKED) && self.text.contains(words),
            "expected `{BLOCKED}…{words}…` in:\n{}",
            self.text
        );
    }

    /// Asserts the command succeeded and nothing was blamed on the sandbox.
    #[track_caller]
    pub fn allowed(&self) {
        assert!(
            !self.is_error && !self.text.contains(BLOCKED),
            "expected success:\n{}",
            self.text
        );
    }
}

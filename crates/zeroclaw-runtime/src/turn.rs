//! The turn loop: prompt → model stream → tool calls (with approval) → results → the model
//! again, until it ends its turn, is cancelled, or reaches `agent.max_steps`.
//!
//! Ordering guarantees: every `session/update` of a turn is queued before its
//! `turn_complete`, and `turn_complete` before the `session/prompt` answer, on each
//! connection (one queue per connection keeps that order). Each message is stored when it
//! completes; nothing at all is stored when the very first model call fails.

use crate::history;
use crate::methods::errors::provider_error;
use crate::provider::{ChatMessage, ChatRequest, Delta, ToolCall};
use crate::session::{ActiveTurn, Session};
use crate::state::DaemonState;
use crate::store::{MessageKind, NewMessage, StoreError, Usage};
use crate::tools::{Answer, AskUser, ToolContext, ToolLimits, ToolOutput, ToolSet};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use zeroclaw_protocol::{
    Decision, ElicitationCreate, ElicitationRequest, Method, PromptResult, StopReason, Update,
};
use zeroclaw_rpc::{CallError, PeerHandle, RpcError};

/// The connection that sent the prompt: `ask_user` asks it.
#[derive(Debug, Clone)]
pub struct Origin {
    pub peer: PeerHandle,
    pub elicitation: bool,
}

fn default_system_prompt(cwd: &str) -> String {
    format!(
        "You are zeroclaw, an AI agent working on the user's machine in the directory {cwd}. \
         Use the tools to look at files, change them and run commands; paths are relative to \
         that directory. Changes and commands may need the user's approval. When you need a \
         decision only the user can make, ask with ask_user. Be concise."
    )
}

struct Turn<'a> {
    daemon: &'a DaemonState,
    session: &'a Session,
    active: &'a ActiveTurn,
    origin: &'a Origin,
    prompt: &'a str,
    /// Whether the turn (and its prompt) has been stored.
    started: bool,
    text: String,
    usage: Option<Usage>,
}

/// Runs one turn to its end.
pub async fn run(
    daemon: &DaemonState,
    session: &Session,
    active: &ActiveTurn,
    origin: &Origin,
    prompt: &str,
) -> Result<PromptResult, RpcError> {
    let mut turn = Turn {
        daemon,
        session,
        active,
        origin,
        prompt,
        started: false,
        text: String::new(),
        usage: None,
    };
    turn.run().await
}

impl Turn<'_> {
    fn id(&self) -> &str {
        &self.active.id
    }

    fn emit(&self, update: Update<'_>) {
        self.session.broadcast(self.id(), update);
    }

    async fn run(&mut self) -> Result<PromptResult, RpcError> {
        let store = &self.daemon.sessions.store;
        let rows = store
            .history(&self.session.id)
            .map_err(|e| self.storage_failure(e))?;
        let mut conversation = history::conversation(&rows);
        conversation.push(ChatMessage::User {
            text: self.prompt.to_owned(),
        });
        let system = self
            .daemon
            .config
            .agent
            .system_prompt
            .clone()
            .unwrap_or_else(|| default_system_prompt(&self.session.cwd));
        let cancel = self.active.cancel.clone();
        for step in 1..=i64::from(self.daemon.config.agent.max_steps) {
            // The step's calls run against the tools this model call was offered.
            let tools = self.daemon.tools.snapshot();
            let request = ChatRequest {
                model: &self.session.model,
                system: Some(&system),
                messages: &conversation,
                tools: tools.definitions(),
            };
            let opened = tokio::select! {
                biased;
                () = cancel.cancelled() => None,
                opened = self.daemon.provider.open(&request) => Some(opened),
            };
            let open = match opened {
                None => return self.finish(StopReason::Cancelled),
                Some(Err(e)) => {
                    let error = provider_error(
                        &e,
                        &self.daemon.provider,
                        &self.session.model,
                        Some(self.id()),
                    );
                    return Err(self.fail(error, &e.message));
                }
                Some(Ok(open)) => open,
            };
            self.ensure_started()?;

            let mut text = String::new();
            let mut thought = String::new();
            let outcome = {
                let session = self.session;
                let turn_id = self.active.id.as_str();
                let mut on_delta = |delta: Delta| match delta {
                    Delta::Text(t) => {
                        session.stream_chunk(turn_id, false, &t);
                        text.push_str(&t);
                    }
                    Delta::Thought(t) => {
                        session.stream_chunk(turn_id, true, &t);
                        thought.push_str(&t);
                    }
                };
                let read = open.read(&mut on_delta, session);
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => None,
                    outcome = read => Some(outcome),
                }
            };
            let cancelled = outcome.is_none();
            self.session
                .store_streamed(|| {
                    self.store_text(step, MessageKind::Thought, &thought, cancelled)?;
                    self.store_text(step, MessageKind::Assistant, &text, cancelled)
                })
                .map_err(|e| self.storage_failure(e))?;
            if !text.is_empty() {
                if !self.text.is_empty() {
                    self.text.push_str("\n\n");
                }
                self.text.push_str(&text);
            }
            let result = match outcome {
                None => return self.finish(StopReason::Cancelled),
                Some(Err(e)) => {
                    let error = provider_error(
                        &e,
                        &self.daemon.provider,
                        &self.session.model,
                        Some(self.id()),
                    );
                    return Err(self.fail(error, &e.message));
                }
                Some(Ok(result)) => result,
            };
            if let Some(u) = result.usage {
                let total = self.usage.get_or_insert(Usage {
                    input_tokens: 0,
                    output_tokens: 0,
                });
                total.input_tokens += u.input_tokens;
                total.output_tokens += u.output_tokens;
            }
            if result.tool_calls.is_empty() {
                return self.finish(StopReason::EndTurn);
            }
            conversation.push(ChatMessage::Assistant {
                text,
                tool_calls: result.tool_calls.clone(),
            });
            for call in &result.tool_calls {
                let raw_input = call.raw_input();
                self.session
                    .record(
                        self.id(),
                        Update::ToolCall {
                            tool_call_id: call.id.clone(),
                            name: call.name.clone(),
                            raw_input: raw_input.clone(),
                        },
                        |_| {
                            self.store(
                                MessageKind::ToolCall,
                                &NewMessage {
                                    step,
                                    tool_call_id: Some(&call.id),
                                    tool_name: Some(&call.name),
                                    data: Some(&raw_input),
                                    ..NewMessage::default()
                                },
                            )
                        },
                    )
                    .map_err(|e| self.storage_failure(e))?;
                let output = self.execute(call, &tools).await;
                let cancelled = cancel.is_cancelled();
                self.session
                    .record(
                        self.id(),
                        Update::ToolResult {
                            tool_call_id: call.id.clone(),
                            name: call.name.clone(),
                            raw_output: Value::String(output.text.clone()),
                            is_error: output.is_error,
                        },
                        |_| {
                            self.store(
                                MessageKind::ToolResult,
                                &NewMessage {
                                    step,
                                    tool_call_id: Some(&call.id),
                                    tool_name: Some(&call.name),
                                    data: Some(&Value::String(output.text.clone())),
                                    is_error: output.is_error,
                                    cancelled,
                                    ..NewMessage::default()
                                },
                            )
                        },
                    )
                    .map_err(|e| self.storage_failure(e))?;
                conversation.push(ChatMessage::ToolResult {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    output: output.text,
                    is_error: output.is_error,
                });
                if cancelled {
                    return self.finish(StopReason::Cancelled);
                }
            }
        }
        self.finish(StopReason::MaxTurns)
    }

    /// Stores the turn and its prompt, once, when the first model call has started.
    fn ensure_started(&mut self) -> Result<(), RpcError> {
        if !self.started {
            self.daemon
                .sessions
                .store
                .begin_turn(&self.session.id, self.id(), self.prompt)
                .map_err(|e| self.storage_failure(e))?;
            self.started = true;
        }
        Ok(())
    }

    /// Appends one message of this turn. It runs inside `Session::record` and
    /// `Session::store_streamed`, under the session's audience lock, so it only stores:
    /// the caller turns an error into [`Self::storage_failure`] (which sends events) after.
    fn store(&self, kind: MessageKind, message: &NewMessage<'_>) -> Result<(), StoreError> {
        let message = NewMessage {
            turn_id: Some(self.id()),
            ..message.clone()
        };
        self.daemon
            .sessions
            .store
            .append(&self.session.id, kind, &message)
            .map(drop)
    }

    fn store_text(
        &self,
        step: i64,
        kind: MessageKind,
        text: &str,
        cancelled: bool,
    ) -> Result<(), StoreError> {
        if text.is_empty() {
            return Ok(());
        }
        self.store(
            kind,
            &NewMessage {
                step,
                text: Some(text),
                cancelled,
                ..NewMessage::default()
            },
        )
    }

    fn finish(&mut self, stop: StopReason) -> Result<PromptResult, RpcError> {
        if stop == StopReason::Cancelled {
            // A turn cancelled before its first model call answered is still recorded:
            // the user did send the prompt.
            self.ensure_started()?;
        }
        self.daemon
            .sessions
            .store
            .finish_turn(self.id(), stop.as_str(), self.usage, None)
            .map_err(|e| self.storage_failure(e))?;
        // The turn has written its last; release the session before saying so, so a client
        // that reacts to `turn_complete` finds it idle.
        self.session.clear_turn(self.id());
        self.emit(Update::TurnComplete {
            stop_reason: stop,
            error: None,
        });
        Ok(PromptResult {
            turn_id: self.id().to_owned(),
            stop_reason: stop,
            text: std::mem::take(&mut self.text),
            usage: self.usage,
        })
    }

    /// Ends a failed turn: marks it failed if it was stored, tells the attached clients,
    /// and returns the error (with `data.turnId`, and `data.stored` saying whether
    /// anything of the turn was kept).
    fn fail(&self, mut error: RpcError, message: &str) -> RpcError {
        if self.started {
            if let Err(e) = self.daemon.sessions.store.finish_turn(
                self.id(),
                "failed",
                self.usage,
                Some(message),
            ) {
                tracing::error!(error = %e, turn = %self.id(), "could not mark the turn failed");
            }
            self.session.clear_turn(self.id());
            self.emit(Update::TurnComplete {
                stop_reason: StopReason::Error,
                error: Some(message.to_owned()),
            });
        }
        let data = error.data.get_or_insert_with(|| json!({}));
        if let Value::Object(map) = data {
            map.insert("turnId".into(), json!(self.id()));
            map.insert("stored".into(), json!(self.started));
        }
        error
    }

    fn storage_failure(&self, e: StoreError) -> RpcError {
        tracing::error!(error = %e, session = %self.session.id, turn = %self.id(), "storage failed during a turn");
        let message = format!(
            "{e}; the turn was stopped and everything stored before it is kept (is the disk full, or the database read-only?)"
        );
        self.fail(RpcError::internal(&message), &message)
    }

    /// Runs one tool call, asking for approval when its policy says so. Never fails: every
    /// problem becomes an error result the model can read.
    async fn execute(&self, call: &ToolCall, tools: &ToolSet) -> ToolOutput {
        let args = match &call.arguments {
            Ok(args) => args,
            Err(why) => return error_output(why.clone()),
        };
        let Some(tool) = tools.get(&call.name) else {
            return error_output(format!(
                "there is no tool named {:?}; the tools are: {}",
                call.name,
                tools.names().join(", ")
            ));
        };
        if let Err(refusal) = self.permission(call).await {
            return error_output(refusal);
        }
        let tools_config = &self.daemon.config.tools;
        let context = ToolContext {
            cwd: self.session.cwd.clone().into(),
            cancel: self.active.cancel.child_token(),
            process_records: Some(crate::tools::orphans::dir(&self.daemon.paths.data_dir)),
            limits: ToolLimits {
                output_limit_bytes: tools_config.output_limit_bytes,
                bash_default_timeout: Duration::from_secs(tools_config.bash_timeout_secs.max(1)),
                ..ToolLimits::default()
            },
            ask_user: self.origin.elicitation.then(|| {
                Arc::new(Elicitation {
                    peer: self.origin.peer.clone(),
                    session_id: self.session.id.clone(),
                    turn_id: self.id().to_owned(),
                    timeout: Duration::from_secs(self.daemon.config.agent.ask_user_timeout_secs),
                }) as Arc<dyn AskUser>
            }),
        };
        tool.run(args, &context).await
    }

    async fn permission(&self, call: &ToolCall) -> Result<(), String> {
        use crate::config::Policy;
        let name = call.name.as_str();
        let policy = if self.session.is_always_allowed(name) {
            Policy::Allow
        } else {
            self.daemon.config.approvals.policy(name)
        };
        match policy {
            Policy::Allow => return Ok(()),
            Policy::Deny => {
                return Err(format!(
                    "the daemon's policy forbids {name} ([approvals] {name} = \"deny\"); do not try it again, find another way or tell the user"
                ));
            }
            Policy::Ask => {}
        }
        let request_id = uuid::Uuid::new_v4().to_string();
        let request = Update::ApprovalRequest {
            request_id: request_id.clone(),
            tool_call_id: call.id.clone(),
            name: name.to_owned(),
            raw_input: call.raw_input(),
            options: Decision::ALL.to_vec(),
        };
        // Registered and sent as one step, so a connection joining now gets it once.
        let Ok(answer) = self.session.record(self.id(), request, |frame| {
            Ok::<_, std::convert::Infallible>(self.active.add_approval(&request_id, frame.cloned()))
        });
        let timeout = Duration::from_secs(self.daemon.config.approvals.timeout_secs);
        let decision = tokio::select! {
            decision = answer => decision.ok(),
            () = tokio::time::sleep(timeout) => {
                self.active.remove_approval(&request_id);
                return Err(format!(
                    "nobody answered the approval request within {} s, so this {name} call was refused",
                    timeout.as_secs()
                ));
            }
            () = self.active.cancel.cancelled() => {
                self.active.remove_approval(&request_id);
                return Err("the turn was cancelled before this call was approved; it did not run".into());
            }
        };
        match decision {
            Some(Decision::AllowOnce) => Ok(()),
            Some(Decision::AllowAlways) => {
                let list = self.session.allow_always(name);
                if let Err(e) = self
                    .daemon
                    .sessions
                    .store
                    .set_always_allow(&self.session.id, &list)
                {
                    tracing::warn!(error = %e, "could not store an allow_always decision; it holds until the daemon stops");
                }
                Ok(())
            }
            Some(Decision::Reject) => Err(format!(
                "the user rejected this {name} call; it did not run. Do not retry it unchanged; ask the user or try another approach"
            )),
            None => Err("the approval request was dropped; the call did not run".into()),
        }
    }
}

/// `ask_user`'s way to the person: an `elicitation/create` request to the client that sent
/// the prompt.
#[derive(Debug)]
struct Elicitation {
    peer: PeerHandle,
    session_id: String,
    turn_id: String,
    timeout: Duration,
}

impl AskUser for Elicitation {
    fn ask<'a>(&'a self, question: &'a str, choices: &'a [String]) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            let mut answer_schema = json!({"type": "string", "description": question});
            if !choices.is_empty() {
                answer_schema["enum"] = json!(choices);
            }
            let request = ElicitationRequest {
                session_id: Some(self.session_id.clone()),
                turn_id: Some(self.turn_id.clone()),
                message: question.to_owned(),
                requested_schema: Some(json!({
                    "type": "object",
                    "properties": {"answer": answer_schema},
                    "required": ["answer"],
                })),
            };
            let params = serde_json::to_value(&request).unwrap_or(Value::Null);
            let result = match self
                .peer
                .request(ElicitationCreate::NAME, params, self.timeout)
                .await
            {
                Ok(result) => result,
                Err(CallError::Timeout(d)) => return Answer::TimedOut(d),
                Err(CallError::Closed) => return Answer::Disconnected,
                Err(CallError::Rpc(e)) => return Answer::Failed(e.message),
            };
            match result.get("action").and_then(Value::as_str) {
                Some("accept") => {
                    let content = result.get("content").cloned().unwrap_or(Value::Null);
                    Answer::Given(match content.get("answer") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => content.to_string(),
                    })
                }
                Some("decline") => Answer::Declined,
                Some("cancel") => Answer::Dismissed,
                other => Answer::Unknown(other.map(str::to_owned)),
            }
        })
    }
}

fn error_output(text: String) -> ToolOutput {
    ToolOutput {
        text,
        is_error: true,
    }
}

//! Subagents: a `task` call (`tools/task.rs`) runs a child session to its end and returns
//! its final answer.
//!
//! The child is a session of its own, stored with the session and the call that made it
//! (`parentSessionId`, `parentToolCallId`; `session/list` shows it only when asked), in
//! the parent's cwd and sandbox (the parent's own, or its unattended run's), with a fresh
//! context: its profile's system prompt, the project's instructions, and the call's
//! `prompt`. Its turn runs inside the parent's call, so:
//! - it is cancelled with the parent's turn (its cancellation is a child of the parent's);
//! - its events go to its own session's clients and, while the call runs, to the parent
//!   session's, in the parent's turn and tagged with the call (`session::Forward`), its
//!   `turn_complete` excepted;
//! - its approval requests are answered like the parent's: `session/approve` on the
//!   parent session reaches them (`ActiveTurn::decide` looks in the children's);
//! - it is never offered `task` (depth 1) nor `ask_user` (it has no client of its own to
//!   ask), and it reads and writes the disk, not an editor's buffers.
//!
//! At most `[agents] max_concurrent` children run at once across the daemon: a call past it
//! waits for a slot, first come first served, and stops waiting when its turn is
//! cancelled. Children do not take a slot of `agent.max_running_turns`: their parent
//! holds one.
//!
//! What a child spends is spent by its parent's turn (`meter.rs`): its calls count against
//! the parent turn's account, so the parent's budgets (`[limits]`, an unattended entry's)
//! see them, the parent turn's usage (and its run's) includes them, and a child starting or
//! going on once the parent's budget is spent stops with `budget`. The child session's own
//! usage stays its own.

use super::Origin;
use super::halt::or_cancelled;
use super::step::Turn;
use crate::project::ToolChoice;
use crate::provider::ToolCall;
use crate::session::{ActiveTurn, Forward, Session};
use crate::store::ParentRef;
use crate::tools::{ASK_USER, DynTool, TASK, ToolOutput, ToolSet, task};
use serde_json::Value;
use std::sync::Arc;
use zeroclaw_protocol::StopReason;
use zeroclaw_protocol::methods::PermissionMode;

/// Gives a subagent's session back however its run ends: the parent no longer forwards
/// its events nor routes decisions to it, its turn is over, and it leaves memory if no
/// client holds it.
struct ChildRun<'a> {
    env: super::Env<'a>,
    parent: &'a ActiveTurn,
    child: Arc<Session>,
    turn: Arc<ActiveTurn>,
}

impl Drop for ChildRun<'_> {
    fn drop(&mut self) {
        self.child.set_forward(None);
        self.parent.remove_child(&self.turn.id);
        self.child.clear_turn(&self.turn.id);
        self.turn.finished.cancel();
        self.env.sessions.evict_if_idle(&self.child);
    }
}

impl Turn<'_> {
    /// Whether this turn offers `task`: not in a subagent's session (depth 1), and not
    /// with `[agents] max_concurrent = 0`.
    pub(super) fn offers_task(&self) -> bool {
        self.subagent.is_none() && !self.session.child && self.env.config.agents.max_concurrent > 0
    }

    /// `tools` as this turn offers them: with `task`, or, in a subagent's turn, only its
    /// profile's.
    pub(super) fn with_subagents(&self, tools: Arc<ToolSet>) -> Arc<ToolSet> {
        if let Some(profile) = self.subagent {
            let tools = tools.without(TASK).without(ASK_USER);
            return Arc::new(match profile.map(|p| &p.tools) {
                None | Some(ToolChoice::All) => tools,
                Some(ToolChoice::ReadOnly) => tools.only(|d| d.read_only),
                Some(ToolChoice::Named(names)) => tools.only(|d| names.contains(&d.name)),
            });
        }
        if !self.offers_task() {
            return tools;
        }
        let task: Arc<dyn DynTool> = task::definition(&self.agents);
        Arc::new(tools.with(task))
    }

    /// Runs a `task` call: its child session to its end. Never fails: every problem is
    /// the call's error result.
    pub(super) async fn task(&self, call: &ToolCall, args: &Value) -> ToolOutput {
        let args = match task::args(args) {
            Ok(args) => args,
            Err(why) => return ToolOutput::error(why),
        };
        let profile = match args.agent.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(name) => match self.agents.iter().find(|a| a.name == name) {
                Some(profile) => Some(profile),
                None => {
                    let names: Vec<&str> = self.agents.iter().map(|a| a.name.as_str()).collect();
                    return ToolOutput::error(format!(
                        "task: there is no agent {name:?}; the agents are: {}",
                        names.join(", ")
                    ));
                }
            },
        };
        let cancelled =
            || ToolOutput::error("task: the turn was cancelled; the subagent did not run");
        let slot = or_cancelled(
            &self.active.cancel,
            self.env.subagent_slots.clone().acquire_owned(),
        )
        .await;
        let _slot = match slot {
            Err(_) => return cancelled(),
            Ok(Err(_)) => return ToolOutput::error("task: subagents are shut down"),
            Ok(Ok(permit)) => permit,
        };
        let Some(parent) = self.env.sessions.live(&self.session.id) else {
            return ToolOutput::error("task: the session left memory; the subagent did not run");
        };
        let child_id = uuid::Uuid::new_v4().to_string();
        let model = profile
            .and_then(|p| p.model.clone())
            .unwrap_or_else(|| self.model.clone());
        let title = args.description.trim();
        let row = self
            .env
            .store
            .create_child_session(
                &child_id,
                (!title.is_empty()).then_some(title),
                &self.session.cwd,
                &model,
                self.session.sandbox,
                Some(ParentRef {
                    session_id: self.session.id.clone(),
                    tool_call_id: call.id.clone(),
                }),
            )
            .await;
        let mut row = match row {
            Ok(row) => row,
            Err(e) => {
                tracing::error!(error = %e, session = %self.session.id, "could not store a subagent's session");
                return ToolOutput::error(format!(
                    "task: the subagent's session could not be stored: {e}"
                ));
            }
        };
        // The child asks as its parent does: in `accept-edits` or `auto` (the same sandbox)
        // its calls go through as the parent's would. (`plan` never gets here: `task` is not
        // a read-only tool.) Should the second write fail, it stays `default`: it asks more.
        let mode = self.session.mode();
        if mode != PermissionMode::Default {
            match self.env.store.set_session_mode(&row.id, mode).await {
                Ok(_) => row.mode = mode,
                Err(e) => {
                    tracing::warn!(error = %e, child = %row.id, "could not store a subagent's mode; it asks as `default`")
                }
            }
        }
        self.env.sessions.count_change(1);
        let child = self.env.sessions.create(&row);
        let turn = ActiveTurn::child_of(self.active, uuid::Uuid::new_v4().to_string());
        if child.try_start(turn.clone()).is_err() {
            return ToolOutput::error("task: the subagent's session is busy");
        }
        self.active.add_child(turn.clone());
        child.set_forward(Some(Forward {
            parent,
            turn_id: self.id().to_owned(),
            tool_call_id: call.id.clone(),
        }));
        let run = ChildRun {
            env: self.env,
            parent: self.active,
            child,
            turn,
        };
        // The parent's client, for the log; nobody is asked questions, and the disk is
        // read and written (an editor's buffers belong to the parent's session).
        let origin = Origin {
            peer: self.origin.peer.clone(),
            elicitation: false,
            unattended: self.origin.unattended.clone(),
            fs: zeroclaw_protocol::FsCapabilities::default(),
        };
        tracing::info!(session = %self.session.id, child = %run.child.id, agent = profile.map_or("-", |p| p.name.as_str()), "subagent started");
        // Boxed: a turn that runs a turn is a future that holds one of its own type.
        let prompt = crate::prompt::Prompt::from(args.prompt.clone());
        let outcome = Box::pin(super::step::run_as(
            self.env,
            &run.child,
            &run.turn,
            &origin,
            &prompt,
            Some(profile),
            self.meter.child_of(self.id()),
        ))
        .await;
        let child_id = run.child.id.clone();
        drop(run);
        let limit = self.tools_context.limits.output_limit_bytes;
        match outcome {
            Ok(result) => match result.stop_reason {
                StopReason::Cancelled => ToolOutput::error(format!(
                    "task: the subagent (session {child_id}) was cancelled"
                )),
                stop => {
                    let mut text = result.text;
                    if text.trim().is_empty() {
                        text = "(the subagent ended without an answer)".into();
                    }
                    if stop == StopReason::MaxTurns {
                        text.push_str(
                            "\n\n[the subagent stopped at agent.max_steps before it finished]",
                        );
                    }
                    if let Some(budget) = result.budget {
                        text.push_str(&format!(
                            "\n\n[the subagent stopped before it finished: the turn's budget {} is spent ({})]",
                            budget.limit, budget.used
                        ));
                    }
                    ToolOutput::ok(cut(text, limit, &child_id))
                }
            },
            Err(e) => ToolOutput::error(format!(
                "task: the subagent (session {child_id}) failed: {e}"
            )),
        }
    }
}

/// The answer cut to `limit` bytes (at a character boundary), saying where the whole is.
fn cut(mut text: String, limit: usize, child_id: &str) -> String {
    if text.len() <= limit {
        return text;
    }
    let total = text.len();
    let mut at = limit;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    text.push_str(&format!(
        "\n[... cut: the first {at} of the answer's {total} bytes (tools.output_limit_bytes); \
         the whole answer is in session {child_id} ...]"
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_answer_is_cut_at_a_character_and_says_where_the_rest_is() {
        assert_eq!(cut("short".into(), 10, "c"), "short");
        let cut = cut("ééééé".into(), 5, "c1");
        assert!(
            cut.starts_with("éé\n[... cut: the first 4 of the answer's 10 bytes"),
            "{cut}"
        );
        assert!(cut.contains("session c1"), "{cut}");
    }
}

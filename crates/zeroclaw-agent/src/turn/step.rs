//! The step loop: the model streams, its text and tool calls are stored and sent, the tools
//! run, and their results go back to the model.
//!
//! Ordering guarantees: every `session/update` of a turn is queued before its
//! `turn_complete`, and `turn_complete` before the `session/prompt` answer, on each
//! connection (one queue per connection keeps that order). Each message is stored when it
//! completes; when the very first model call fails, only the prompt and its error are (see `fail`).

use super::budget::{self, Limit};
use super::compact::{CompactError, Compaction, Mode};
use super::halt::{Halt, or_cancelled};
use super::hooks::{CallRef, Fire, pre_tool_outcome};
use super::meter::{Gauge, Meter};
use super::{Env, Failure, Origin, TurnError};
use crate::history;
use crate::mcp::Mcp;
use crate::project;
use crate::project::AgentProfile;
use crate::project::hooks::{Hook, HookEvent, HookSet, Verdict};
use crate::prompt::Prompt;
use crate::provider::{ChatMessage, ChatRequest, ProviderError, StepResult, ToolCall, window};
use crate::session::{ActiveTurn, Session};
use crate::store::{MessageKind, NewMessage, StoreError};
use crate::tools::{ToolContext, ToolOutput, ToolSet};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use zeroclaw_protocol::{PromptResult, StopReason, Update};

fn default_system_prompt(cwd: &str) -> String {
    format!(
        "You are zeroclaw, an AI agent working on the user's machine in the directory {cwd}. \
         Use the tools to look at files, change them and run commands; paths are relative to \
         that directory. Changes and commands may need the user's approval. When you need a \
         decision only the user can make, ask with ask_user. Be concise."
    )
}

/// The system prompt, with the summary of what compaction folded after it.
fn with_summary(system: &str, summary: Option<&str>) -> String {
    match summary {
        Some(summary) => format!(
            "{system}\n\nThe earlier part of this conversation was compacted into this summary \
             (the messages after it follow verbatim):\n{summary}"
        ),
        None => system.to_owned(),
    }
}

/// How a model call ended, short of failing or being cancelled (`model_call.rs`).
pub(super) enum Call {
    /// Its text and result, and what it used as the provider that answered counts it.
    Done(String, StepResult, Answered),
    /// The provider refused the request as longer than the model's context window.
    TooLong(ProviderError),
}

/// A model call's usage, priced by the provider of the route that answered it, and that
/// provider's model's context window (the gauge's size).
pub(super) struct Answered {
    pub(super) usage: zeroclaw_protocol::UsageTotals,
    pub(super) window: u64,
}

/// What the turn starts from (`Turn::before_turn`).
struct Start {
    /// The conversation so far, the prompt last.
    context: history::Context,
    /// The system prompt, before any compaction summary.
    system: String,
    /// The session's own MCP servers.
    own: Option<Arc<Mcp>>,
    /// Why a `UserPromptSubmit` hook rejected the prompt: the turn ends without a model call.
    rejected: Option<String>,
}

pub(super) struct Turn<'a> {
    pub(super) env: Env<'a>,
    pub(super) session: &'a Session,
    pub(super) active: &'a ActiveTurn,
    pub(super) origin: &'a Origin,
    /// The session's model when the turn started: the whole turn uses it, whatever
    /// `session/set_model` does meanwhile.
    pub(super) model: String,
    prompt: &'a Prompt,
    /// Whether the turn (and its prompt) has been stored.
    started: bool,
    /// The model's answers so far, joined: the prompt result's `text` (`model_call.rs`
    /// adds each call's).
    pub(super) text: String,
    /// The turn's token usage so far (`usage.rs`).
    pub(super) meter: Meter,
    /// What the turn's tool calls run against (`tool_context.rs`).
    pub(super) tools_context: ToolContext,
    /// The checkpoint taken as the turn starts (`checkpoint.rs`), stored with it. Behind
    /// a lock only so `&self` paths (`fail`) can wait for it; the turn runs one step at a
    /// time, so it is never contended.
    pub(super) checkpoint: tokio::sync::Mutex<super::start_snapshot::StartCheckpoint>,
    /// The session's hooks, as the turn started (`hooks.rs`).
    hooks: HookSet,
    /// The project root, given to hooks as `ZEROCLAW_PROJECT_DIR`.
    pub(super) project_root: PathBuf,
    /// The user trusts the project, as the turn started: its hooks and its skills'
    /// scripts run (`skill_scripts.rs`).
    pub(super) project_trusted: bool,
    /// A `Stop` hook has already sent the model back to work in this turn (its
    /// `stop_hook_active`).
    stop_hook_active: bool,
    /// A subagent's turn (`subagent.rs`): the profile it runs (`None`: a general-purpose
    /// one), whose tools and system prompt it has.
    pub(super) subagent: Option<Option<&'a AgentProfile>>,
    /// The project's agent profiles, as the turn started: what `task` offers.
    pub(super) agents: Vec<AgentProfile>,
    /// The budget the turn stopped at (`budget.rs`).
    budget: Option<zeroclaw_protocol::BudgetStop>,
}

/// Runs one turn to its end.
pub(super) async fn run(
    env: Env<'_>,
    session: &Session,
    active: &ActiveTurn,
    origin: &Origin,
    prompt: &Prompt,
) -> Result<PromptResult, TurnError> {
    run_as(env, session, active, origin, prompt, None, Meter::default()).await
}

/// [`run`], as a subagent running `profile` when `subagent` is set (`subagent.rs`), whose
/// `meter` counts against its parent turn's account.
pub(super) async fn run_as(
    env: Env<'_>,
    session: &Session,
    active: &ActiveTurn,
    origin: &Origin,
    prompt: &Prompt,
    subagent: Option<Option<&AgentProfile>>,
    meter: Meter,
) -> Result<PromptResult, TurnError> {
    let mut turn = Turn {
        env,
        session,
        active,
        origin,
        model: session.model(),
        prompt,
        started: false,
        text: String::new(),
        meter,
        tools_context: super::tool_context::build(env, session, active, origin),
        checkpoint: Default::default(),
        hooks: HookSet::default(),
        project_root: PathBuf::from(&session.cwd),
        project_trusted: false,
        stop_hook_active: false,
        subagent,
        agents: Vec::new(),
        budget: None,
    };
    turn.run().await
}

impl Turn<'_> {
    pub(super) fn id(&self) -> &str {
        &self.active.id
    }

    pub(super) fn emit(&self, update: Update<'_>) {
        self.session.broadcast(self.id(), update);
    }

    /// The turn, top to bottom: its steps, then its end. However the steps stop — the
    /// model ends the turn, `agent.max_steps`, a cancellation, a failure — this is where.
    async fn run(&mut self) -> Result<PromptResult, TurnError> {
        let stop = match self.steps().await {
            Ok(stop) => stop,
            Err(Halt::Cancelled) => StopReason::Cancelled,
            Err(Halt::Failed(error)) => return Err(error),
        };
        self.finish(stop).await
    }

    /// Model calls and their tool calls until the model ends the turn (`end_turn`),
    /// `agent.max_steps` is reached (`max_turns`) or a budget is (`budget`).
    async fn steps(&mut self) -> Result<StopReason, Halt> {
        let Start {
            mut context,
            system: base_system,
            own,
            rejected,
        } = self.before_turn().await?;
        if let Some(why) = rejected {
            self.text = why;
            return Ok(StopReason::EndTurn);
        }
        let window = window::context_window(self.env.config.provider.context_window, &self.model);
        // A copy the requests borrow while the turn itself is borrowed mutably.
        let model = self.model.clone();
        let limit = window * u64::from(self.env.config.agent.compact_at_percent) / 100;
        // Each step compacts at most once before its call, and the turn retries at most
        // once after a refusal as too long: a session that cannot be made to fit fails.
        let mut compacted_at = 0;
        let mut retried = false;
        let limits: Vec<Limit> = Limit::of_config(&self.env.config.limits)
            .into_iter()
            .chain(self.origin.unattended.iter().flat_map(|u| u.budget.clone()))
            .collect();
        let currency = self
            .env
            .config
            .provider
            .pricing
            .map(|p| p.currency)
            .unwrap_or_default();
        let mut step = 1;
        while step <= i64::from(self.env.config.agent.max_steps) {
            // Between steps, the last one's tool calls answered: a budget reached stops here.
            // The account counts the subagents' calls too (a subagent's is its parent's), so
            // a subagent whose parent's budget is spent stops before its first call.
            let spent = self.meter.account.spent();
            if let Some(stop) =
                budget::reached(&limits, spent.usage.as_ref(), spent.calls, currency)
            {
                self.budget = Some(stop);
                return Ok(StopReason::Budget);
            }
            // The step boundary: `session/steer` messages sent meanwhile go in now.
            let steers = self.active.take_steers();
            self.steered(step, steers, &mut context.messages).await?;
            let tools = self.offered_tools(own.as_deref());
            let mut system = with_summary(&base_system, context.summary.as_deref());
            system.push_str(self.mode_prompt());
            let offered = self.offered_definitions(&tools);
            let request = ChatRequest {
                model: &model,
                system: Some(&system),
                messages: &context.messages,
                tools: &offered,
            };
            let estimate = self.env.provider.estimate(&request);
            if compacted_at < step && self.session.calibration().apply(estimate) > limit {
                compacted_at = step;
                if let Some(compacted) = self.compact(Mode::Auto, window).await? {
                    context = compacted;
                    continue;
                }
            }
            let calibrated = self.session.calibration().apply(estimate);
            let (text, result, answered) = match self.model_call(step, &request, calibrated).await?
            {
                Call::Done(text, result, answered) => (text, result, answered),
                Call::TooLong(error) => {
                    if !retried {
                        retried = true;
                        if let Some(compacted) = self.compact(Mode::Forced, window).await? {
                            context = compacted;
                            continue;
                        }
                    }
                    return Err(self.provider_failure(error).await.into());
                }
            };
            let gauge = Gauge {
                used: Some(answered.usage.input_tokens),
                size: answered.window,
            };
            self.count_usage(answered.usage, gauge).await?;
            if let Some(usage) = result.usage {
                let mut calibration = self.session.calibration();
                calibration.learn(estimate, usage.input_tokens);
                self.session.set_calibration(calibration);
            }
            if result.tool_calls.is_empty() {
                let Some(feedback) = self.stop_hooks(step).await? else {
                    // A steer message not yet taken gets one more step, so it is answered.
                    let steers = self.active.take_steers_or_close();
                    if steers.is_empty() {
                        return Ok(StopReason::EndTurn);
                    }
                    context.messages.push(ChatMessage::Assistant {
                        text,
                        tool_calls: Vec::new(),
                    });
                    step += 1;
                    self.steered(step, steers, &mut context.messages).await?;
                    continue;
                };
                context.messages.push(ChatMessage::Assistant {
                    text,
                    tool_calls: Vec::new(),
                });
                context.messages.push(ChatMessage::user(feedback));
                step += 1;
                continue;
            }
            context.messages.push(ChatMessage::Assistant {
                text,
                tool_calls: result.tool_calls.clone(),
            });
            self.tool_calls(step, &result.tool_calls, &tools, &mut context.messages)
                .await?;
            step += 1;
        }
        Ok(StopReason::MaxTurns)
    }

    /// Before the first step: the conversation so far with the prompt after it, and the
    /// system prompt; the MCP servers still starting (the daemon or the session just
    /// started) are waited for, each at most its `timeout_secs`, so the first prompt gets
    /// their tools.
    async fn before_turn(&mut self) -> Result<Start, Halt> {
        self.take_checkpoint();
        let rows = self.env.store.context(&self.session.id).await;
        let rows = self.stored(rows).await?;
        let mut context = history::conversation(&rows);
        context.messages.push(ChatMessage::User {
            text: self.prompt.text.clone(),
            images: self.prompt.images.clone(),
        });
        let mut system = match self.subagent {
            Some(profile) => project::agents::system_prompt(profile, &self.session.cwd),
            None => self
                .env
                .config
                .agent
                .system_prompt
                .clone()
                .unwrap_or_else(|| default_system_prompt(&self.session.cwd)),
        };
        let project = self.project().await?;
        system.push_str(&project.prompt_sections());
        self.agents = project.agents;
        if let Some(said) = history::session_context(&rows) {
            system.push_str(&said);
        }
        self.tools_context.skills = project.skills;
        self.hooks = project.hooks;
        self.project_root = project.project.root;
        self.project_trusted = project.trusted;
        let rejected = self.prompt_hooks(&mut context).await?;
        let own = self.session.mcp();
        let settled = async {
            self.env.mcp.settled(false).await;
            if let Some(own) = &own {
                own.settled(false).await;
            }
        };
        or_cancelled(&self.active.cancel, settled).await?;
        Ok(Start {
            context,
            system,
            own,
            rejected,
        })
    }

    /// Runs one event's hooks for this turn (`hooks.rs`), each run recorded.
    async fn fire(
        &self,
        event: HookEvent,
        call: Option<CallRef<'_>>,
        step: i64,
        hooks: Vec<Hook>,
        fields: Value,
    ) -> Result<Vec<(Hook, Verdict)>, Halt> {
        let fire = Fire {
            env: self.env,
            session: self.session,
            turn_id: Some(self.id()),
            step,
            project_root: &self.project_root,
            event,
            call,
        };
        let ran = or_cancelled(&self.active.cancel, fire.run(hooks, fields)).await?;
        Ok(self.stored(ran).await?)
    }

    /// The `UserPromptSubmit` hooks: what they add goes after the prompt (the last of
    /// `context`); the reason one rejected it, if one did. The turn is stored first, so
    /// their runs belong to it.
    async fn prompt_hooks(
        &mut self,
        context: &mut history::Context,
    ) -> Result<Option<String>, Halt> {
        let hooks = self.hooks.matching(HookEvent::UserPromptSubmit, None);
        if hooks.is_empty() {
            return Ok(None);
        }
        self.ensure_started().await?;
        let fields = json!({ "prompt": self.prompt.text });
        let verdicts = self
            .fire(HookEvent::UserPromptSubmit, None, 0, hooks, fields)
            .await?;
        for (hook, verdict) in verdicts {
            match verdict {
                Verdict::Block(why) => {
                    return Ok(Some(format!(
                        "The UserPromptSubmit hook `{}` rejected this prompt, which was not sent to the model: {why}",
                        hook.config.command
                    )));
                }
                Verdict::Continue {
                    context: Some(added),
                } => {
                    if let Some(ChatMessage::User { text, .. }) = context.messages.last_mut() {
                        text.push_str(&project::hooks::prompt_context(
                            &hook.config.command,
                            &added,
                        ));
                    }
                }
                _ => {}
            }
        }
        Ok(None)
    }

    /// The `Stop` hooks, when the model ends its turn: what the model is told if one sends
    /// it back to work.
    async fn stop_hooks(&mut self, step: i64) -> Result<Option<String>, Halt> {
        let hooks = self.hooks.matching(HookEvent::Stop, None);
        let fields = json!({ "stop_hook_active": self.stop_hook_active });
        let verdicts = self
            .fire(HookEvent::Stop, None, step, hooks, fields)
            .await?;
        for (hook, verdict) in verdicts {
            if let Verdict::Block(why) = verdict {
                self.stop_hook_active = true;
                return Ok(Some(project::hooks::stop_feedback(
                    &hook.config.command,
                    &why,
                )));
            }
        }
        Ok(None)
    }

    /// One call's `PreToolUse` hooks, the call (`tool_call.rs`), then its `PostToolUse`
    /// hooks if it ran. A cancellation while a hook runs is the call's result, recorded as
    /// any other (`call_tool` then halts).
    async fn hooked_call(
        &self,
        step: i64,
        call: &ToolCall,
        tools: &ToolSet,
    ) -> Result<ToolOutput, Halt> {
        let at = CallRef {
            id: &call.id,
            name: &call.name,
        };
        let Ok(args) = &call.arguments else {
            return Ok(self.execute(call, tools, None).await.0);
        };
        let cancelled =
            || ToolOutput::error("the turn was cancelled while a hook ran; this call did not run");
        let hooks = self.hooks.matching(HookEvent::PreToolUse, Some(&call.name));
        let fields = json!({ "tool_name": call.name, "tool_input": args, "tool_use_id": call.id });
        let verdicts = match self
            .fire(HookEvent::PreToolUse, Some(at), step, hooks, fields)
            .await
        {
            Err(Halt::Cancelled) => return Ok(cancelled()),
            other => other?,
        };
        let permission = match pre_tool_outcome(&verdicts) {
            Err(refusal) => return Ok(ToolOutput::error(refusal)),
            Ok(permission) => permission,
        };
        let (mut output, ran) = self.execute(call, tools, permission).await;
        if !ran {
            return Ok(output);
        }
        let hooks = self
            .hooks
            .matching(HookEvent::PostToolUse, Some(&call.name));
        let fields = json!({
            "tool_name": call.name,
            "tool_input": args,
            "tool_response": { "output": output.text, "is_error": output.is_error },
            "tool_use_id": call.id,
        });
        let verdicts = match self
            .fire(HookEvent::PostToolUse, Some(at), step, hooks, fields)
            .await
        {
            Err(Halt::Cancelled) => return Ok(output),
            other => other?,
        };
        for (hook, verdict) in verdicts {
            if let Verdict::Block(why) = verdict {
                output
                    .text
                    .push_str(&project::hooks::post_tool_note(&hook.config.command, &why));
            }
        }
        Ok(output)
    }

    /// What the session's project holds (`project/`), read from disk now so a change to
    /// an AGENTS.md or a skill shows from the next turn on.
    async fn project(&self) -> Result<project::Loaded, Halt> {
        let loaded = or_cancelled(&self.active.cancel, self.env.project(self.session)).await?;
        for warning in &loaded.warnings {
            tracing::warn!(session = %self.session.id, "{warning}");
        }
        Ok(loaded)
    }

    /// The tools offered to the next model call, which its calls then run against: the
    /// daemon's, then those of the session's own MCP servers (`own`, as the turn started);
    /// `skill` only when the project has skills.
    fn offered_tools(&self, own: Option<&Mcp>) -> Arc<ToolSet> {
        let mut tools = self.env.tools.snapshot();
        if self.tools_context.skills.is_empty() {
            tools = Arc::new(tools.without(crate::tools::SKILL));
        }
        let tools = match own {
            Some(own) => Arc::new(tools.merged(&own.tools.snapshot())),
            None => tools,
        };
        self.with_subagents(tools)
    }

    /// A model call's tool calls, one after the other, their results added to `messages`;
    /// `task` calls next to each other run at the same time (`subagent.rs`), their
    /// results still added in the order of the calls.
    async fn tool_calls(
        &self,
        step: i64,
        calls: &[ToolCall],
        tools: &ToolSet,
        messages: &mut Vec<ChatMessage>,
    ) -> Result<(), Halt> {
        let allowed = self.env.config.agent.max_tool_calls_per_step;
        let over = |i: usize| {
            // Beyond the bound a call is not run: its result is one short line, so the
            // next request grows by what the model wrote, not by what tools return.
            (i >= allowed).then(|| {
                ToolOutput::error(format!(
                    "not run: this step made {} tool calls and at most {allowed} run per step \
                     (agent.max_tool_calls_per_step); make fewer calls at once",
                    calls.len()
                ))
            })
        };
        let is_task = |i: usize| i < allowed && calls[i].name == crate::tools::TASK;
        let mut i = 0;
        while i < calls.len() {
            let end = if is_task(i) {
                (i..calls.len())
                    .find(|&j| !is_task(j))
                    .unwrap_or(calls.len())
            } else {
                i + 1
            };
            let outputs = futures_util::future::join_all(
                (i..end).map(|j| self.call_tool(step, &calls[j], tools, over(j))),
            )
            .await;
            for (call, output) in calls[i..end].iter().zip(outputs) {
                let output = output?;
                messages.push(ChatMessage::ToolResult {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    output: output.text,
                    is_error: output.is_error,
                });
            }
            i = end;
        }
        Ok(())
    }

    /// Compacts the session (see `compact.rs`); the turn and its prompt are stored first,
    /// so the summary belongs to this turn and the prompt stays verbatim. Returns the
    /// conversation to send from now on; `None` if nothing was old enough to fold.
    async fn compact(&mut self, mode: Mode, window: u64) -> Result<Option<history::Context>, Halt> {
        self.ensure_started().await?;
        let compaction = Compaction {
            env: self.env,
            session: self.session,
            model: &self.model,
            turn_id: Some(self.id()),
            cancel: &self.active.cancel,
            window,
            provider_log: self.origin.unattended.as_ref().map(|u| &*u.provider_log),
        };
        let mut spent = Vec::new();
        let outcome = compaction.run(mode, &mut spent).await;
        // Its calls count as the turn's, whatever became of the compaction.
        for call in spent {
            let gauge = Gauge {
                used: None,
                size: window,
            };
            self.count_usage(call, gauge).await?;
        }
        match outcome {
            Ok(None) => Ok(None),
            Ok(Some(_)) => {
                let rows = self.env.store.context(&self.session.id).await;
                let rows = self.stored(rows).await?;
                Ok(Some(history::conversation(&rows)))
            }
            Err(CompactError::Cancelled) => Err(Halt::Cancelled),
            Err(CompactError::Storage(e)) => {
                tracing::error!(error = %e, session = %self.session.id, turn = %self.id(), "storage failed while compacting");
                Err(self.fail(Failure::Storage(e)).await.into())
            }
            Err(CompactError::Provider(error)) => Err(self.provider_failure(error).await.into()),
        }
    }

    /// One tool call: recorded, run (see `tool_call.rs`) unless `refused` already holds its
    /// result, and its result recorded. Returns the output; a turn cancelled by the time the
    /// call ended halts once its result is recorded.
    async fn call_tool(
        &self,
        step: i64,
        call: &ToolCall,
        tools: &ToolSet,
        refused: Option<ToolOutput>,
    ) -> Result<ToolOutput, Halt> {
        let raw_input = call.raw_input();
        let message = NewMessage {
            data: Some(raw_input.clone()),
            ..tool_message(step, call)
        };
        let update = Update::ToolCall {
            tool_call_id: call.id.clone(),
            name: call.name.clone(),
            raw_input,
        };
        self.record(MessageKind::ToolCall, message, update).await?;
        let output = match refused {
            Some(output) => output,
            None => self.hooked_call(step, call, tools).await?,
        };
        let cancelled = self.active.cancel.is_cancelled();
        let outcome = match (cancelled, output.is_error) {
            (true, _) => "cancelled",
            (false, true) => "error",
            (false, false) => "ok",
        };
        self.env.observer.tool_call(&call.name, outcome);
        let raw_output = Value::String(output.text.clone());
        let message = NewMessage {
            data: Some(raw_output.clone()),
            is_error: output.is_error,
            cancelled,
            ..tool_message(step, call)
        };
        let update = Update::ToolResult {
            tool_call_id: call.id.clone(),
            name: call.name.clone(),
            raw_output,
            is_error: output.is_error,
        };
        self.record(MessageKind::ToolResult, message, update)
            .await?;
        if !cancelled && !output.is_error {
            self.record_plan(step, call).await?;
        }
        if cancelled {
            return Err(Halt::Cancelled);
        }
        Ok(output)
    }

    /// Stores an event's message, then sends the event tagged with its row: stored first,
    /// so a connection joining meanwhile gets it exactly once (see `session/audience.rs`).
    pub(super) async fn record(
        &self,
        kind: MessageKind,
        message: NewMessage,
        update: Update<'_>,
    ) -> Result<(), TurnError> {
        let row = self.store(kind, message).await;
        let row = self.stored(row).await?;
        self.session.send_stored(self.id(), row, update);
        Ok(())
    }

    /// Stores the turn and its prompt, once, when the first model call has started.
    pub(super) async fn ensure_started(&mut self) -> Result<(), TurnError> {
        if !self.started {
            let begun = self
                .env
                .store
                .begin_turn(
                    &self.session.id,
                    self.id(),
                    self.prompt,
                    self.start_checkpoint().await,
                )
                .await;
            self.stored(begun).await?;
            self.started = true;
        }
        Ok(())
    }

    /// Appends one message of this turn; returns its row id.
    pub(super) async fn store(
        &self,
        kind: MessageKind,
        message: NewMessage,
    ) -> Result<i64, StoreError> {
        let message = NewMessage {
            turn_id: Some(self.id().to_owned()),
            ..message
        };
        self.env.store.append(&self.session.id, kind, message).await
    }

    async fn finish(&mut self, stop: StopReason) -> Result<PromptResult, TurnError> {
        if matches!(stop, StopReason::Cancelled | StopReason::Budget) {
            // A turn cancelled before its first model call answered is still recorded:
            // the user did send the prompt. So is a subagent's stopped at once by its
            // parent's spent budget.
            self.ensure_started().await?;
        }
        let recorded = self.record_children_spend().await;
        self.stored(recorded).await?;
        self.end_checkpoint().await;
        let finished = self
            .env
            .store
            .finish_turn(self.id(), stop.as_str(), self.meter.usage(), None)
            .await;
        self.stored(finished).await?;
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
            // `session/prompt` cuts it to fit a frame.
            text_truncated: false,
            usage: self.meter.usage(),
            budget: self.budget.take(),
        })
    }

    /// Ends a failed turn: marks it failed if it was stored and tells the attached clients.
    /// One that failed before anything was stored keeps its prompt and its error (the store
    /// writes an `error` entry), so the session says what became of that prompt; the model
    /// is never sent that turn (`history::conversation`).
    async fn fail(&self, failure: Failure) -> TurnError {
        let mut kept = false;
        if !self.started && !matches!(failure, Failure::Storage(_)) {
            let begun = self
                .env
                .store
                .begin_turn(
                    &self.session.id,
                    self.id(),
                    self.prompt,
                    self.start_checkpoint().await,
                )
                .await;
            let ended = match begun {
                Ok(()) => {
                    let message = failure.to_string();
                    self.env
                        .store
                        .finish_turn(self.id(), "failed", None, Some(&message))
                        .await
                }
                Err(e) => Err(e),
            };
            match ended {
                Ok(()) => kept = true,
                Err(e) => {
                    tracing::error!(error = %e, turn = %self.id(), "could not keep the failed prompt");
                }
            }
        }
        if self.started || kept {
            self.end_checkpoint().await;
        }
        if self.started {
            if let Err(e) = self.record_children_spend().await {
                tracing::error!(error = %e, turn = %self.id(), "could not record what the turn's subagents spent");
            }
            let message = failure.to_string();
            let marked = self
                .env
                .store
                .finish_turn(self.id(), "failed", self.meter.usage(), Some(&message))
                .await;
            if let Err(e) = marked {
                tracing::error!(error = %e, turn = %self.id(), "could not mark the turn failed");
            }
            self.session.clear_turn(self.id());
            self.emit(Update::TurnComplete {
                stop_reason: StopReason::Error,
                error: Some(message),
            });
        }
        TurnError {
            turn_id: self.id().to_owned(),
            stored: self.started || kept,
            failure,
        }
    }

    pub(super) async fn provider_failure(
        &self,
        error: crate::provider::ProviderError,
    ) -> TurnError {
        let model = self.model.clone();
        self.fail(Failure::Provider { error, model }).await
    }

    /// Passes a store's answer through; a storage error stops the turn.
    pub(super) async fn stored<T>(&self, result: Result<T, StoreError>) -> Result<T, TurnError> {
        match result {
            Ok(value) => Ok(value),
            Err(e) => {
                tracing::error!(error = %e, session = %self.session.id, turn = %self.id(), "storage failed during a turn");
                Err(self.fail(Failure::Storage(e)).await)
            }
        }
    }
}

/// The columns a tool call and its result share.
fn tool_message(step: i64, call: &ToolCall) -> NewMessage {
    NewMessage {
        step,
        tool_call_id: Some(call.id.clone()),
        tool_name: Some(call.name.clone()),
        ..NewMessage::default()
    }
}

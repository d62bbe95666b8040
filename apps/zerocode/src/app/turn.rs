//! A turn on screen: a prompt sent (with its `@` attachments), or a running turn followed,
//! streamed with its status line, approvals and questions answered, Ctrl-C cancelling it.

use super::typing::Typed;
use super::{App, Step, Stop, Typing};
use crate::approval;
use crate::images;
use crate::mentions;
use crate::render;
use crate::status::{self, Phase};
use crate::subagents::GUTTER;
use crate::term::{self, dim, red};
use std::collections::VecDeque;
use zeroclaw_client::{Approval, Decision, Subagent, TaggedEvent, Turn, TurnEvent, Update};

impl App {
    /// Sends a line to the agent, with the files and images its `@path` mentions name (and
    /// the images pasted as paths), and streams the turn until it ends. An image that
    /// cannot be attached stops it: the prompt is not sent.
    pub(super) async fn prompt(&mut self, text: &str) -> Step {
        let expanded = mentions::expand(text, std::path::Path::new(&self.session.cwd));
        if !expanded.errors.is_empty() {
            for error in &expanded.errors {
                self.line(&red(error));
            }
            self.line(&dim("the prompt was not sent (Up brings it back to edit)"));
            return Ok(());
        }
        for refused in &expanded.refused {
            self.line(&dim(&format!("{}: {}", refused.mention, refused.why)));
        }
        if let Some(summary) = mentions::summary(&expanded.attached) {
            self.line(&dim(&summary));
        }
        for image in &expanded.images {
            self.line(&dim(&images::echo(image)));
        }
        if !self.session.titled {
            self.title_from(text).await?;
        }
        let content = expanded.images.into_iter().map(|i| i.block).collect();
        let turn = self
            .client
            .turn_with(&self.session.id, &expanded.prompt, content);
        self.stream(turn, false).await
    }

    /// Titles an untitled session after its first prompt (as typed, before `@` files are
    /// attached), the way `zeroclaw prompt` titles the sessions it starts.
    async fn title_from(&mut self, text: &str) -> Step {
        let title = zeroclaw_client::title_from_prompt(text);
        if title.is_empty() {
            return Ok(());
        }
        match self
            .client
            .session_rename(&self.session.id, Some(&title))
            .await
        {
            Ok(()) => {
                self.session.titled = true;
                Ok(())
            }
            Err(e) => self.failed("cannot title the session", &e),
        }
    }

    /// Streams a turn that was already running when the session was loaded.
    pub(super) async fn follow_running(&mut self) -> Step {
        let Some(turn) = self.running.take() else {
            return Ok(());
        };
        self.line(&dim(
            "a turn is running in this session; following it (Ctrl-C cancels it)",
        ));
        self.stream(turn, true).await
    }

    /// Streams a turn with the live status line below it, erased when the turn is over.
    async fn stream(&mut self, turn: Turn, following: bool) -> Step {
        self.screen().status_start();
        let step = self.stream_events(turn, following).await;
        self.screen().status_stop();
        step
    }

    /// The turn loop: events as they arrive, approvals, questions, Ctrl-C, and the status
    /// line's ticks. A turn of ours ends with its answer; a `following` one at its
    /// `turn_complete`.
    async fn stream_events(&mut self, mut turn: Turn, following: bool) -> Step {
        let _quiet = term::QuietInput::new();
        self.interrupts.clear();
        let mut typing = Typing::start();
        let mut cancelling = false;
        let mut ticker = tokio::time::interval(status::FRAME);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut held = VecDeque::new();
        loop {
            // Events that arrived while an approval question waited, in order.
            while let Some(event) = held.pop_front() {
                if self
                    .event(
                        &mut turn,
                        &mut typing,
                        &mut held,
                        event,
                        following,
                        &mut cancelling,
                    )
                    .await?
                {
                    return Ok(());
                }
            }
            let interrupted = tokio::select! {
                biased;
                () = self.interrupts.recv() => true,
                Some(key) = typing.next() => {
                    matches!(self.typed(&mut typing, key).await?, Typed::Interrupt)
                }
                Some(event) = turn.next_tagged() => {
                    if self.event(&mut turn, &mut typing, &mut held, event, following, &mut cancelling).await? {
                        return Ok(());
                    }
                    false
                }
                Some((request, answer)) = self.questions.recv() => {
                    // Everything the daemon sent before the question is queued: show it first.
                    while let Some(event) = turn.try_next_tagged() {
                        if self.event(&mut turn, &mut typing, &mut held, event, following, &mut cancelling).await? {
                            return Ok(());
                        }
                    }
                    // The form reads lines: no status line, and no key reader, meanwhile.
                    typing.pause();
                    self.screen().status_suspend(true);
                    let response = tokio::select! {
                        response = self.forms.ask(request) => response,
                        () = self.client.closed() => return Err(Stop::DaemonGone),
                    };
                    self.screen().status_suspend(false);
                    typing.resume();
                    let _ = answer.send(response);
                    false
                }
                () = self.client.closed() => return Err(Stop::DaemonGone),
                _ = ticker.tick() => {
                    self.screen().status_tick();
                    false
                }
            };
            if interrupted {
                if cancelling {
                    self.line(&dim(
                        "quitting; the turn may still be winding down in the daemon",
                    ));
                    return Err(Stop::Interrupted);
                }
                self.cancel(&turn, &mut cancelling).await?;
            }
        }
    }

    async fn cancel(&mut self, turn: &Turn, cancelling: &mut bool) -> Step {
        *cancelling = true;
        self.screen().status_phase(Phase::Cancelling);
        self.line(&dim("cancelling… (Ctrl-C again to quit)"));
        match turn.cancel().await {
            Ok(_) => Ok(()),
            Err(e) => self.failed("cancel failed", &e),
        }
    }

    /// Shows one event of the turn (asking about approval requests). `true` when the
    /// turn is over.
    async fn event(
        &mut self,
        turn: &mut Turn,
        typing: &mut Typing,
        held: &mut VecDeque<TaggedEvent>,
        event: TaggedEvent,
        following: bool,
        cancelling: &mut bool,
    ) -> Result<bool, Stop> {
        let TaggedEvent { event, subagent } = event;
        match event {
            // A subagent's event: nested under its `task` call, collapsed (`subagents.rs`).
            TurnEvent::Update(update) => match &subagent {
                Some(subagent) => self.screen().subagent(subagent, &update),
                None => return Ok(self.update(update, following)),
            },
            TurnEvent::Approval(request) => {
                // The question is read on the status line's row: no status meanwhile.
                self.screen().status_phase(Phase::WaitingForApproval);
                self.screen().status_suspend(true);
                // Answered elsewhere (another client, a timeout, a cancellation): the
                // question goes at once (`approval_resolved`).
                let decision = tokio::select! {
                    decision = self.ask_approval(&request, typing, subagent.as_ref()) => decision,
                    (by, decision) = turn.resolved_tagged(&request.request_id, held) => {
                        self.screen().end_line();
                        self.line(&dim(&format!("\n{}", render::resolved_elsewhere(decision, by))));
                        self.screen().status_suspend(false);
                        self.screen().status_phase(Phase::Running(request.name.clone()));
                        return Ok(false);
                    }
                    () = self.client.closed() => return Err(Stop::DaemonGone),
                };
                self.screen().status_suspend(false);
                self.screen()
                    .status_phase(Phase::Running(request.name.clone()));
                // `None` is Ctrl-C at the question: reject the call and cancel the turn.
                if let Err(e) = request.answer(decision.unwrap_or(Decision::Reject)).await {
                    self.failed("could not answer the approval", &e)?;
                }
                if decision.is_none() && !*cancelling {
                    self.cancel(turn, cancelling).await?;
                }
            }
            TurnEvent::Lagged(n) => {
                self.line(&dim(&format!(
                    "… {n} events were missed (the terminal fell behind)"
                )));
            }
            TurnEvent::Done(result) => {
                self.screen().end_line();
                let elapsed = self.screen().status_elapsed();
                match result {
                    Ok(result) => {
                        let cost = self.screen().status_turn_cost();
                        let line = render::status_line(
                            result.stop_reason,
                            result.usage,
                            cost,
                            elapsed,
                            result.budget.as_ref(),
                        );
                        self.line(&dim(&line));
                    }
                    Err(e) => self.failed("the turn failed", &e)?,
                }
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Shows one update. `true` when it ends a followed turn.
    fn update(&mut self, update: Update, following: bool) -> bool {
        match update {
            Update::AgentMessageChunk { text } => self.screen().answer(&text),
            Update::AgentThoughtChunk { text } => self.screen().thought(&text),
            Update::ToolCall {
                tool_call_id,
                name,
                raw_input,
            } => self.screen().tool_call(&tool_call_id, &name, &raw_input),
            Update::ToolResult {
                tool_call_id,
                name,
                raw_output,
                is_error,
            } => self
                .screen()
                .tool_result(&tool_call_id, &name, &raw_output, is_error),
            Update::ContextCompacted {
                messages_folded, ..
            } => {
                self.screen().end_line();
                self.line(&dim(&render::compacted(messages_folded)));
            }
            Update::UserMessage { text } => {
                self.screen().end_line();
                self.line(&dim(&render::steered(&text)));
            }
            Update::HookResult(hook) => {
                self.screen().end_line();
                self.line(&dim(&render::hook_line(&hook)));
            }
            Update::Plan { entries } => {
                self.screen().end_line();
                for line in crate::plan::checklist(&entries) {
                    self.line(&line);
                }
            }
            // Unless it is this client's own Shift-Tab, already shown.
            Update::ModeChanged { mode, .. } if mode != self.session.mode => {
                self.screen().end_line();
                self.mode_is(mode);
                self.line(&dim(&super::modes::changed_line(mode)));
            }
            Update::TurnComplete { stop_reason, error } if following => {
                self.screen().end_line();
                if let Some(error) = error {
                    self.line(&red(&format!("the turn failed: {error}")));
                }
                let elapsed = self.screen().status_elapsed();
                let cost = self.screen().status_turn_cost();
                self.line(&dim(&render::status_line(
                    stop_reason,
                    None,
                    cost,
                    elapsed,
                    None,
                )));
                return true;
            }
            // The status line's gauge and cost, and the turn's cost for its last line.
            Update::UsageUpdate(report) => self.screen().usage(&report),
            // Said while the turn waits: the model call is tried again, or elsewhere.
            Update::ProviderRetry {
                attempt,
                delay_ms,
                reason,
                ..
            } => {
                self.screen().end_line();
                self.line(&dim(&render::retry_line(attempt, delay_ms, &reason)));
            }
            Update::ProviderFallback { from, to, reason } => {
                self.screen().end_line();
                self.line(&dim(&render::fallback_line(&from, &to, &reason)));
            }
            _ => {}
        }
        false
    }

    /// The preview, then `Allow bash `ls`? [y]es / [n]o / [a]lways` answered with one key
    /// (`approval.rs`): `None` for Ctrl-C.
    /// A subagent's question (`subagent`) is nested under its `task` call: a line saying
    /// whose it is, then the rest behind the `│` gutter; it is answered the same way (on
    /// this session: the daemon passes the answer to the child).
    async fn ask_approval(
        &self,
        request: &Approval,
        typing: &mut Typing,
        subagent: Option<&Subagent>,
    ) -> Option<Decision> {
        self.screen().end_line();
        let gutter = match subagent {
            Some(subagent) => {
                let asks = self.screen().subagent_asks(subagent, &request.name);
                self.line(&format!("{GUTTER}{}", term::bold(&asks)));
                GUTTER
            }
            None => "",
        };
        for line in request
            .preview
            .iter()
            .flat_map(|p| approval::preview_lines(p))
        {
            self.line(&format!("{gutter}{line}"));
        }
        if let Some(escape) = &request.escape {
            for line in approval::escape_lines(&escape.justification) {
                self.line(&format!("{gutter}{line}"));
            }
            let question = approval::escape_question(&request.name, &request.raw_input);
            let question = format!("{gutter}{question}");
            return approval::decide(&self.input, &question, false, Some(typing)).await;
        }
        let question = approval::question(&request.name, &request.raw_input);
        let question = format!("{gutter}{question}");
        let always = request.options.is_empty() || request.options.contains(&Decision::AllowAlways);
        approval::decide(&self.input, &question, always, Some(typing)).await
    }
}

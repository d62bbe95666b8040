//! One turn of the agent as a client lives it: its events in order, the approval requests
//! it waits on, and how it ended.
//!
//! The order this relies on is the protocol's: the daemon sends every `session/update` of
//! a turn before that turn's `turn_complete`, and the `turn_complete` before the
//! `session/prompt` answer, all on the one connection, which delivers them in that order.
//! So a [`Turn`] subscribes to the session before it sends the prompt (no event can slip
//! past), and when the answer arrives every event of the turn is already queued: it yields
//! those first and [`TurnEvent::Done`] last.
//!
//! Questions from the agent (`ask_user`) are the daemon's requests to the connection, not
//! events of a turn: they go to the connection's [`crate::ElicitationHandler`].

use crate::{ApprovalPreview, CallResult, Decision, PromptResult, SessionUpdate, Update};
use serde_json::Value;
use std::collections::VecDeque;
use tokio::sync::broadcast::{
    self,
    error::{RecvError, TryRecvError},
};
use tokio::task::{JoinError, JoinHandle};
use zeroclaw_protocol::methods as m;
use zeroclaw_rpc::{CallError, PeerHandle};

/// What a turn has to show or ask.
#[derive(Debug)]
pub enum TurnEvent {
    /// Anything the turn reports except approval requests, `turn_complete` included.
    Update(Update),
    /// A tool call waits for the client's decision.
    Approval(Approval),
    /// This many events were lost because the caller fell [`crate::EVENT_BUFFER`] events
    /// behind; the turn goes on.
    Lagged(u64),
    /// The `session/prompt` answer: the last event of a prompted turn. Also how any turn
    /// ends when the connection closes (`Err(CallError::Closed)`).
    Done(CallResult<PromptResult>),
}

/// The subagent an event comes from: a `task` call of the turn, running a child session
/// (docs/protocol.md §13a). Only [`Turn::next_tagged`] says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subagent {
    /// The parent's `task` call that runs it.
    pub parent_tool_call_id: String,
    /// The child session, when the daemon said it.
    pub child_session_id: Option<String>,
}

/// An event of the turn and, for a subagent's, which one ([`Turn::next_tagged`]).
#[derive(Debug)]
pub struct TaggedEvent {
    pub event: TurnEvent,
    /// `None` for the turn's own events.
    pub subagent: Option<Subagent>,
}

/// A tool call waiting for `session/approve`. Until it is answered the turn waits (up to
/// the daemon's approval timeout, or until the turn is cancelled).
#[derive(Debug)]
#[must_use = "the tool call waits until the request is answered"]
pub struct Approval {
    pub request_id: String,
    pub tool_call_id: String,
    pub name: String,
    pub raw_input: Value,
    /// The decisions the daemon offers.
    pub options: Vec<Decision>,
    /// What the call would do (a diff, a command and its cwd), when the daemon sent it.
    pub preview: Option<Box<ApprovalPreview>>,
    /// Set when the call asks to run outside the sandbox: why (then only `allow_once` and
    /// `reject` are offered).
    pub escape: Option<zeroclaw_protocol::SandboxEscape>,
    session_id: String,
    handle: PeerHandle,
}

impl Approval {
    /// Sends the decision with `session/approve`.
    pub async fn answer(self, decision: Decision) -> CallResult<()> {
        approve(&self.handle, &self.session_id, &self.request_id, decision).await
    }
}

/// A running turn. [`Turn::next`] yields its events; [`Turn::cancel`] asks the daemon to
/// stop it. Dropping a `Turn` stops waiting for it, not the turn itself.
#[derive(Debug)]
pub struct Turn {
    session_id: String,
    handle: PeerHandle,
    events: broadcast::Receiver<SessionUpdate>,
    /// Whether `events` can still deliver (its sender lives as long as the connection).
    subscribed: bool,
    /// Updates taken from `events` before the turn was followed; yielded first.
    queued: VecDeque<SessionUpdate>,
    end: End,
}

/// How the turn ends, and how far it got.
#[derive(Debug)]
enum End {
    /// Our `session/prompt`, on a task of its own so the turn runs whether or not
    /// [`Turn::next`] is being awaited; aborted if the `Turn` is dropped.
    Prompt(JoinHandle<CallResult<PromptResult>>),
    /// A turn another client started: it ends at its `turn_complete`.
    Follow,
    /// The outcome is known; the events queued before it are still to be yielded.
    Known(CallResult<PromptResult>),
    /// Everything has been yielded.
    Over,
}

/// What [`Turn::next`] woke up to.
enum Woke {
    /// Boxed: an event is much larger than an outcome.
    Event(Box<Result<SessionUpdate, RecvError>>),
    Outcome(CallResult<PromptResult>),
}

impl Turn {
    /// Subscribes to the session, then sends the prompt.
    pub(crate) fn prompt(
        handle: PeerHandle,
        events: broadcast::Receiver<SessionUpdate>,
        session_id: &str,
        prompt: &str,
        content: Vec<m::ContentBlock>,
    ) -> Self {
        let call = {
            let (handle, session_id, prompt) =
                (handle.clone(), session_id.to_owned(), prompt.to_owned());
            tokio::spawn(async move { prompt_call(&handle, &session_id, &prompt, content).await })
        };
        Self::new(handle, events, session_id, Vec::new(), End::Prompt(call))
    }

    pub(crate) fn follow(
        handle: PeerHandle,
        events: broadcast::Receiver<SessionUpdate>,
        session_id: &str,
        queued: Vec<SessionUpdate>,
    ) -> Self {
        Self::new(handle, events, session_id, queued, End::Follow)
    }

    fn new(
        handle: PeerHandle,
        events: broadcast::Receiver<SessionUpdate>,
        session_id: &str,
        queued: Vec<SessionUpdate>,
        end: End,
    ) -> Self {
        Self {
            session_id: session_id.to_owned(),
            handle,
            events,
            subscribed: true,
            queued: queued.into(),
            end,
        }
    }

    /// The next event, waiting for it; `None` once the turn is over: after
    /// [`TurnEvent::Done`], or for a followed turn after its `turn_complete`.
    /// Cancel-safe, so it can race Ctrl-C or other input in `tokio::select!`.
    ///
    /// A subagent's events are yielded as the turn's own, but its text chunks, which are
    /// not the turn's answer, are left out; [`Turn::next_tagged`] tells them apart.
    pub async fn next(&mut self) -> Option<TurnEvent> {
        loop {
            match self.next_tagged().await? {
                tagged if tagged.subagent.is_some() && is_text(&tagged.event) => {}
                tagged => return Some(tagged.event),
            }
        }
    }

    /// [`Turn::next`] with each event's [`Subagent`]: a subagent's events all come (its
    /// text chunks too, which are not the turn's answer: the child's answer is its `task`
    /// call's result), tagged with the call that runs it, for a client that nests them.
    /// Cancel-safe.
    pub async fn next_tagged(&mut self) -> Option<TaggedEvent> {
        loop {
            if let Some(event) = self.try_next_tagged() {
                return Some(event);
            }
            let events = &mut self.events;
            let subscribed = self.subscribed;
            // Events first: when an event and the outcome are both ready, the event came first.
            let woke = match &mut self.end {
                End::Over => return None,
                // Unreachable: `try_next` yields a known outcome once nothing precedes it.
                End::Known(_) => continue,
                End::Prompt(call) => tokio::select! {
                    biased;
                    event = events.recv(), if subscribed => Woke::Event(Box::new(event)),
                    joined = call => Woke::Outcome(joined_outcome(joined)),
                },
                End::Follow => tokio::select! {
                    biased;
                    event = events.recv(), if subscribed => Woke::Event(Box::new(event)),
                    () = self.handle.closed() => Woke::Outcome(Err(CallError::Closed)),
                },
            };
            match woke {
                Woke::Outcome(outcome) => self.end = End::Known(outcome),
                Woke::Event(event) => match *event {
                    Ok(update) => return Some(self.event(update)),
                    Err(RecvError::Lagged(n)) => return Some(untagged(TurnEvent::Lagged(n))),
                    Err(RecvError::Closed) => self.subscribed = false,
                },
            }
        }
    }

    /// An event already received, if there is one; never waits. Use it to show everything
    /// the daemon sent before something that arrived another way (an `ask_user` question).
    pub fn try_next(&mut self) -> Option<TurnEvent> {
        loop {
            match self.try_next_tagged()? {
                tagged if tagged.subagent.is_some() && is_text(&tagged.event) => {}
                tagged => return Some(tagged.event),
            }
        }
    }

    /// [`Turn::try_next`] with each event's [`Subagent`], as [`Turn::next_tagged`].
    pub fn try_next_tagged(&mut self) -> Option<TaggedEvent> {
        if matches!(self.end, End::Over) {
            return None;
        }
        if let Some(update) = self.queued.pop_front() {
            return Some(self.event(update));
        }
        while self.subscribed {
            match self.events.try_recv() {
                Ok(update) => return Some(self.event(update)),
                Err(TryRecvError::Lagged(n)) => return Some(untagged(TurnEvent::Lagged(n))),
                Err(TryRecvError::Closed) => self.subscribed = false,
                Err(TryRecvError::Empty) => break,
            }
        }
        match std::mem::replace(&mut self.end, End::Over) {
            End::Known(outcome) => Some(untagged(TurnEvent::Done(outcome))),
            unknown => {
                self.end = unknown;
                None
            }
        }
    }

    /// Asks the daemon to stop the turn (`session/cancel`); it then ends with stop reason
    /// `cancelled`. `false` when nothing was running (also when the prompt, which its own
    /// task sends, has not reached the daemon yet).
    pub async fn cancel(&self) -> CallResult<bool> {
        cancel(&self.handle, &self.session_id).await
    }

    /// Waits until approval request `request_id` is settled (`approval_resolved`: answered
    /// by any client, timed out, or dropped by a cancellation); who settled it and how. The
    /// turn's other events read meanwhile go to `held`, in order, for the caller to show
    /// next. Waits forever once the turn has no more events (its end is then in `held`).
    /// Race it against the question on screen, and withdraw the question when it wins.
    pub async fn resolved(
        &mut self,
        request_id: &str,
        held: &mut VecDeque<TurnEvent>,
    ) -> (zeroclaw_protocol::events::ResolvedBy, Decision) {
        loop {
            match self.next().await {
                Some(TurnEvent::Update(Update::ApprovalResolved {
                    request_id: settled,
                    decision,
                    by,
                })) if settled == request_id => return (by, decision),
                Some(other) => held.push_back(other),
                None => std::future::pending::<()>().await,
            }
        }
    }

    /// [`Turn::resolved`] for a caller of [`Turn::next_tagged`]: the events read meanwhile
    /// go to `held` tagged.
    pub async fn resolved_tagged(
        &mut self,
        request_id: &str,
        held: &mut VecDeque<TaggedEvent>,
    ) -> (zeroclaw_protocol::events::ResolvedBy, Decision) {
        loop {
            match self.next_tagged().await {
                Some(TaggedEvent {
                    event:
                        TurnEvent::Update(Update::ApprovalResolved {
                            request_id: settled,
                            decision,
                            by,
                        }),
                    ..
                }) if settled == request_id => return (by, decision),
                Some(other) => held.push_back(other),
                None => std::future::pending::<()>().await,
            }
        }
    }

    fn event(&mut self, event: SessionUpdate) -> TaggedEvent {
        let subagent = event.parent_tool_call_id.map(|id| Subagent {
            parent_tool_call_id: id.into_owned(),
            child_session_id: event.child_session_id.map(std::borrow::Cow::into_owned),
        });
        let event = match event.update {
            Update::ApprovalRequest {
                request_id,
                tool_call_id,
                name,
                raw_input,
                options,
                preview,
                escape,
                ..
            } => TurnEvent::Approval(Approval {
                request_id,
                tool_call_id,
                name,
                raw_input,
                options,
                preview,
                escape,
                session_id: self.session_id.clone(),
                handle: self.handle.clone(),
            }),
            update => {
                // A subagent's own end is its call's result (the daemon does not forward
                // it, and would not end the followed turn if it did).
                if matches!(update, Update::TurnComplete { .. })
                    && subagent.is_none()
                    && matches!(self.end, End::Follow)
                {
                    self.end = End::Over;
                }
                TurnEvent::Update(update)
            }
        };
        TaggedEvent { event, subagent }
    }
}

/// The turn's own event.
fn untagged(event: TurnEvent) -> TaggedEvent {
    TaggedEvent {
        event,
        subagent: None,
    }
}

/// Streamed text: of a subagent (an event tagged `parentToolCallId`, docs/protocol.md
/// §13a), not the turn's answer, so [`Turn::next`] leaves it out. The subagent's answer
/// arrives as its `task` call's result; its calls and approvals are in the stream.
fn is_text(event: &TurnEvent) -> bool {
    matches!(
        event,
        TurnEvent::Update(Update::AgentMessageChunk { .. } | Update::AgentThoughtChunk { .. })
    )
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let End::Prompt(call) = &self.end {
            call.abort();
        }
    }
}

/// The prompt task's outcome. It is aborted only when its `Turn` is dropped, so nobody
/// sees that case; a panic in it is passed on.
fn joined_outcome(joined: Result<CallResult<PromptResult>, JoinError>) -> CallResult<PromptResult> {
    match joined {
        Ok(outcome) => outcome,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => Err(CallError::Closed),
    }
}

/// `session/prompt` answers when the turn ends, which may take as long as the agent works.
const PROMPT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

pub(crate) async fn prompt_call(
    handle: &PeerHandle,
    session_id: &str,
    prompt: &str,
    content: Vec<m::ContentBlock>,
) -> CallResult<PromptResult> {
    let params = m::PromptParams {
        session_id: session_id.to_owned(),
        prompt: prompt.to_owned(),
        content,
    };
    crate::request::<m::SessionPrompt>(handle, &params, PROMPT_TIMEOUT).await
}

pub(crate) async fn cancel(handle: &PeerHandle, session_id: &str) -> CallResult<bool> {
    let params = crate::session_id_params(session_id);
    let result = crate::request::<m::SessionCancel>(handle, &params, crate::DEFAULT_CALL_TIMEOUT);
    Ok(result.await?.cancelled)
}

pub(crate) async fn approve(
    handle: &PeerHandle,
    session_id: &str,
    request_id: &str,
    decision: Decision,
) -> CallResult<()> {
    let params = m::ApproveParams {
        session_id: session_id.to_owned(),
        request_id: request_id.to_owned(),
        decision,
    };
    crate::request::<m::SessionApprove>(handle, &params, crate::DEFAULT_CALL_TIMEOUT)
        .await
        .map(drop)
}

//! Starting a turn: the session's slot and a running-turn permit, then the turn as its own
//! task, and the guard that gives both back however the task ends.

use super::{Env, Origin, TurnError};
use crate::prompt::Prompt;
use crate::session::{ActiveTurn, Session};
use crate::state::AgentState;
use std::sync::Arc;
use tokio::sync::oneshot;
use zeroclaw_protocol::PromptResult;

/// Why a turn could not start.
#[derive(Debug)]
pub enum StartError {
    /// The session is running the turn `running`.
    Busy { session_id: String, running: String },
    /// `agent.max_running_turns` turns are running.
    LimitReached { limit: usize },
}

/// Yields the turn's outcome once it has ended.
pub type TurnAnswer = oneshot::Receiver<Result<PromptResult, TurnError>>;

/// Clears the session's turn however the turn task ends, panics included, so a session
/// can never stay busy forever.
struct TurnSlot {
    agent: Arc<AgentState>,
    session: Arc<Session>,
    turn: Arc<ActiveTurn>,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl Drop for TurnSlot {
    fn drop(&mut self) {
        self.session.clear_turn(&self.turn.id);
        self.turn.finished.cancel();
        self.agent.sessions.evict_if_idle(&self.session);
        self.agent.turn_count.turn_ended();
    }
}

/// Starts a turn of `prompt` in `session`, unless it is busy or the agent runs its limit
/// of turns. It runs without awaiting anything, so a caller on a connection's loop settles
/// it in frame order.
pub fn start(
    agent: &Arc<AgentState>,
    session: Arc<Session>,
    origin: Origin,
    prompt: Prompt,
) -> Result<TurnAnswer, StartError> {
    start_as(
        agent,
        session,
        origin,
        prompt,
        uuid::Uuid::new_v4().to_string(),
    )
}

/// [`start`] with the turn's id chosen by the caller (an unattended run records it before
/// the turn starts).
pub fn start_as(
    agent: &Arc<AgentState>,
    session: Arc<Session>,
    origin: Origin,
    prompt: Prompt,
    turn_id: String,
) -> Result<TurnAnswer, StartError> {
    let busy = |running: String| StartError::Busy {
        session_id: session.id.clone(),
        running,
    };
    // A busy session is busy whatever the turn limit: say so before looking for a slot.
    if let Some(running) = session.active_turn() {
        return Err(busy(running.id.clone()));
    }
    let Ok(permit) = agent.turn_slots.clone().try_acquire_owned() else {
        return Err(StartError::LimitReached {
            limit: agent.config.agent.max_running_turns,
        });
    };
    let turn = ActiveTurn::new(turn_id);
    if let Err(running) = session.try_start(turn.clone()) {
        return Err(busy(running));
    }
    let (tx, rx) = oneshot::channel();
    agent.turn_count.turn_started();
    let slot = TurnSlot {
        agent: agent.clone(),
        session,
        turn,
        _permit: permit,
    };
    tracing::info!(session = %slot.session.id, turn = %slot.turn.id, origin = %origin.label(), "turn started");
    agent.turns.spawn(async move {
        let env = Env::of(&slot.agent);
        let outcome = super::step::run(env, &slot.session, &slot.turn, &origin, &prompt).await;
        match &outcome {
            Ok(result) => {
                tracing::info!(turn = %slot.turn.id, stop = result.stop_reason.as_str(), "turn ended");
            }
            Err(e) => tracing::warn!(turn = %slot.turn.id, error = %e, "turn failed"),
        }
        drop(slot);
        let _ = tx.send(outcome);
    });
    Ok(rx)
}

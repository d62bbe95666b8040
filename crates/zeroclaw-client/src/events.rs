//! The per-session fan-out of `session/update` events.

use crate::types::SessionUpdate;
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::broadcast;

/// Events buffered per subscriber. Overflow rule: a subscriber that falls this far behind
/// gets `RecvError::Lagged(n)` from its receiver (tokio's broadcast semantics) and the
/// oldest events are lost to it; the connection itself never waits.
pub const EVENT_BUFFER: usize = 8192;

/// Routes updates to the subscribers of their session.
#[derive(Debug, Default)]
pub(crate) struct Router {
    sessions: Mutex<HashMap<String, broadcast::Sender<SessionUpdate>>>,
}

impl Router {
    pub(crate) fn subscribe(&self, session_id: &str) -> broadcast::Receiver<SessionUpdate> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions
            .entry(session_id.to_owned())
            .or_insert_with(|| broadcast::channel(EVENT_BUFFER).0)
            .subscribe()
    }

    pub(crate) fn route(&self, update: SessionUpdate) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tx) = sessions.get(update.session_id.as_ref()) {
            let id = update.session_id.to_string();
            if tx.send(update).is_err() {
                // Every receiver is gone: stop keeping a channel for the session.
                sessions.remove(&id);
            }
        }
    }
}

//! A session's permission mode in memory, and the one way it changes: stored first, then
//! set here, then announced (`mode_changed`) to every attached connection.
//!
//! `session/set_mode` and an approved `exit_plan` both change it through
//! [`Session::change_mode`]; its lock keeps two changes at once from leaving the store and
//! the memory disagreeing, and their events in the order they were made.

use super::{Session, lock};
use crate::store::{Store, StoreError};
use zeroclaw_protocol::Update;
use zeroclaw_protocol::methods::PermissionMode;

impl Session {
    /// The mode now: what the next model call is offered and the next tool call decided by.
    pub fn mode(&self) -> PermissionMode {
        *lock(&self.mode)
    }

    /// Stores `mode`, sets it, and sends `mode_changed` to every attached connection (with
    /// `turn_id` when a turn made the change). Returns the mode it replaced; `None` if the
    /// session is no longer in the store (deleted meanwhile). A change to the mode it
    /// already has is stored and announced all the same: the caller asked for it.
    pub async fn change_mode(
        &self,
        store: &Store,
        mode: PermissionMode,
        turn_id: Option<&str>,
    ) -> Result<Option<PermissionMode>, StoreError> {
        let _one_at_a_time = self.mode_change.lock().await;
        if !store.set_session_mode(&self.id, mode).await? {
            return Ok(None);
        }
        let previous = std::mem::replace(&mut *lock(&self.mode), mode);
        tracing::info!(session = %self.id, %mode, %previous, "session mode set");
        let update = Update::ModeChanged { mode, previous };
        match turn_id {
            Some(turn_id) => self.broadcast(turn_id, update),
            None => self.broadcast_outside_turns(update),
        }
        Ok(Some(previous))
    }
}

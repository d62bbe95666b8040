//! The turn's checkpoints (issue 31): the session's cwd snapshotted before the turn's
//! first model call (`before_turn`), stored with the turn and its prompt, and again when the
//! turn ends (`finish`, `fail`), before the session is released, so a rewind that follows
//! `turn_complete` finds the end recorded. What the turn changed is the difference between
//! the two, stored with the checkpoint so a listing reads it from the store.
//!
//! A checkpoint never fails a turn: a snapshot that cannot be taken (no git, the cwd gone,
//! too many files) is logged and recorded with its reason. With `agent.checkpoints = false`
//! no checkpoint is taken or stored.

use super::step::Turn;

impl Turn<'_> {
    /// Snapshots the cwd before the turn (its record waits for `begin_turn`).
    pub(super) async fn take_checkpoint(&mut self) {
        let checkpoints = self.env.checkpoints;
        if !checkpoints.enabled {
            return;
        }
        let id = uuid::Uuid::new_v4().to_string();
        let taken = checkpoints
            .take(&self.session.cwd, &self.session.id, id)
            .await;
        self.checkpoint = Some(taken);
    }

    /// Snapshots the cwd after the turn and records what it changed. Only for a turn that
    /// was stored (its checkpoint row exists).
    pub(super) async fn end_checkpoint(&self) {
        let Some(checkpoint) = &self.checkpoint else {
            return;
        };
        let ended = self
            .env
            .checkpoints
            .end(
                &self.session.cwd,
                &self.session.id,
                &checkpoint.id,
                checkpoint.snapshot.clone(),
            )
            .await;
        let stored = self
            .env
            .store
            .end_checkpoint(&checkpoint.id, ended.snapshot, ended.changed, ended.error)
            .await;
        if let Err(e) = stored {
            tracing::warn!(error = %e, turn = %self.id(), "could not record the end of the turn's checkpoint");
        }
    }
}

//! The turn's checkpoints (issue 31): the session's cwd snapshotted as the turn starts
//! (`before_turn`), stored with the turn and its prompt, and again when the
//! turn ends (`finish`, `fail`), before the session is released, so a rewind that follows
//! `turn_complete` finds the end recorded. What the turn changed is the difference between
//! the two, stored with the checkpoint so a listing reads it from the store.
//!
//! A checkpoint never fails a turn: a snapshot that cannot be taken (no git, the cwd gone,
//! too many files) is logged and recorded with its reason. With `agent.checkpoints = false`
//! no checkpoint is taken or stored.

//!
//! The start snapshot runs on a task of its own, beside the turn's first model call: the
//! request goes out while the cwd is walked (a real model's first token takes longer than
//! the snapshot), and the turn waits for it where the turn is stored (`ensure_started`),
//! which comes before anything of the turn can change the cwd: every hook, tool call and
//! compaction stores the turn first.

use super::start_snapshot::StartCheckpoint;
use super::step::Turn;
use crate::store::NewCheckpoint;

impl Turn<'_> {
    /// Starts the snapshot of the cwd before the turn (its record waits for `begin_turn`).
    pub(super) fn take_checkpoint(&mut self) {
        let checkpoints = self.env.checkpoints.clone();
        if !checkpoints.enabled {
            return;
        }
        let id = uuid::Uuid::new_v4().to_string();
        let (cwd, session) = (self.session.cwd.clone(), self.session.id.clone());
        let task = tokio::spawn(async move { checkpoints.take(&cwd, &session, id).await });
        *self.checkpoint.get_mut() = StartCheckpoint::Taking(task);
    }

    /// The start checkpoint, once taken (waits for its task the first time).
    pub(super) async fn start_checkpoint(&self) -> Option<NewCheckpoint> {
        self.checkpoint.lock().await.taken().await
    }

    /// Snapshots the cwd after the turn and records what it changed. Only for a turn that
    /// was stored (its checkpoint row exists).
    pub(super) async fn end_checkpoint(&self) {
        let Some(checkpoint) = self.start_checkpoint().await else {
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

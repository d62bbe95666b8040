//! Checkpoints on the wire (issue 31): `session/checkpoints` (any caller, as
//! `session/messages`), `session/rewind` and `session/unrewind` (attached callers, while no
//! turn runs: they hold the session's turn slot, so a prompt meanwhile is `-32002` as it is
//! during a turn), `session/fork` (attaches the caller to the new session, as `session/new`).
//! The work is the agent's (`zeroclaw_agent::checkpoints`); here, its errors as codes and
//! the events every attached client redraws from.

use super::{attached, ensure_exists, not_found};
use crate::methods::errors::storage;
use crate::methods::{Ctx, Handle, Reply};
use serde_json::{Value, json};
use std::sync::Arc;
use zeroclaw_agent::checkpoints::{self, ForkError, RewindError, RewindRequest};
use zeroclaw_agent::history;
use zeroclaw_agent::session::{ActiveTurn, Session};
use zeroclaw_agent::store::CheckpointRow;
use zeroclaw_protocol::methods::{self as m, *};
use zeroclaw_protocol::{Update, codes};
use zeroclaw_rpc::RpcError;

impl Handle for m::SessionCheckpoints {
    fn handle(ctx: Ctx, p: CheckpointsParams) -> Reply<CheckpointsResult> {
        Reply::later(async move {
            let daemon = &ctx.0.daemon;
            ensure_exists(daemon, &p.session_id).await?;
            let rows = daemon
                .agent
                .sessions
                .store
                .checkpoints(&p.session_id)
                .await
                .map_err(storage)?;
            let checkpoints = rows.iter().filter(|r| !r.hidden).map(checkpoint).collect();
            Ok(CheckpointsResult { checkpoints })
        })
    }
}

fn checkpoint(row: &CheckpointRow) -> Checkpoint {
    Checkpoint {
        checkpoint_id: row.id.clone(),
        turn: u64::try_from(row.turn).unwrap_or(0),
        turn_id: row.turn_id.clone(),
        message_id: row.message_id,
        created_at: history::timestamp(row.created_at),
        prompt: row.prompt.clone(),
        changed_files: row.changed.as_ref().map(files).unwrap_or_default(),
        omitted: row.omitted.clone(),
        error: row.error.clone(),
    }
}

/// `[{path, change}]` as stored, read.
fn files(value: &Value) -> Vec<ChangedFile> {
    serde_json::from_value(value.clone()).unwrap_or_default()
}

/// Holds the session's turn slot for a rewind, so no turn starts meanwhile; gives it back
/// when dropped.
struct Slot {
    session: Arc<Session>,
    turn: Arc<ActiveTurn>,
}

impl Slot {
    fn take(session: Arc<Session>) -> Result<Self, RpcError> {
        let turn = ActiveTurn::new(format!("rewind-{}", uuid::Uuid::new_v4()));
        match session.try_start(turn.clone()) {
            Ok(()) => Ok(Self { session, turn }),
            Err(running) => Err(RpcError::new(
                codes::SESSION_BUSY,
                format!(
                    "session {:?} is running {running}; a rewind waits for the turn to end (or `session/cancel` it)",
                    session.id
                ),
            )
            .with_data(json!({ "turnId": running }))),
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.session.clear_turn(&self.turn.id);
        self.turn.finished.cancel();
    }
}

fn rewind_error(e: RewindError) -> RpcError {
    let message = e.to_string();
    match e {
        RewindError::NoCheckpoint {
            session,
            checkpoint,
        } => RpcError::new(codes::CHECKPOINT_UNAVAILABLE, message)
            .with_data(json!({ "sessionId": session, "checkpointId": checkpoint })),
        RewindError::NoSnapshot { checkpoint, reason } => {
            RpcError::new(codes::CHECKPOINT_UNAVAILABLE, message)
                .with_data(json!({ "checkpointId": checkpoint, "reason": reason }))
        }
        RewindError::NotLast { undo } => RpcError::new(codes::CHECKPOINT_UNAVAILABLE, message)
            .with_data(json!({ "undoId": undo })),
        RewindError::Conflicts(conflicts) => {
            let conflicts: Vec<Value> = conflicts
                .iter()
                .map(|(path, reason)| json!({ "path": path, "reason": reason }))
                .collect();
            RpcError::new(codes::REWIND_CONFLICT, message)
                .with_data(json!({ "conflicts": conflicts, "force": true }))
        }
        RewindError::Engine(_) => RpcError::internal(message),
        RewindError::Store(e) => storage(e),
    }
}

impl Handle for m::SessionRewind {
    fn handle(ctx: Ctx, p: RewindParams) -> Reply<RewindResult> {
        let session = match attached(&ctx, &p.session_id) {
            Ok(session) => session,
            Err(refused) => return refused.reply(),
        };
        // Taken in frame order: a prompt sent after this request finds the session busy.
        let slot = match Slot::take(session.clone()) {
            Ok(slot) => slot,
            Err(e) => return Reply::Now(Err(e)),
        };
        Reply::later(async move {
            let agent = &ctx.0.daemon.agent;
            let request = RewindRequest {
                session_id: session.id.clone(),
                cwd: session.cwd.clone(),
                checkpoint_id: p.checkpoint_id.clone(),
                files: p.files,
                conversation: p.conversation,
                force: p.force,
            };
            let done = checkpoints::rewind(&agent.sessions.store, &agent.checkpoints, request)
                .await
                .map_err(rewind_error)?;
            drop(slot);
            tracing::info!(session = %session.id, checkpoint = %p.checkpoint_id, files = done.restored_count, hidden = done.messages_hidden, "session rewound");
            session.broadcast_outside_turns(Update::SessionRewound {
                checkpoint_id: Some(p.checkpoint_id),
                undo_id: done.undo_id.clone(),
                files_restored: done.restored_count,
                messages: done.messages_hidden,
                undone: false,
            });
            Ok(RewindResult {
                restored_files: files(&done.restored),
                messages_hidden: done.messages_hidden,
                undo_id: done.undo_id,
            })
        })
    }
}

impl Handle for m::SessionUnrewind {
    fn handle(ctx: Ctx, p: UnrewindParams) -> Reply<UnrewindResult> {
        let session = match attached(&ctx, &p.session_id) {
            Ok(session) => session,
            Err(refused) => return refused.reply(),
        };
        let slot = match Slot::take(session.clone()) {
            Ok(slot) => slot,
            Err(e) => return Reply::Now(Err(e)),
        };
        Reply::later(async move {
            let agent = &ctx.0.daemon.agent;
            let done = checkpoints::unrewind(
                &agent.sessions.store,
                &agent.checkpoints,
                &session.id,
                &session.cwd,
                &p.undo_id,
                p.force,
            )
            .await
            .map_err(rewind_error)?;
            drop(slot);
            tracing::info!(session = %session.id, undo = %p.undo_id, "session unrewound");
            session.broadcast_outside_turns(Update::SessionRewound {
                checkpoint_id: None,
                undo_id: p.undo_id,
                files_restored: done.restored_count,
                messages: done.messages_restored,
                undone: true,
            });
            Ok(UnrewindResult {
                restored_files: files(&done.restored),
                messages_restored: done.messages_restored,
            })
        })
    }
}

impl Handle for m::SessionFork {
    fn handle(ctx: Ctx, p: ForkParams) -> Reply<SessionInfo> {
        Reply::later(async move {
            let daemon = &ctx.0.daemon;
            let store = &daemon.agent.sessions.store;
            let row = checkpoints::fork(store, &p.session_id, p.checkpoint_id.as_deref())
                .await
                .map_err(|e| match e {
                    ForkError::NoSession(id) => not_found(&id),
                    ForkError::Store(e) => storage(e),
                    e @ ForkError::NoCheckpoint { .. } => {
                        RpcError::new(codes::CHECKPOINT_UNAVAILABLE, e.to_string()).with_data(
                            json!({ "sessionId": p.session_id, "checkpointId": p.checkpoint_id }),
                        )
                    }
                })?;
            daemon.agent.sessions.count_change(1);
            let session = daemon.agent.sessions.create(&row);
            ctx.0.attach(&session);
            let title = row.title.clone().unwrap_or_default();
            tracing::info!(session = %p.session_id, fork = %row.id, "session forked");
            if let Some(original) = daemon.agent.sessions.live(&p.session_id) {
                original.broadcast_outside_turns(Update::SessionForked {
                    new_session_id: row.id.clone(),
                    checkpoint_id: p.checkpoint_id,
                    title,
                });
            }
            super::lifecycle::session_info(daemon, row).await
        })
    }
}

//! `session/rewind` and `session/unrewind`: the files back to a checkpoint's snapshot
//! and/or the conversation back to before its turn, and the reverse of the last rewind.
//! The caller holds the session's turn slot meanwhile, so no turn runs during either.
//!
//! **Edits outside the agent.** The workspace changes under the agent's hands (its turns,
//! from each turn's start snapshot to its end snapshot) and the daemon's (a rewind, from the
//! state it found to the one it left). Anything that changed between two of these events
//! since the checkpoint, or after the last of them, was someone else: those intervals are
//! the engine's `gaps`, and a restore that would overwrite a path changed in one is refused
//! unless forced. A turn that never ended (a daemon killed mid-turn) has no end snapshot:
//! the interval after it is not checked.

use super::{Checkpointer, changes};
use crate::store::{CheckpointRow, RewindRow, Store, StoreError};
use serde_json::Value;
use std::sync::Arc;
use zeroclaw_checkpoint::{Gap, RefName, Restore, RestoreOutcome, SnapshotId};

#[derive(Debug, thiserror::Error)]
pub enum RewindError {
    #[error(
        "session {session:?} has no checkpoint {checkpoint:?}; `session/checkpoints` lists them"
    )]
    NoCheckpoint { session: String, checkpoint: String },
    #[error(
        "checkpoint {checkpoint:?} has no snapshot of the files ({reason}); rewind the conversation only"
    )]
    NoSnapshot { checkpoint: String, reason: String },
    #[error(
        "{undo:?} is not the session's last rewind, or turns ran since it: only the last rewind can be undone, before the next prompt"
    )]
    NotLast { undo: String },
    /// Paths in the way: `[{path, reason}]`.
    #[error("the rewind would overwrite {} path(s) changed outside the agent or not captured (first: {}); nothing was changed. Pass `force: true` to overwrite them", .0.len(), .0.first().map_or("", |c| c.0.as_str()))]
    Conflicts(Vec<(String, &'static str)>),
    #[error("the checkpoint store failed: {0}")]
    Engine(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub struct RewindRequest {
    pub session_id: String,
    pub cwd: String,
    pub checkpoint_id: String,
    pub files: bool,
    pub conversation: bool,
    pub force: bool,
}

#[derive(Debug)]
pub struct Rewound {
    /// `[{path, change}]`: what the restore did.
    pub restored: Value,
    pub restored_count: u64,
    pub messages_hidden: u64,
    pub undo_id: String,
}

#[derive(Debug)]
pub struct Unrewound {
    pub restored: Value,
    pub restored_count: u64,
    pub messages_restored: u64,
}

/// One change of the workspace the daemon made itself: from the state it found to the
/// state it left.
struct Event {
    at: i64,
    start: Option<String>,
    end: Option<String>,
}

/// The intervals since `since` in which someone else changed the workspace (module docs).
fn gaps(checkpoints: &[CheckpointRow], rewinds: &[RewindRow], since: i64) -> Vec<Gap> {
    let mut events: Vec<Event> = checkpoints
        .iter()
        .filter(|c| c.created_at >= since)
        .map(|c| Event {
            at: c.created_at,
            start: c.snapshot.clone(),
            end: c.end_snapshot.clone(),
        })
        .chain(
            rewinds
                .iter()
                .filter(|r| r.created_at >= since && r.found.is_some())
                .map(|r| Event {
                    at: r.created_at,
                    start: r.found.clone(),
                    end: r.left_state.clone(),
                }),
        )
        .collect();
    events.sort_by_key(|e| e.at);
    let id = |s: &Option<String>| s.as_deref().and_then(|s| SnapshotId::parse(s).ok());
    let mut gaps = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let Some(end) = id(&event.end) else { continue };
        match events.get(i + 1) {
            Some(next) => {
                if let Some(next_start) = id(&next.start) {
                    gaps.push(Gap {
                        end,
                        next_start: Some(next_start),
                    });
                }
            }
            None => gaps.push(Gap {
                end,
                next_start: None,
            }),
        }
    }
    gaps
}

fn undo_ref(session: &str, id: &str) -> Result<RefName, String> {
    RefName::new(format!("{session}/undo/{id}")).map_err(|e| e.to_string())
}

/// Restores `cwd` to `target` (the engine's `restore`); returns what it did and the
/// snapshot of the state it found.
async fn restore(
    engine: &Arc<Checkpointer>,
    cwd: &str,
    undo: RefName,
    target: &str,
    gaps: Vec<Gap>,
    force: bool,
) -> Result<(Value, u64, String), RewindError> {
    let (cwd, target) = (cwd.to_owned(), target.to_owned());
    let outcome = engine
        .blocking(move |engine| {
            let target = SnapshotId::parse(&target).map_err(|e| e.to_string())?;
            let ws = engine.workspace(&cwd).map_err(|e| e.to_string())?;
            let request = Restore {
                target,
                undo_ref: undo,
                gaps,
                force,
            };
            ws.restore(&request).map_err(|e| e.to_string())
        })
        .await
        .map_err(RewindError::Engine)?;
    match outcome {
        RestoreOutcome::Restored {
            undo,
            changes: done,
        } => {
            let count = u64::try_from(done.len()).unwrap_or(u64::MAX);
            Ok((changes(&done), count, undo.to_string()))
        }
        RestoreOutcome::Refused { conflicts } => Err(RewindError::Conflicts(
            conflicts
                .iter()
                .map(|c| (super::wire_path(&c.path), c.reason.as_str()))
                .collect(),
        )),
    }
}

/// Rewinds a session to one of its checkpoints (see the module docs).
pub async fn rewind(
    store: &Store,
    engine: &Arc<Checkpointer>,
    r: RewindRequest,
) -> Result<Rewound, RewindError> {
    let checkpoints = store.checkpoints(&r.session_id).await?;
    let Some(target) = checkpoints
        .iter()
        .find(|c| c.id == r.checkpoint_id && !c.hidden)
    else {
        return Err(RewindError::NoCheckpoint {
            session: r.session_id,
            checkpoint: r.checkpoint_id,
        });
    };
    let undo_id = uuid::Uuid::new_v4().to_string();
    let (mut restored, mut restored_count, mut found, mut left) =
        (Value::Array(Vec::new()), 0, None, None);
    if r.files {
        let Some(snapshot) = target.snapshot.clone() else {
            return Err(RewindError::NoSnapshot {
                checkpoint: target.id.clone(),
                reason: target
                    .error
                    .clone()
                    .unwrap_or_else(|| "none was taken".into()),
            });
        };
        let rewinds = store.rewinds(&r.session_id).await?;
        let gaps = gaps(&checkpoints, &rewinds, target.created_at);
        let undo = undo_ref(&r.session_id, &undo_id).map_err(RewindError::Engine)?;
        let (done, count, state) = restore(engine, &r.cwd, undo, &snapshot, gaps, r.force).await?;
        (restored, restored_count, found, left) = (done, count, Some(state), Some(snapshot));
    }
    let row = RewindRow {
        id: undo_id.clone(),
        session_id: r.session_id.clone(),
        checkpoint_id: Some(target.id.clone()),
        kind: "rewind".into(),
        found,
        left_state: left,
        messages_hidden: 0,
        created_at: now_ms(),
        undone: false,
    };
    let hide_from = if r.conversation {
        target.message_id
    } else {
        None
    };
    let hidden = store.record_rewind(row, hide_from).await?;
    Ok(Rewound {
        restored,
        restored_count,
        messages_hidden: u64::try_from(hidden).unwrap_or(0),
        undo_id,
    })
}

/// Reverses the session's last rewind, `undo_id`, if no turn ran since.
pub async fn unrewind(
    store: &Store,
    engine: &Arc<Checkpointer>,
    session_id: &str,
    cwd: &str,
    undo_id: &str,
    force: bool,
) -> Result<Unrewound, RewindError> {
    let not_last = || RewindError::NotLast {
        undo: undo_id.to_owned(),
    };
    let rewinds = store.rewinds(session_id).await?;
    let last = rewinds
        .last()
        .filter(|r| r.id == undo_id && r.kind == "rewind" && !r.undone);
    let Some(last) = last else {
        return Err(not_last());
    };
    let checkpoints = store.checkpoints(session_id).await?;
    if checkpoints.iter().any(|c| c.created_at > last.created_at) {
        return Err(not_last());
    }
    let id = uuid::Uuid::new_v4().to_string();
    let (mut restored, mut restored_count, mut found) = (Value::Array(Vec::new()), 0, None);
    if let (Some(back_to), Some(left)) = (&last.found, &last.left_state) {
        let gap = SnapshotId::parse(left).map(|end| Gap {
            end,
            next_start: None,
        });
        let undo = undo_ref(session_id, &id).map_err(RewindError::Engine)?;
        let gaps = gap.into_iter().collect();
        let (done, count, state) = restore(engine, cwd, undo, back_to, gaps, force).await?;
        (restored, restored_count, found) = (done, count, Some(state));
    }
    let row = RewindRow {
        id,
        session_id: session_id.to_owned(),
        checkpoint_id: last.checkpoint_id.clone(),
        kind: "unrewind".into(),
        left_state: last.found.clone(),
        found,
        messages_hidden: 0,
        created_at: now_ms(),
        undone: false,
    };
    let shown = store.record_unrewind(undo_id, row).await?;
    Ok(Unrewound {
        restored,
        restored_count,
        messages_restored: u64::try_from(shown).unwrap_or(0),
    })
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

//! Checkpoints of sessions' workspaces (issue 31): the engine (`zeroclaw-checkpoint`, a
//! shadow git repository per workspace under `<data dir>/checkpoints/`), opened on first
//! use, and what the agent does with it. A turn snapshots its session's cwd before it
//! starts and when it ends (`turn/checkpoint.rs` calls [`Checkpointer::take`] and
//! [`Checkpointer::end`]); `rewind.rs` puts files and conversation back, `fork.rs` starts a
//! new session from a checkpoint. Everything that runs git runs on a blocking thread.
//!
//! Snapshot refs are named `<session>/<checkpoint>/start`, `<session>/<checkpoint>/end` and
//! `<session>/undo/<rewind>`: a session's refs go with it (`forget_session`), and
//! `prune_orphans` drops those whose rows are gone.

mod batch;
mod fork;
mod rewind;

pub use fork::{ForkError, fork};
pub use rewind::{RewindError, RewindRequest, Rewound, Unrewound, rewind, unrewind};

use crate::store::NewCheckpoint;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
pub use zeroclaw_checkpoint::Pruned;
use zeroclaw_checkpoint::{Change, Checkpoints, Options};

/// The engine, opened the first time a checkpoint is needed (it runs `git --version`).
#[derive(Debug)]
pub struct Checkpointer {
    /// `agent.checkpoints`: off, no turn takes one.
    pub enabled: bool,
    root: PathBuf,
    never: Vec<PathBuf>,
    engine: OnceLock<Result<Checkpoints, String>>,
    /// Turns' snapshots of one cwd, taken together (`batch.rs`).
    batches: batch::Batches,
}

/// The end of a turn's checkpoint: the snapshot after it, what the turn changed, or why
/// there is none.
#[derive(Debug, Default)]
pub struct Ended {
    pub snapshot: Option<String>,
    pub changed: Option<Value>,
    pub error: Option<String>,
}

impl Checkpointer {
    /// Snapshots kept under `<data_dir>/checkpoints`; `never` are directories never captured
    /// (the daemon's data and config dirs, should a session's cwd contain them).
    pub fn new(data_dir: &Path, never: Vec<PathBuf>, enabled: bool) -> Self {
        Self {
            enabled,
            root: data_dir.join("checkpoints"),
            never,
            engine: OnceLock::new(),
            batches: batch::Batches::default(),
        }
    }

    /// The engine, or why there is none. Blocks (the first call runs git).
    pub fn engine(&self) -> Result<&Checkpoints, String> {
        self.engine
            .get_or_init(|| {
                let options = Options {
                    never_capture: self.never.clone(),
                    ..Options::default()
                };
                Checkpoints::open(&self.root, options).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Runs `job` with the engine on a blocking thread.
    pub async fn blocking<T: Send + 'static>(
        self: &Arc<Self>,
        job: impl FnOnce(&Checkpoints) -> Result<T, String> + Send + 'static,
    ) -> Result<T, String> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || job(this.engine()?))
            .await
            .map_err(|e| format!("the checkpoint task failed: {e}"))?
    }

    /// The checkpoint before a turn: a snapshot of `cwd`. A failure is recorded in it,
    /// never returned: a turn runs whether or not its checkpoint could be taken.
    pub async fn take(self: &Arc<Self>, cwd: &str, session: &str, id: String) -> NewCheckpoint {
        let name = format!("{session}/{id}/start");
        let taken = self.snapshot(cwd, name, None).await;
        match taken {
            Ok(snapshot) => NewCheckpoint {
                id,
                snapshot: Some(snapshot.id.to_string()),
                omitted: omitted(&snapshot.omitted),
                error: None,
            },
            Err(error) => {
                tracing::warn!(session, error, "no checkpoint before this turn");
                NewCheckpoint {
                    id,
                    error: Some(error),
                    ..NewCheckpoint::default()
                }
            }
        }
    }

    /// The end of a turn whose checkpoint is `id` (snapshot `start`): the snapshot after
    /// it, and what changed since `start`.
    pub async fn end(
        self: &Arc<Self>,
        cwd: &str,
        session: &str,
        id: &str,
        start: Option<String>,
    ) -> Ended {
        let name = format!("{session}/{id}/end");
        let taken = self.snapshot(cwd, name, start).await;
        match taken {
            Ok(snapshot) => Ended {
                snapshot: Some(snapshot.id.to_string()),
                changed: Some(changes(&snapshot.changes)),
                error: None,
            },
            Err(error) => {
                tracing::warn!(session, error, "no snapshot at the end of this turn");
                Ended {
                    error: Some(error),
                    ..Ended::default()
                }
            }
        }
    }

    /// Drops a deleted session's snapshots from its workspace's store (all of it when no
    /// other session has any there).
    pub async fn forget_session(self: &Arc<Self>, cwd: &str, session: &str) {
        let (cwd, prefix) = (cwd.to_owned(), format!("{session}/"));
        let pruned = self
            .blocking(move |engine| {
                let Ok(ws) = engine.workspace(&cwd) else {
                    return Ok(Pruned::default());
                };
                ws.prune(|name| !name.as_str().starts_with(&prefix))
                    .map_err(|e| e.to_string())
            })
            .await;
        if let Err(error) = pruned {
            tracing::warn!(
                session,
                error,
                "could not prune the deleted session's checkpoints"
            );
        }
    }

    /// Drops every snapshot whose checkpoint or rewind the store no longer holds, in every
    /// workspace (`zeroclaw store prune`, with no daemon running). Blocks.
    pub fn prune_orphans(
        &self,
        checkpoints: &HashSet<String>,
        rewinds: &HashSet<String>,
    ) -> Result<Pruned, String> {
        self.engine()?
            .prune_all(|_, name| keeps(name.as_str(), checkpoints, rewinds))
            .map_err(|e| e.to_string())
    }
}

/// Whether snapshot ref `name` belongs to a checkpoint or rewind the store holds.
fn keeps(name: &str, checkpoints: &HashSet<String>, rewinds: &HashSet<String>) -> bool {
    match name.split('/').collect::<Vec<_>>()[..] {
        [_, "undo", id] => rewinds.contains(id),
        [_, id, "start" | "end"] => checkpoints.contains(id),
        _ => false,
    }
}

/// A path as the wire has it: relative, with `/`.
pub(crate) fn wire_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// `[{path, change}]`.
pub(crate) fn changes(changes: &[Change]) -> Value {
    Value::Array(
        changes
            .iter()
            .map(|c| json!({"path": wire_path(&c.path), "change": c.change.as_str()}))
            .collect(),
    )
}

/// What a snapshot left out, when it left anything out.
fn omitted(o: &zeroclaw_checkpoint::Omitted) -> Option<Value> {
    if o.too_large.is_empty() && o.nested_repositories.is_empty() && o.unreadable.is_empty() {
        return None;
    }
    Some(json!({
        "tooLarge": o.too_large.iter().map(|f| json!({"path": wire_path(&f.path), "bytes": f.bytes})).collect::<Vec<_>>(),
        "nestedRepositories": o.nested_repositories.iter().map(|p| wire_path(p)).collect::<Vec<_>>(),
        "unreadable": o.unreadable.iter().map(|u| json!({"path": wire_path(&u.path), "reason": u.reason})).collect::<Vec<_>>(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use zeroclaw_checkpoint::RefName;

    #[test]
    fn only_the_refs_of_rows_the_store_holds_are_kept() {
        let cps: HashSet<String> = ["c1".to_owned()].into();
        let rws: HashSet<String> = ["u1".to_owned()].into();
        assert!(keeps("s/c1/start", &cps, &rws));
        assert!(keeps("s/c1/end", &cps, &rws));
        assert!(keeps("s/undo/u1", &cps, &rws));
        assert!(!keeps("s/c2/start", &cps, &rws));
        assert!(!keeps("s/undo/u2", &cps, &rws));
        assert!(!keeps("stray", &cps, &rws));
    }

    #[test]
    fn pruning_orphans_drops_the_snapshots_of_rows_that_are_gone_and_keeps_the_rest() {
        let data = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let checkpointer = Checkpointer::new(data.path(), Vec::new(), true);
        let Ok(engine) = checkpointer.engine() else {
            eprintln!("SKIPPED: no git");
            return;
        };
        let ws = engine.workspace(work.path()).unwrap();
        for (name, content) in [("s/c1/start", "1"), ("s/c2/start", "2"), ("s/undo/u1", "3")] {
            std::fs::write(work.path().join("f"), content).unwrap();
            ws.snapshot(&RefName::new(name).unwrap(), None).unwrap();
        }
        let keep_c1: HashSet<String> = ["c1".to_owned()].into();
        let pruned = checkpointer
            .prune_orphans(&keep_c1, &HashSet::new())
            .unwrap();
        assert_eq!((pruned.refs_removed, pruned.refs_kept), (2, 1));
        let left: Vec<String> = ws
            .snapshots()
            .unwrap()
            .into_iter()
            .map(|(name, _)| name.to_string())
            .collect();
        assert_eq!(left, ["s/c1/start"]);
        let pruned = checkpointer
            .prune_orphans(&HashSet::new(), &HashSet::new())
            .unwrap();
        assert_eq!(pruned.refs_kept, 0);
        assert_eq!(
            ws.store_bytes(),
            0,
            "a workspace left without refs loses its store"
        );
    }
}

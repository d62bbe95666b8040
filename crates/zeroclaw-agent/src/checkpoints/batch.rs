//! Snapshots asked of one cwd while a capture of it runs are taken together, in the next
//! capture (`Workspace::snapshot_many`): one walk of the cwd and one ref update for all of
//! them, instead of one each, in turn, on the workspace's lock. Fifty turns starting in one
//! project at once make two or three captures, not fifty.
//!
//! Each ask is still captured after it was made: an ask that arrives while a capture runs
//! waits for the next one, never joins a walk already under way. The first capture after
//! an idle spell waits [`GATHER`] before it starts, so a burst of turns (fifty prompts
//! sent at once) is captured in one round and starts streaming together; without it the
//! first turn started a capture alone and streamed while the rest waited a capture more
//! (docs/benchmarks.md, "Concurrent turns, again").
//!
//! The queue of a cwd holds at most one ask per turn running in it (each turn waits for
//! its answer before it asks again), so it is bounded by the turns the daemon runs.

use super::Checkpointer;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use zeroclaw_checkpoint::{RefName, Snapshot, SnapshotId};

/// How long the first capture after an idle spell waits for more asks: turns started
/// together (a burst of prompts) then take their start snapshots in one capture and start
/// streaming together, instead of one first and the rest a capture later.
const GATHER: std::time::Duration = std::time::Duration::from_millis(2);

/// The asks waiting for each cwd's next capture. A cwd is in the map while a task
/// captures it; that task takes its asks, round after round, until none are left.
#[derive(Debug, Default)]
pub(super) struct Batches {
    waiting: Mutex<HashMap<String, Vec<Ask>>>,
}

#[derive(Debug)]
struct Ask {
    name: RefName,
    parent: Option<SnapshotId>,
    answer: oneshot::Sender<Result<Snapshot, String>>,
}

impl Checkpointer {
    /// Snapshots `cwd` under `name` (and what changed since `parent`), in the next capture
    /// of `cwd`.
    pub(super) async fn snapshot(
        self: &Arc<Self>,
        cwd: &str,
        name: String,
        parent: Option<String>,
    ) -> Result<Snapshot, String> {
        let name = RefName::new(name).map_err(|e| e.to_string())?;
        let parent = parent.map(|s| SnapshotId::parse(&s)).transpose();
        let parent = parent.map_err(|e| e.to_string())?;
        let (answer, answered) = oneshot::channel();
        let ask = Ask {
            name,
            parent,
            answer,
        };
        let start = {
            let mut waiting = self
                .batches
                .waiting
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            match waiting.get_mut(cwd) {
                Some(asks) => {
                    asks.push(ask);
                    false
                }
                None => {
                    waiting.insert(cwd.to_owned(), vec![ask]);
                    true
                }
            }
        };
        if start {
            tokio::spawn(self.clone().capture_rounds(cwd.to_owned()));
        }
        answered
            .await
            .map_err(|_| "the checkpoint task failed".to_owned())?
    }

    /// Captures `cwd` for the asks waiting, round after round, until none wait; then
    /// leaves the map, so the next ask starts a task of its own.
    async fn capture_rounds(self: Arc<Self>, cwd: String) {
        tokio::time::sleep(GATHER).await;
        loop {
            let asks = {
                let mut waiting = self
                    .batches
                    .waiting
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                match waiting.get_mut(&cwd) {
                    Some(asks) if !asks.is_empty() => std::mem::take(asks),
                    _ => {
                        waiting.remove(&cwd);
                        return;
                    }
                }
            };
            let wanted: Vec<(RefName, Option<SnapshotId>)> = asks
                .iter()
                .map(|a| (a.name.clone(), a.parent.clone()))
                .collect();
            let at = cwd.clone();
            let taken = self
                .blocking(move |engine| {
                    let ws = engine.workspace(&at).map_err(|e| e.to_string())?;
                    ws.snapshot_many(&wanted).map_err(|e| e.to_string())
                })
                .await;
            match taken {
                Ok(answers) => {
                    for (ask, answer) in asks.into_iter().zip(answers) {
                        let _ = ask.answer.send(answer.map_err(|e| e.to_string()));
                    }
                }
                Err(error) => {
                    for ask in asks {
                        let _ = ask.answer.send(Err(error.clone()));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sixteen turns of one cwd snapshot it at once: each snapshot holds what was written
    /// before it was asked for, and each names its own ref.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_of_many_asks_at_once_is_captured_after_it_was_made() {
        let data = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let checkpointer = Arc::new(Checkpointer::new(data.path(), Vec::new(), true));
        if checkpointer.engine().is_err() {
            eprintln!("SKIPPED: no git");
            return;
        }
        let cwd = work.path().display().to_string();
        let empty = checkpointer
            .snapshot(&cwd, "s/empty/start".into(), None)
            .await
            .unwrap();
        let mut asks = Vec::new();
        for i in 0..16 {
            std::fs::write(work.path().join(format!("f{i:02}")), i.to_string()).unwrap();
            let (checkpointer, cwd) = (checkpointer.clone(), cwd.clone());
            let parent = Some(empty.id.to_string());
            asks.push(tokio::spawn(async move {
                checkpointer
                    .snapshot(&cwd, format!("s/c{i}/end"), parent)
                    .await
            }));
        }
        for (i, ask) in asks.into_iter().enumerate() {
            let snapshot = ask.await.unwrap().unwrap();
            let added: Vec<String> = snapshot
                .changes
                .iter()
                .map(|c| c.path.display().to_string())
                .collect();
            for j in 0..=i {
                assert!(
                    added.contains(&format!("f{j:02}")),
                    "ask {i} misses f{j:02}: {added:?}"
                );
            }
        }
        let engine = checkpointer.engine().unwrap();
        let refs = engine.workspace(&cwd).unwrap().snapshots().unwrap();
        assert_eq!(refs.len(), 17, "{refs:?}");
    }
}

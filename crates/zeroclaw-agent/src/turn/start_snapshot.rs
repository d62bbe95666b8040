//! The turn's start checkpoint while its snapshot is taken on a task of its own, beside the
//! first model call (see `checkpoint.rs`), and once it is taken.

use crate::store::NewCheckpoint;
use tokio::task::JoinHandle;

/// The start checkpoint: being taken, or taken.
#[derive(Debug, Default)]
pub(super) enum StartCheckpoint {
    /// Checkpoints are off.
    #[default]
    None,
    Taking(JoinHandle<NewCheckpoint>),
    Taken(NewCheckpoint),
}

impl StartCheckpoint {
    /// The checkpoint, once taken: waits for its task the first time. A task that failed
    /// (it panicked) is a checkpoint that records why there is no snapshot.
    pub(super) async fn taken(&mut self) -> Option<NewCheckpoint> {
        if let StartCheckpoint::Taking(task) = self {
            let taken = task.await.unwrap_or_else(|e| {
                tracing::warn!(error = %e, "the checkpoint task failed");
                NewCheckpoint {
                    id: uuid::Uuid::new_v4().to_string(),
                    error: Some(format!("the checkpoint task failed: {e}")),
                    ..NewCheckpoint::default()
                }
            });
            *self = StartCheckpoint::Taken(taken);
        }
        match self {
            StartCheckpoint::Taken(taken) => Some(taken.clone()),
            _ => None,
        }
    }
}

//! How a turn stops short of its end: cancelled, or failed. Every step returns
//! `Result<_, Halt>`, so a cancellation travels by `?` to the one place that ends the turn
//! for it (`step.rs`, `Turn::run`), and the loop body has no cancel branches.

use super::TurnError;
use std::future::Future;
use tokio_util::sync::CancellationToken;

/// Why the turn's steps stopped before the model ended the turn.
#[derive(Debug)]
pub(super) enum Halt {
    /// The turn was cancelled (`session/cancel`, a shutdown): it ends `cancelled`.
    Cancelled,
    /// It failed, and its clients have been told (`Turn::fail`).
    Failed(TurnError),
}

impl From<TurnError> for Halt {
    fn from(error: TurnError) -> Self {
        Halt::Failed(error)
    }
}

/// `step`'s output, unless `cancel` fires first; then the step is dropped unfinished.
/// Cancellation wins a tie: once the turn is told to stop, nothing more of it runs.
pub(super) async fn or_cancelled<T>(
    cancel: &CancellationToken,
    step: impl Future<Output = T>,
) -> Result<T, Halt> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(Halt::Cancelled),
        out = step => Ok(out),
    }
}

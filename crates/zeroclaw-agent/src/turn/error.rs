//! How a turn fails, as domain data; `methods/errors.rs` says it on the wire.

use crate::provider::ProviderError;
use crate::store::StoreError;

/// A turn that ended in failure. Its clients were told with a `turn_complete` event
/// (when anything of it was stored).
#[derive(Debug)]
pub struct TurnError {
    pub turn_id: String,
    /// Whether the turn (and its prompt) had been stored.
    pub stored: bool,
    pub failure: Failure,
}

#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// A model call failed; `model` is the session's.
    #[error("{}", .error.message)]
    Provider { error: ProviderError, model: String },
    #[error(
        "{0}; the turn was stopped and everything stored before it is kept (is the disk full, or the database read-only?)"
    )]
    Storage(StoreError),
}

impl std::fmt::Display for TurnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.failure.fmt(f)
    }
}

impl std::error::Error for TurnError {}

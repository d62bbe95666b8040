//! Checkpoints for zeroclaw: snapshots of a workspace that a restore can return to.
//!
//! Each workspace gets a shadow git repository in the engine's store (one per canonical
//! workspace path, under `<root>/repos/<hash>/`), driven through the `git` binary with a
//! clean environment, so the user's own `.git` is never written, nor their config, hooks
//! or filters run. A snapshot is a git tree: content-addressed, so storage grows with what
//! changed, and git's index makes snapshotting an unchanged workspace a matter of `lstat`s.
//! The trees are built here from that index and written as one pack (`trees.rs`), since
//! git would write each as a file of its own, and creating files is what costs most.
//! `.gitignore` rules apply as the user's git applies them; files over a size cap and
//! nested repositories are left out and listed. See `docs/checkpoints.md`.
//!
//! ```no_run
//! use zeroclaw_checkpoint::{Checkpoints, Options, RefName, Restore, RestoreOutcome};
//! # fn main() -> Result<(), zeroclaw_checkpoint::Error> {
//! let engine = Checkpoints::open("/data/checkpoints", Options::default())?;
//! let ws = engine.workspace("/home/me/project")?;
//! let before = ws.snapshot(&RefName::new("session-1/0")?, None)?;
//! // ... the agent works ...
//! let after = ws.snapshot(&RefName::new("session-1/0-end")?, Some(&before.id))?;
//! println!("{} paths changed", after.changes.len());
//! let undo = RefName::new("session-1/undo-1")?;
//! match ws.restore(&Restore { target: before.id, undo_ref: undo, gaps: vec![], force: false })? {
//!     RestoreOutcome::Restored { changes, .. } => println!("restored {} paths", changes.len()),
//!     RestoreOutcome::Refused { conflicts } => println!("{} conflicts", conflicts.len()),
//! }
//! # Ok(()) }
//! ```
//!
//! Everything here blocks: call it from a blocking thread.

mod blobs;
mod checkpoints;
mod conflict;
mod diff;
mod engine;
mod error;
mod excludes;
mod fsops;
mod git;
mod ids;
mod index;
mod layout;
mod omitted;
mod options;
mod pack;
mod parse;
mod paths;
mod prune;
mod record;
mod repo;
mod restore;
mod scan;
mod snapshot;
#[cfg(unix)]
mod stage;
#[cfg(unix)]
mod stat;
mod trees;
mod workspace;

pub use checkpoints::{Checkpoints, StoredWorkspace};
pub use conflict::{Conflict, ConflictReason, Gap};
pub use diff::{Change, ChangeKind};
pub use error::Error;
pub use ids::{RefName, SnapshotId};
pub use omitted::{LargeFile, Omitted, Unreadable};
pub use options::Options;
pub use prune::Pruned;
pub use restore::{Restore, RestoreOutcome, RestorePlan};
pub use scan::{Ignored, IgnoredSummary};
pub use snapshot::Snapshot;
pub use workspace::Workspace;

#[cfg(test)]
mod tests {
    #[test]
    fn the_engine_and_its_workspaces_can_be_shared_across_threads() {
        fn shared<T: Send + Sync + Clone>() {}
        shared::<super::Checkpoints>();
        shared::<super::Workspace>();
    }
}

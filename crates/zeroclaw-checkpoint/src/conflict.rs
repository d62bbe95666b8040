//! Edits made outside the agent, and the other reasons a restore must not go ahead on its
//! own.
//!
//! The daemon snapshots the workspace before and after every turn. Whatever differs
//! between the end of one turn and the start of the next (or the state a restore finds,
//! after the last turn) was changed by someone else: the user in their editor, a build. A
//! restore that would overwrite such a change reports it instead, unless forced.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::diff;
use crate::error::Error;
use crate::git::{Context, Git};
use crate::ids::SnapshotId;

/// The interval between two turns: from the snapshot at a turn's end to the snapshot at
/// the next turn's start, or to the current state when `next_start` is `None` (the last
/// turn before the restore).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    pub end: SnapshotId,
    pub next_start: Option<SnapshotId>,
}

/// A path a restore will not change without `force` (or at all, when `Blocked`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Conflict {
    pub path: PathBuf,
    pub reason: ConflictReason,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ConflictReason {
    /// Changed outside the agent since the checkpoint; a forced restore overwrites it.
    EditedOutside,
    /// A file no snapshot holds (ignored, over the size cap, unreadable at the last
    /// snapshot) is where the restore would write, with other content; a forced restore
    /// overwrites it.
    NotCaptured,
    /// The path cannot be written without removing content that no snapshot holds (a
    /// directory with such files where a file must go, or such a file or a symlink where
    /// a directory must go): never restored, even when forced.
    Blocked,
}

impl ConflictReason {
    /// `edited_outside`, `not_captured` or `blocked`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConflictReason::EditedOutside => "edited_outside",
            ConflictReason::NotCaptured => "not_captured",
            ConflictReason::Blocked => "blocked",
        }
    }

    /// Whether `force` overrides it.
    pub fn forceable(self) -> bool {
        self != ConflictReason::Blocked
    }
}

/// The workspace-relative paths (git's form) changed within the gaps; `current` stands for
/// a gap's missing `next_start`.
pub(crate) fn outside_edits(
    git: &Git,
    ctx: &Context,
    gaps: &[Gap],
    current: Option<&SnapshotId>,
) -> Result<BTreeSet<Vec<u8>>, Error> {
    let mut paths = BTreeSet::new();
    for gap in gaps {
        let Some(to) = gap.next_start.as_ref().or(current) else {
            continue;
        };
        for change in diff::raw(git, ctx, &gap.end, to)? {
            paths.insert(change.path);
        }
    }
    Ok(paths)
}

/// One entry per path, the most severe reason kept, sorted by path.
pub(crate) fn merge(mut conflicts: Vec<Conflict>) -> Vec<Conflict> {
    conflicts.sort_by(|a, b| a.path.cmp(&b.path).then(b.reason.cmp(&a.reason)));
    conflicts.dedup_by(|later, first| later.path == first.path);
    conflicts
}

//! Everything that can go wrong, as one typed error. Each message says what went wrong and,
//! where there is one, what to do about it.

use std::io;
use std::path::PathBuf;

use crate::ids::SnapshotId;

/// How much of git's stderr an error keeps: enough for the message, never a whole dump.
pub(crate) const STDERR_LIMIT: usize = 4096;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `git` is not installed (or too old, or does not run): checkpoints are off until it is.
    #[error("checkpoints are unavailable: {reason}")]
    Unavailable { reason: String },

    /// The workspace cannot be snapshotted: it does not exist, is not a directory, or its
    /// path cannot be resolved.
    #[error("workspace {path}: {reason}")]
    Workspace { path: PathBuf, reason: String },

    /// More files than `Options::max_files` would be captured: the snapshot is refused
    /// rather than taking minutes. `found` is at least the limit plus one.
    #[error(
        "workspace {workspace} has more than {limit} files that are not ignored (found at least {found}); add the large trees to .gitignore, or raise the limit"
    )]
    TooManyFiles {
        workspace: PathBuf,
        limit: usize,
        found: usize,
    },

    /// A git command failed. `stderr` is git's own message, trimmed and bounded.
    #[error("git {command} failed ({status}): {stderr}")]
    Git {
        command: String,
        status: String,
        stderr: String,
    },

    /// The shadow repository is damaged (missing parts, unreadable objects, or a record of
    /// another workspace). Its snapshots may be lost; `Workspace::remove` deletes it and the
    /// next snapshot starts a new one.
    #[error("the checkpoint store {repo} is damaged: {detail}; remove it to start afresh")]
    Corrupt { repo: PathBuf, detail: String },

    /// The snapshot is not in this workspace's shadow repository (pruned, or another
    /// workspace's).
    #[error("snapshot {id} is not in the checkpoint store of {workspace}")]
    UnknownSnapshot { id: SnapshotId, workspace: PathBuf },

    /// A snapshot id or ref name that is not well formed.
    #[error("invalid {what} {value:?}: {reason}")]
    Invalid {
        what: &'static str,
        value: String,
        reason: &'static str,
    },

    /// A file operation failed.
    #[error("{op} {path}: {source}")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// A restore stopped part-way: `done` paths were already restored. The state before the
    /// restore is the snapshot `undo`: restoring it puts everything back.
    #[error(
        "the restore stopped after {done} paths at {path}: {source}; restore snapshot {undo} to undo the part already done"
    )]
    RestoreFailed {
        undo: SnapshotId,
        done: usize,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl Error {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

/// Trims git's stderr and bounds it, keeping valid UTF-8.
pub(crate) fn bounded(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text = text.trim();
    if text.len() <= STDERR_LIMIT {
        return text.to_string();
    }
    let mut end = STDERR_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_stderr_is_cut_at_the_limit_on_a_character_boundary() {
        let long = "é".repeat(STDERR_LIMIT);
        let cut = bounded(long.as_bytes());
        assert!(cut.len() <= STDERR_LIMIT + '…'.len_utf8());
        assert!(cut.ends_with('…'));
        assert_eq!(bounded(b"  fatal: x\n"), "fatal: x");
    }
}

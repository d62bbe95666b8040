//! Checkpoints (issue 31): the snapshot of a session's workspace taken before each turn,
//! and what can be done with them: `session/checkpoints` lists them, `session/rewind` puts
//! the files and/or the conversation back to one, `session/unrewind` reverses the last
//! rewind, `session/fork` starts a new session from one. See docs/checkpoints.md.

use super::session::SessionInfo;
use serde::{Deserialize, Serialize};

method!(
    /// A session's checkpoints, oldest first: one before each turn the model still sees.
    SessionCheckpoints, "session/checkpoints", CheckpointsParams, CheckpointsResult
);
method!(
    /// Puts the workspace and/or the conversation back to a checkpoint; reversible.
    SessionRewind, "session/rewind", RewindParams, RewindResult
);
method!(
    /// Reverses the session's last rewind: its files and its conversation.
    SessionUnrewind, "session/unrewind", UnrewindParams, UnrewindResult
);
method!(
    /// A new session whose history is the conversation up to a checkpoint, in the same cwd.
    SessionFork, "session/fork", ForkParams, SessionInfo
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckpointsParams {
    pub session_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CheckpointsResult {
    pub checkpoints: Vec<Checkpoint>,
}

/// The state of the workspace before one turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    pub checkpoint_id: String,
    /// The turn that followed (1 for the session's first).
    pub turn: u64,
    pub turn_id: String,
    /// The row of that turn's prompt (`session/messages`'s `id`).
    pub message_id: Option<i64>,
    pub created_at: String,
    /// The first line of the turn's prompt.
    pub prompt: String,
    /// What the turn that followed changed, by path; empty while it runs.
    pub changed_files: Vec<ChangedFile>,
    /// What the snapshot left out: `{tooLarge: [{path, bytes}], nestedRepositories: [...],
    /// unreadable: [{path, reason}]}`; absent when nothing was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted: Option<serde_json::Value>,
    /// Why this checkpoint has no snapshot (its files cannot be rewound; the conversation
    /// can): git missing, the cwd gone, the workspace too large.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A path and what happened to it: `added`, `modified` or `deleted`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChangedFile {
    /// Relative to the session's cwd, with `/`.
    pub path: String,
    pub change: String,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RewindParams {
    pub session_id: String,
    pub checkpoint_id: String,
    /// Restore the workspace's files to the checkpoint (default `true`).
    #[serde(default = "yes")]
    pub files: bool,
    /// Drop that turn and every later one from the conversation the model sees (default
    /// `true`); they stay stored, marked hidden.
    #[serde(default = "yes")]
    pub conversation: bool,
    /// Overwrite files changed outside the agent since the checkpoint, instead of refusing
    /// with `-32030`.
    #[serde(default)]
    pub force: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RewindResult {
    /// What the restore did to each path (`added`: created again, `deleted`: removed).
    pub restored_files: Vec<ChangedFile>,
    pub messages_hidden: u64,
    /// For `session/unrewind`.
    pub undo_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UnrewindParams {
    pub session_id: String,
    /// The `undoId` of the session's last rewind.
    pub undo_id: String,
    /// As `session/rewind`'s.
    #[serde(default)]
    pub force: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UnrewindResult {
    pub restored_files: Vec<ChangedFile>,
    /// Messages visible to the model again.
    pub messages_restored: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ForkParams {
    pub session_id: String,
    /// The fork's history is the conversation before this checkpoint's turn; the whole
    /// conversation if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_id: Option<String>,
}

/// A conflict `session/rewind` refuses over (`-32030`'s `data.conflicts`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RewindConflict {
    pub path: String,
    /// `edited_outside` (changed since the checkpoint, not by the agent), `not_captured`
    /// (a file no snapshot holds is in the way): `force: true` overwrites them; `blocked`
    /// (uncaptured content would have to be removed): never overwritten.
    pub reason: String,
}

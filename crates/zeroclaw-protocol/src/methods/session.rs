//! A session's methods but a turn's (those are in `prompt.rs`): `session/new`, `list`,
//! `load`, `messages`, `rename`, `compact`, `set_model`, `delete`; with what a session is
//! (`SessionInfo`, `SessionSummary`) and the MCP servers a session may bring.

use super::Empty;
use super::sandbox::{SandboxRequest, SessionSandbox};
use crate::history::Message;
use serde::{Deserialize, Serialize};

method!(
    /// Creates a session and attaches the caller.
    SessionNew, "session/new", NewSessionParams, SessionInfo
);
method!(
    /// The sessions in the store, most recently updated first, a page at a time.
    SessionList, "session/list", ListParams, SessionListResult
);
method!(
    /// Attaches the caller to a session, replaying its history first with `replay`.
    SessionLoad, "session/load", LoadParams, SessionSummary
);
method!(
    /// A page of a session's stored history.
    SessionMessages, "session/messages", MessagesParams, MessagePage
);
method!(
    /// Renames a session (or clears its title).
    SessionRename, "session/rename", RenameParams, Empty
);
method!(
    /// Folds the session's older messages into a summary the model is sent instead.
    SessionCompact, "session/compact", SessionIdParams, CompactResult
);
method!(
    /// Deletes a session and its history, cancelling a running turn first.
    SessionDelete, "session/delete", SessionIdParams, DeleteResult
);
method!(
    /// Detaches the calling connection from a session: its events stop coming; a session
    /// nobody holds any more leaves memory (its own MCP servers stopped) once no turn runs.
    SessionClose, "session/close", SessionIdParams, CloseResult
);
method!(
    /// Sets the model of a session's turns (persisted); a running turn keeps its own.
    SessionSetModel, "session/set_model", SetModelParams, SetModelResult
);
method!(
    /// The full id of the one session whose id starts with a prefix, as clients show them.
    SessionResolve, "session/resolve", ResolveParams, ResolveResult
);

/// The shortest prefix `session/resolve` takes: shorter ones match too much to be meant.
pub const MIN_ID_PREFIX: usize = 4;

/// `session/new` params; every member optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewSessionParams {
    /// Absolute; the daemon's own working directory if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The configured model if absent or blank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// MCP servers for this session only, in ACP's shape: stdio `{name, command, args,
    /// env: [{name, value}]}` or `{type: "http", name, url, headers: [{name, value}]}`.
    /// They stop when the session is unloaded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<SessionMcpServer>,
    /// The session's sandbox; absent members take `[sandbox]`'s. Only stricter than the
    /// config unless the caller has admin authority (`-32003` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxRequest>,
}

/// A session's MCP server, as ACP's `session/new` gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionMcpServer {
    pub name: String,
    /// `"http"` (or `"sse"`, refused); absent for stdio (`"stdio"` accepted too).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<NameValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<NameValue>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NameValue {
    pub name: String,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionInfo {
    pub session_id: String,
    pub cwd: String,
    pub model: String,
    pub title: Option<String>,
    pub created_at: String,
    /// The session's sandbox, as its turns will run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SessionSandbox>,
    /// The instruction files its turns load (`session/context` has the whole picture).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instructions: Vec<InstructionFile>,
    /// The session's permission mode (`session/set_mode`); `default` from older daemons.
    #[serde(default)]
    pub mode: super::PermissionMode,
}

/// An `AGENTS.md` (or `CLAUDE.md`) in the system prompt (`session/context`, `project.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct InstructionFile {
    pub path: String,
    /// The file's size on disk.
    pub bytes: u64,
    /// Whether the prompt has only its head (the per-file or the total cap).
    pub truncated: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListParams {
    /// 1 to 1000; 200 if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// The `nextCursor` of the page before; absent for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Only sessions whose title or cwd contains this (ASCII letters in any case; at most
    /// 1,024 bytes). Pass the same `search` with each page's `cursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
    /// Only sessions whose working directory is exactly this (as `session/new` stored it:
    /// no normalising, no prefix match). Pass the same `cwd` with each page's `cursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Also the child sessions of subagents (`task` calls), which are left out otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_children: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionListResult {
    pub sessions: Vec<SessionSummary>,
    /// Present when more sessions follow: the `cursor` of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionSummary {
    pub session_id: String,
    pub title: Option<String>,
    pub cwd: String,
    pub model: String,
    pub created_at: String,
    pub updated_at: String,
    pub message_count: u64,
    pub running: bool,
    /// The running turn waits for an answer to an `approval_request` (still `running`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub waiting: bool,
    /// Set by `session/load` while a turn runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    /// The session's sandbox, as its turns will run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SessionSandbox>,
    /// A subagent's session: the session whose `task` call made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<String>,
    /// A subagent's session: the id of that `task` call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_tool_call_id: Option<String>,
    /// The session's permission mode (`session/set_mode`); `default` from older daemons.
    #[serde(default)]
    pub mode: super::PermissionMode,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionIdParams {
    pub session_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoadParams {
    pub session_id: String,
    /// Send the stored history as `session/update` events before answering.
    #[serde(default)]
    pub replay: bool,
    /// MCP servers for the session while it is in memory, as in `session/new`; ignored if
    /// the session is in memory with servers of its own already.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<SessionMcpServer>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessagesParams {
    pub session_id: String,
    /// 1 to 1000; 100 if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
    /// Only messages with an id below this one (the page before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<i64>,
    /// Also the messages a `session/rewind` hid (each marked `hidden`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_hidden: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MessagePage {
    pub messages: Vec<Message>,
    pub total: u64,
    /// The page stopped short of `limit` at its byte budget, and older messages remain:
    /// page on with `before` = the first message's id.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub byte_limited: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RenameParams {
    pub session_id: String,
    /// The new title; `null` or blank clears it. Required (`deserialize_with` turns off
    /// serde's reading of a missing `Option` as `None`), so a forgotten member never
    /// clears a title by accident.
    #[serde(deserialize_with = "Option::deserialize")]
    pub title: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeleteResult {
    pub deleted: bool,
}

/// What `session/close` did: `false` when the connection was not attached to the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CloseResult {
    pub closed: bool,
}

/// What `session/compact` did: how many messages the new summary folds (0: nothing was
/// old enough to fold, and no summary was written).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CompactResult {
    pub messages_folded: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// What the summary's model calls used (absent when none was made). No turn holds
    /// them, so `session/usage`, which sums the session's turns, does not count them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<super::UsageTotals>,
}

/// `session/set_model` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetModelParams {
    pub session_id: String,
    /// Not blank; at most 256 bytes (as `session/new`'s `model`).
    pub model: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SetModelResult {
    /// The session's model from now on.
    pub model: String,
    /// The model it had before.
    pub previous: String,
}

/// `session/resolve` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResolveParams {
    /// At least [`MIN_ID_PREFIX`] characters of a session id (a whole id resolves to itself).
    pub prefix: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ResolveResult {
    pub session_id: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn params_refuse_unknown_members() {
        let e = SessionIdParams::deserialize(json!({"sessionId": "s", "x": 1})).unwrap_err();
        assert!(e.to_string().contains("unknown field"), "{e}");
    }
}

//! The daemon's requests to a client, in a turn the client prompted: `elicitation/create`
//! (the agent's `ask_user`) and the client's file system, `fs/read_text_file` and
//! `fs/write_text_file` (an editor's unsaved buffers; ACP's shape).

use super::Empty;
use serde::{Deserialize, Serialize};

method!(
    /// Daemon → client: asks the person at the client a question (MCP's shape).
    ElicitationCreate,
    "elicitation/create",
    crate::ElicitationRequest,
    crate::ElicitationResponse
);
method!(
    /// Daemon → client: a text file as the client has it (an editor's unsaved buffer), for
    /// `read_file` and `edit_file` in a turn the client prompted; ACP's shape.
    FsReadTextFile, "fs/read_text_file", FsReadTextFileParams, FsReadTextFileResult
);
method!(
    /// Daemon → client: writes a text file through the client (an editor's buffer), for
    /// `write_file` and `edit_file` in a turn the client prompted; ACP's shape.
    FsWriteTextFile, "fs/write_text_file", FsWriteTextFileParams, Empty
);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FsReadTextFileParams {
    pub session_id: String,
    /// Absolute.
    pub path: String,
    /// The first line to read, 1-based; from the start if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// At most this many lines; to the end if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FsReadTextFileResult {
    pub content: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FsWriteTextFileParams {
    pub session_id: String,
    /// Absolute.
    pub path: String,
    pub content: String,
}

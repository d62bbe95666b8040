//! `mcp/servers` and `mcp/tools`: the MCP servers, their states and their tools.

use serde::{Deserialize, Serialize};
use serde_json::Value;

method!(
    /// The MCP servers and their states; with `wait`, once none is starting or restarting.
    McpServers, "mcp/servers", McpServersParams, McpServersResult
);
method!(
    /// The tools of one MCP server, as the model is offered them.
    McpTools, "mcp/tools", McpToolsParams, McpToolsResult
);

/// One MCP server in `status` and `mcp/servers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatus {
    pub name: String,
    /// `starting`, `ready`, `restarting`, `failed` or `stopped`.
    pub state: String,
    /// How many tools it offers now.
    pub tools: u64,
    /// Its last error (kept after it recovered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpServersParams {
    /// Answer once no server is starting or restarting (each start is bounded by its
    /// server's `timeout_secs`).
    #[serde(default)]
    pub wait: bool,
    /// A session's own servers instead of the daemon's; the caller must be attached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpServersResult {
    pub servers: Vec<McpServerStatus>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpToolsParams {
    /// The server's name.
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpToolsResult {
    pub tools: Vec<McpToolInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct McpToolInfo {
    /// As the model sees it: `<server>__<tool>`.
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

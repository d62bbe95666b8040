//! The connection's and the daemon's own methods: `initialize` (the handshake, with the
//! capabilities each side declares), `status` and `shutdown`.

use super::mcp::McpServerStatus;
use super::{Empty, NoParams};
use serde::{Deserialize, Serialize};
use serde_json::Value;

method!(
    /// The handshake; the first request on every connection.
    Initialize, "initialize", InitializeParams, InitializeResult
);
method!(
    /// The daemon's state, cheap enough to poll.
    Status, "status", NoParams, StatusResult
);
method!(
    /// Stops the daemon as SIGTERM does.
    Shutdown, "shutdown", NoParams, Empty
);

// ---- initialize -------------------------------------------------------------------------

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// Must be an integer; kept as sent so that a wrong type gets a precise error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<ClientInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<ClientCapabilities>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClientInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClientCapabilities {
    /// Present (`{}`) if the client answers `elicitation/create`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<serde_json::Map<String, Value>>,
    /// The file operations the client does for the daemon (`fs/read_text_file`,
    /// `fs/write_text_file`); absent: none, the tools use the disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<FsCapabilities>,
}

/// `capabilities.fs` of `initialize`: which `fs/*` requests the client answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FsCapabilities {
    #[serde(default)]
    pub read_text_file: bool,
    #[serde(default)]
    pub write_text_file: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: i64,
    pub server_version: String,
    pub pid: u32,
    #[serde(default)]
    pub capabilities: ServerCapabilities,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ServerCapabilities {
    #[serde(default)]
    pub methods: Vec<String>,
    #[serde(default)]
    pub events: Vec<String>,
}

// ---- status -----------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StatusResult {
    pub server_version: String,
    pub protocol_version: i64,
    pub pid: u32,
    pub uptime_ms: u64,
    pub endpoint: String,
    pub data_dir: String,
    pub ephemeral: bool,
    pub clients: u64,
    pub sessions: SessionCounts,
    /// The daemon's MCP servers (`[[mcp_servers]]`), in config order.
    #[serde(default)]
    pub mcp_servers: Vec<McpServerStatus>,
    /// The HTTP/WS gateway: `null` when it is off, `{url, tls}` when it serves, `{error}`
    /// when it could not start.
    #[serde(default)]
    pub gateway: Option<GatewayStatus>,
    /// The configured provider (`[provider]`): its kind and default model.
    #[serde(default)]
    pub provider: Option<ProviderStatus>,
    /// The sandbox of tools' commands: the configured policy and what enforces it here.
    #[serde(default)]
    pub sandbox: Option<super::sandbox::SandboxStatus>,
}

/// `status.provider`: what answers the sessions that name no model of their own, and how
/// its last call went. Never a key; the base URL without any credentials it carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProviderStatus {
    /// `openai` or `anthropic`.
    pub kind: String,
    /// `provider.model`.
    pub model: String,
    /// `provider.base_url`, `user:pass@` removed.
    #[serde(default)]
    pub base_url: String,
    /// The last model call since the daemon started; absent before the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_call: Option<ProviderCall>,
}

/// `status.provider.lastCall`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProviderCall {
    /// Whether the provider accepted the call.
    pub ok: bool,
    /// When it was made, RFC 3339.
    pub at: String,
    /// Why it failed, as a turn's `-32004` says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `status.gateway` when the gateway is configured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum GatewayStatus {
    /// Serving at `url` (`https://` with `tls`).
    Up { url: String, tls: bool },
    /// It could not start (the address is taken, a TLS file is unreadable, ...); the
    /// socket serves regardless.
    Down { error: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionCounts {
    pub total: u64,
    pub running: u64,
    /// Sessions held in memory: attached to a connection, running, or read a moment ago
    /// (0 from daemons before it).
    #[serde(default)]
    pub loaded: u64,
}

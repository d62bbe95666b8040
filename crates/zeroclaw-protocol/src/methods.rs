//! Every method of the protocol as a type: its name, its params and its result.
//!
//! Params structs refuse unknown members (`deny_unknown_fields`) so a misspelt member is an
//! `invalid params` error rather than silently ignored; `initialize` accepts any, so newer
//! clients can declare capabilities an older daemon does not know.

use crate::Method;
use crate::history::Message;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Declares a method type: `method!(Type, "name", Params, Result)`.
macro_rules! method {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $params:ty, $result:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub enum $ty {}
        impl Method for $ty {
            const NAME: &'static str = $name;
            type Params = $params;
            type Result = $result;
        }
    };
}

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
    /// Runs a turn; answers when it ends.
    SessionPrompt, "session/prompt", PromptParams, PromptResult
);
method!(
    /// Cancels the running turn, if any.
    SessionCancel, "session/cancel", SessionIdParams, CancelResult
);
method!(
    /// Answers an `approval_request`.
    SessionApprove, "session/approve", ApproveParams, Empty
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
    /// The MCP servers and their states; with `wait`, once none is starting or restarting.
    McpServers, "mcp/servers", McpServersParams, McpServersResult
);
method!(
    /// The tools of one MCP server, as the model is offered them.
    McpTools, "mcp/tools", McpToolsParams, McpToolsResult
);
method!(
    /// Mints a gateway token (socket only); the secret is in the answer, once.
    TokenCreate, "token/create", TokenCreateParams, TokenCreated
);
method!(
    /// The gateway tokens, without their secrets (socket only).
    TokenList, "token/list", NoParams, TokenListResult
);
method!(
    /// Revokes a gateway token by name, ending its connections (socket only).
    TokenRevoke, "token/revoke", TokenRevokeParams, TokenRevokeResult
);
method!(
    /// A one-time dashboard login link (socket only).
    DashboardLink, "dashboard/link", NoParams, DashboardLinkResult
);
method!(
    /// Unattended runs (webhooks and schedules), newest first.
    RunsList, "runs/list", RunsListParams, RunsListResult
);
method!(
    /// One unattended run by id.
    RunsGet, "runs/get", RunsGetParams, Run
);
method!(
    /// The `[[schedules]]`, each with its next run.
    SchedulesList, "schedules/list", NoParams, SchedulesListResult
);
method!(
    /// Runs a schedule now: its run is recorded and queued; the answer is the run.
    ScheduleRun, "schedule/run", ScheduleRunParams, Run
);
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
method!(
    /// Sets the model of a session's turns (persisted); a running turn keeps its own.
    SessionSetModel, "session/set_model", SetModelParams, SetModelResult
);

/// The methods a client may call, in the order `initialize` advertises them.
pub const CLIENT_METHODS: &[&str] = &[
    Initialize::NAME,
    Status::NAME,
    Shutdown::NAME,
    SessionNew::NAME,
    SessionList::NAME,
    SessionLoad::NAME,
    SessionMessages::NAME,
    SessionPrompt::NAME,
    SessionCancel::NAME,
    SessionApprove::NAME,
    SessionRename::NAME,
    SessionDelete::NAME,
    McpServers::NAME,
    McpTools::NAME,
    TokenCreate::NAME,
    TokenList::NAME,
    TokenRevoke::NAME,
    DashboardLink::NAME,
    RunsList::NAME,
    RunsGet::NAME,
    SchedulesList::NAME,
    ScheduleRun::NAME,
    SessionSetModel::NAME,
];

/// Params of a method that takes none: any object (or none at all) is accepted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoParams;

impl Serialize for NoParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Empty {}.serialize(s)
    }
}

impl<'de> Deserialize<'de> for NoParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| NoParams)
    }
}

/// `{}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Empty {}

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
}

/// `status.provider`: what answers the sessions that name no model of their own. The
/// base URL is left out (it may carry credentials).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProviderStatus {
    /// `openai` or `anthropic`.
    pub kind: String,
    /// `provider.model`.
    pub model: String,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionCounts {
    pub total: u64,
    pub running: u64,
}

// ---- sessions ---------------------------------------------------------------------------

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
    /// Set by `session/load` while a turn runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
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
pub struct PromptParams {
    pub session_id: String,
    pub prompt: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PromptResult {
    pub turn_id: String,
    pub stop_reason: StopReason,
    /// The answer's text, cut (at a character boundary) to a quarter of the frame cap when
    /// longer; the whole of it is in the events and the history.
    pub text: String,
    /// `text` was cut.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub text_truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// `session/cancel`, a deleted session or a stopping daemon ended it.
    Cancelled,
    /// It reached `agent.max_steps` model calls.
    MaxTurns,
    /// It failed (only in `turn_complete`: `session/prompt` answers an error instead).
    Error,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::Cancelled => "cancelled",
            StopReason::MaxTurns => "max_turns",
            StopReason::Error => "error",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CancelResult {
    pub cancelled: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApproveParams {
    pub session_id: String,
    pub request_id: String,
    pub decision: Decision,
}

/// An answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Decision {
    AllowOnce,
    AllowAlways,
    Reject,
}

impl Decision {
    /// Every decision, in the order an `approval_request` offers them.
    pub const ALL: [Decision; 3] = [Decision::AllowOnce, Decision::AllowAlways, Decision::Reject];

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::AllowOnce => "allow_once",
            Decision::AllowAlways => "allow_always",
            Decision::Reject => "reject",
        }
    }
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

/// What `session/compact` did: how many messages the new summary folds (0: nothing was
/// old enough to fold, and no summary was written).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CompactResult {
    pub messages_folded: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
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

// ---- gateway tokens ---------------------------------------------------------------------

/// What a gateway token may do. Each scope includes the ones before it.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// `status`, the session list, a session's messages and live events.
    Read,
    /// `read`, plus creating, prompting, cancelling, approving, answering, deleting.
    #[default]
    Operate,
    /// `operate`, plus `shutdown`.
    Admin,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Read, Scope::Operate, Scope::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Operate => "operate",
            Scope::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Scope::ALL.into_iter().find(|scope| scope.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokenCreateParams {
    /// Unique among the tokens; letters, digits, `-`, `_`, `.`; at most 64 characters.
    pub name: String,
    /// `operate` if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Seconds until it expires; it never does if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TokenCreated {
    pub name: String,
    /// The secret: shown once, stored only as its SHA-256.
    pub token: String,
    pub scope: Scope,
    /// RFC 3339; `null` for a token that never expires.
    pub expires_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TokenListResult {
    pub tokens: Vec<TokenInfo>,
}

/// One token or dashboard session, as `token/list` shows it: never its secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TokenInfo {
    pub name: String,
    /// `token` (minted by `token/create`) or `dashboard` (a browser's dashboard session).
    #[serde(default)]
    pub kind: TokenKind,
    pub scope: Scope,
    pub created_at: String,
    pub last_used_at: Option<String>,
    /// A token's expiry (`null`: never); a dashboard session's is when it ends if unused
    /// from now on: the earlier of its idle and absolute limits.
    pub expires_at: Option<String>,
}

/// What a `token/list` entry is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum TokenKind {
    /// A bearer token, minted over the socket.
    #[default]
    Token,
    /// A dashboard session: a browser's cookie and proof, never a bearer token.
    Dashboard,
}

impl TokenKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenKind::Token => "token",
            TokenKind::Dashboard => "dashboard",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokenRevokeParams {
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenRevokeResult {
    pub revoked: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DashboardLinkResult {
    /// `http(s)://host:port/login#code=…`: the code is in the fragment, never sent in a
    /// request line.
    pub url: String,
    pub expires_at: String,
}

/// An unattended run (docs/unattended.md): a webhook delivery or a schedule's tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub run_id: String,
    /// `webhook` or `schedule`.
    pub source: String,
    /// The hook's or schedule's name.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    /// `queued`, `running`, `done`, `failed`, `cancelled` or `skipped`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunsListParams {
    /// `webhook` or `schedule`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Only the runs of this hook or schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// 1 to 1000; 50 if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunsListResult {
    pub runs: Vec<Run>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunsGetParams {
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScheduleRunParams {
    pub name: String,
}

/// One `[[schedules]]` entry as `schedules/list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ScheduleInfo {
    pub name: String,
    pub cron: String,
    pub cwd: String,
    /// `new` or `shared`.
    pub session: String,
    pub catch_up: bool,
    pub queue: usize,
    /// RFC 3339 in the daemon's local time zone; absent if the expression never matches again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SchedulesListResult {
    pub schedules: Vec<ScheduleInfo>,
}

// ---- the client's file system (daemon → client) ---------------------------------------

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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn no_params_accepts_anything_and_sends_an_empty_object() {
        for v in [json!({}), json!({"x": 1}), json!([]), json!(null)] {
            assert_eq!(NoParams::deserialize(&v).unwrap(), NoParams);
        }
        assert_eq!(serde_json::to_value(NoParams).unwrap(), json!({}));
    }

    #[test]
    fn params_refuse_unknown_members() {
        let e = SessionIdParams::deserialize(json!({"sessionId": "s", "x": 1})).unwrap_err();
        assert!(e.to_string().contains("unknown field"), "{e}");
    }

    #[test]
    fn decisions_read_as_their_wire_names() {
        for d in Decision::ALL {
            assert_eq!(serde_json::to_value(d).unwrap(), json!(d.as_str()));
        }
        for s in [
            StopReason::EndTurn,
            StopReason::Cancelled,
            StopReason::MaxTurns,
            StopReason::Error,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), json!(s.as_str()));
        }
    }
}

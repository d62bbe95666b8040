//! The protocol's types, as the client library's users name them. Every wire type comes
//! from `zeroclaw-protocol`; nothing here is a copy.

pub use zeroclaw_protocol::events::ApprovalPreview;
pub use zeroclaw_protocol::{
    ClientCapabilities, ClientInfo, Decision, ElicitationAction, ElicitationRequest,
    ElicitationResponse, InitializeResult as ServerInfo, Message, MessageKind, MessagePage,
    NewSessionParams as NewSession, PromptResult, SandboxEscape, SandboxMode, SandboxStatus,
    ServerCapabilities, SessionCounts, SessionInfo, SessionSandbox, SessionSummary,
    StatusResult as Status, StopReason, Usage,
};

/// One `session/update`, owned.
pub type SessionUpdate = zeroclaw_protocol::SessionUpdate<'static>;
/// What a `session/update` says happened, owned.
pub type Update = zeroclaw_protocol::Update<'static>;

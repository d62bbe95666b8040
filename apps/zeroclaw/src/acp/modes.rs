//! Our permission modes as ACP's session modes: `modes` (`currentModeId`,
//! `availableModes`) in the `session/new` and `session/load` answers, the editor's
//! `session/set_mode` as ours (our `mode_changed` is ACP's `current_mode_update`: `mapping.rs`)
//! (docs/acp.md, "Session modes"). A mode's ACP id is its name on our wire.

use agent_client_protocol::Error as AcpError;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    SessionMode, SessionModeState, SetSessionModeRequest, SetSessionModeResponse,
};
use zeroclaw_client::Client;
use zeroclaw_client::protocol::methods::PermissionMode;

/// The editor's name and description of each mode.
pub fn describe(mode: PermissionMode) -> (&'static str, &'static str) {
    match mode {
        PermissionMode::Default => (
            "Default",
            "Ask before edits and commands, as [approvals] says",
        ),
        PermissionMode::AcceptEdits => (
            "Accept edits",
            "File edits inside the workspace run without asking; commands still ask",
        ),
        PermissionMode::Plan => (
            "Plan",
            "Read-only: look and plan, change nothing; the plan is offered for approval",
        ),
        PermissionMode::Auto => (
            "Auto",
            "Every tool runs without asking, confined by the sandbox",
        ),
    }
}

/// The `modes` of a `session/new` or `session/load` answer.
pub fn state(current: PermissionMode) -> SessionModeState {
    let available = PermissionMode::ALL
        .into_iter()
        .map(|mode| {
            let (name, description) = describe(mode);
            SessionMode::new(mode.as_str(), name).description(description.to_owned())
        })
        .collect();
    SessionModeState::new(current.as_str(), available)
}

/// The editor's `session/set_mode`: ours; an unknown mode id is `-32602` naming the modes.
pub async fn set(
    client: &Client,
    request: SetSessionModeRequest,
    responder: Responder<SetSessionModeResponse>,
) -> Result<(), AcpError> {
    let id = request.mode_id.0.to_string();
    let Some(mode) = PermissionMode::parse(&id) else {
        let known: Vec<&str> = PermissionMode::ALL.iter().map(|m| m.as_str()).collect();
        return responder.respond_with_error(AcpError::invalid_params().data(format!(
            "no mode {id:?}; the modes are {}",
            known.join(", ")
        )));
    };
    let session_id = request.session_id.0.to_string();
    match client.session_set_mode(&session_id, mode).await {
        Ok(_) => responder.respond(SetSessionModeResponse::new()),
        Err(e) => responder.respond_with_error(super::mapping::call_error(&e)),
    }
}

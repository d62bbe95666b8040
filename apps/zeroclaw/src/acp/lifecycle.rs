//! ACP's session lifecycle beyond new/load: `session/resume` (reattach without the
//! history), `session/close` (detach; the daemon lets the session leave memory, its own MCP
//! servers stopped, once nobody holds it and no turn runs) and `session/delete`.

use super::{Bridge, config, mapping, mcp_servers, modes};
use agent_client_protocol::Client as Editor;
use agent_client_protocol::Error as AcpError;
use agent_client_protocol::v1::schema::{
    CloseSessionRequest, CloseSessionResponse, DeleteSessionRequest, DeleteSessionResponse,
    ResumeSessionRequest, ResumeSessionResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zeroclaw_client::protocol::methods as m;

impl Bridge {
    /// `session/resume`: our `session/load` without replay: the editor keeps what it shows
    /// and gets the events from now on (a turn running now included).
    pub(super) async fn resume_session(
        self: &Arc<Self>,
        request: ResumeSessionRequest,
        responder: Responder<ResumeSessionResponse>,
        cx: ConnectionTo<Editor>,
    ) -> Result<(), AcpError> {
        let client = match self.daemon() {
            Ok(client) => client,
            Err(e) => return responder.respond_with_error(e),
        };
        let mcp_servers = match mcp_servers(&request.mcp_servers) {
            Ok(servers) => servers,
            Err(e) => return responder.respond_with_error(e),
        };
        let session_id = request.session_id.0.to_string();
        let events = client.subscribe(&session_id);
        let params = m::LoadParams {
            session_id: session_id.clone(),
            replay: false,
            mcp_servers,
        };
        let summary = match client.request::<m::SessionLoad>(&params).await {
            Ok(summary) => summary,
            Err(e) => return responder.respond_with_error(mapping::call_error(&e)),
        };
        if Path::new(&summary.cwd) != request.cwd {
            tracing::info!(session = %session_id, stored = %summary.cwd, asked = %request.cwd.display(), "session/resume: the session keeps its stored working directory");
        }
        let current = config::current(&client, &summary.model, summary.mode).await;
        let options = config::options(&current);
        match self.link(&session_id) {
            Some(link) => *config::lock(&link.config) = current,
            None => {
                self.attach(
                    &session_id,
                    PathBuf::from(&summary.cwd),
                    events,
                    &cx,
                    current,
                );
            }
        }
        let answered = responder.respond(
            ResumeSessionResponse::new()
                .modes(modes::state(summary.mode))
                .config_options(options),
        );
        super::commands::announce(&client, &session_id, &cx).await;
        answered
    }

    /// `session/close`: the editor no longer follows the session. Our `session/close`
    /// detaches the connection (a turn running goes on in the daemon); the pump stops.
    pub(super) async fn close_session(
        &self,
        request: CloseSessionRequest,
        responder: Responder<CloseSessionResponse>,
    ) -> Result<(), AcpError> {
        let client = match self.daemon() {
            Ok(client) => client,
            Err(e) => return responder.respond_with_error(e),
        };
        let session_id = request.session_id.0.to_string();
        let link = self
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&session_id);
        if link.is_none() {
            return responder.respond_with_error(
                AcpError::invalid_params().data(format!("session {session_id} is not open here")),
            );
        }
        match client.session_close(&session_id).await {
            Ok(_) => responder.respond(CloseSessionResponse::new()),
            Err(e) => responder.respond_with_error(mapping::call_error(&e)),
        }
    }

    /// `session/delete`: ours (a running turn is cancelled first); the editor's link to it,
    /// if open, goes. Deleting a session that does not exist is not an error, as ours.
    pub(super) async fn delete_session(
        &self,
        request: DeleteSessionRequest,
        responder: Responder<DeleteSessionResponse>,
    ) -> Result<(), AcpError> {
        let client = match self.daemon() {
            Ok(client) => client,
            Err(e) => return responder.respond_with_error(e),
        };
        let session_id = request.session_id.0.to_string();
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&session_id);
        match client.session_delete(&session_id).await {
            Ok(_) => responder.respond(DeleteSessionResponse::new()),
            Err(e) => responder.respond_with_error(mapping::call_error(&e)),
        }
    }
}

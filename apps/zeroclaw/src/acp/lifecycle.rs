//! ACP's session lifecycle beyond opening one (`open.rs`): `session/close` (this editor's
//! prompt cancelled, then detached: the daemon lets the session leave memory, its own MCP
//! servers stopped, once nobody holds it and no turn runs), `session/delete` and
//! `session/list`.

use super::{Bridge, mapping};
use agent_client_protocol::Error as AcpError;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    CloseSessionRequest, CloseSessionResponse, DeleteSessionRequest, DeleteSessionResponse,
    ListSessionsRequest, ListSessionsResponse, SessionInfo,
};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use zeroclaw_client::protocol::methods as m;

/// How long `session/close` waits for the prompt it cancelled to be answered before it
/// detaches anyway (the turn then ends in the daemon, as when the editor leaves).
const CLOSE_WAIT: Duration = Duration::from_secs(10);

impl Bridge {
    /// `session/close`: the editor no longer follows the session. ACP says close cancels
    /// the work going on, as `session/cancel` does: a prompt of this editor's still running
    /// there is cancelled and answered (`cancelled`) first. Then our `session/close` detaches
    /// the connection and the pump stops. A turn another client started goes on. Answered
    /// from a task: the prompt's permission requests are settled meanwhile.
    pub(super) fn close_session(
        self: &Arc<Self>,
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
        let Some(link) = link else {
            return responder.respond_with_error(
                AcpError::invalid_params().data(format!("session {session_id} is not open here")),
            );
        };
        self.openings.spawn(async move {
            if link.prompting() {
                let ticket = link.cancels.begin();
                if let Err(e) = client.session_cancel(&session_id).await {
                    tracing::warn!(session = %session_id, "session/cancel for session/close failed: {e}");
                }
                drop(ticket);
                if tokio::time::timeout(CLOSE_WAIT, link.prompts_answered())
                    .await
                    .is_err()
                {
                    tracing::warn!(session = %session_id, "session/close: the cancelled prompt was not answered in time; detaching");
                }
            }
            drop(link);
            let closed = client
                .session_close(&session_id)
                .await
                .map(|_| CloseSessionResponse::new())
                .map_err(|e| mapping::call_error(&e));
            if let Err(e) = responder.respond_with_result(closed) {
                tracing::debug!("session/close's answer could not be sent: {e}");
            }
        });
        Ok(())
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

    /// `session/list`: ours, a page at a time, `cwd` passed on (the daemon filters before it
    /// pages, so every page but the last is full).
    pub(super) async fn list_sessions(
        &self,
        request: ListSessionsRequest,
        responder: Responder<ListSessionsResponse>,
    ) -> Result<(), AcpError> {
        let client = match self.daemon() {
            Ok(client) => client,
            Err(e) => return responder.respond_with_error(e),
        };
        let params = m::ListParams {
            cursor: request.cursor,
            cwd: request.cwd.map(|cwd| cwd.display().to_string()),
            ..Default::default()
        };
        let page = match client.session_list_page(params).await {
            Ok(page) => page,
            Err(e) => return responder.respond_with_error(mapping::call_error(&e)),
        };
        let sessions = page
            .sessions
            .into_iter()
            .map(|s| {
                SessionInfo::new(s.session_id, PathBuf::from(s.cwd))
                    .title(s.title)
                    .updated_at(s.updated_at)
            })
            .collect();
        responder.respond(ListSessionsResponse::new(sessions).next_cursor(page.next_cursor))
    }
}

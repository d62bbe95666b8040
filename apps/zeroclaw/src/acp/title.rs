//! A session's title for the editor: `session_info_update {title, updatedAt}` when the
//! editor opens a session that has one (a load, a resume, a fork: `fork of …`), and ACP's
//! (unstable) `session/set_title` as our `session/rename`, followed by the same update. The
//! daemon sends no event when another client renames a session: the editor sees that title
//! in its next `session/list`.

use super::{Bridge, mapping};
use agent_client_protocol::Client as Editor;
use agent_client_protocol::Error as AcpError;
use agent_client_protocol::v1::schema::{
    SessionInfoUpdate, SessionNotification, SessionUpdate as AcpUpdate, SetSessionTitleRequest,
    SetSessionTitleResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use zeroclaw_client::protocol::codes;
use zeroclaw_rpc::CallError;

/// Tells the editor the session's title (and when it last changed), if it has one.
pub fn announce(
    editor: &ConnectionTo<Editor>,
    session_id: &str,
    title: Option<String>,
    updated_at: Option<String>,
) {
    let Some(title) = title else { return };
    let mut info = SessionInfoUpdate::new().title(title);
    if let Some(at) = updated_at {
        info = info.updated_at(at);
    }
    let update = AcpUpdate::SessionInfoUpdate(info);
    if let Err(e) =
        editor.send_notification(SessionNotification::new(session_id.to_owned(), update))
    {
        tracing::debug!(session = %session_id, "session_info_update was not sent: {e}");
    }
}

impl Bridge {
    /// `session/set_title`: our `session/rename` of any stored session (open here or not).
    /// The title is trimmed as the daemon stores it, and answered as stored; an empty one
    /// is `-32602` (ours would clear the title; ACP's never does), a session that does not
    /// exist `-32002` as ACP asks. A session open here also gets `session_info_update`.
    pub(super) async fn set_title(
        &self,
        request: SetSessionTitleRequest,
        responder: Responder<SetSessionTitleResponse>,
        cx: ConnectionTo<Editor>,
    ) -> Result<(), AcpError> {
        let client = match self.daemon() {
            Ok(client) => client,
            Err(e) => return responder.respond_with_error(e),
        };
        let session_id = request.session_id.0.to_string();
        let title = request.title.trim().to_owned();
        if title.is_empty() {
            return responder.respond_with_error(
                AcpError::invalid_params().data("the title is empty: send some text"),
            );
        }
        match client.session_rename(&session_id, Some(&title)).await {
            Ok(()) => {}
            Err(CallError::Rpc(e)) if e.code == codes::SESSION_NOT_FOUND => {
                // ACP's "resource not found".
                let error = AcpError::new(-32002, e.message)
                    .data(serde_json::json!({ "sessionId": session_id }));
                return responder.respond_with_error(error);
            }
            Err(e) => return responder.respond_with_error(mapping::call_error(&e)),
        }
        let answered = responder.respond(SetSessionTitleResponse::new(title.clone()));
        if self.link(&session_id).is_some() {
            announce(&cx, &session_id, Some(title), None);
        }
        answered
    }
}

//! The daemon's requests to this connection, passed on to the editor: `elicitation/create`
//! (the agent's `ask_user`) and `fs/read_text_file` / `fs/write_text_file` (the file
//! tools), each only when the editor declared it in `initialize`.

use super::{Bridge, EditorCaps, mapping};
use agent_client_protocol::Client as Editor;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CreateElicitationRequest, ReadTextFileRequest, WriteTextFileRequest,
};
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use zeroclaw_client::protocol::methods as m;
use zeroclaw_client::{
    ElicitationHandler, ElicitationRequest, ElicitationResponse, FsHandler, FsOptions,
};
use zeroclaw_rpc::BoxFuture;

/// The handler that asks the editor our questions (ACP `elicitation/create`, form mode).
pub fn elicitation(editor: ConnectionTo<Editor>) -> Arc<dyn ElicitationHandler> {
    Arc::new(Elicitation { editor })
}

struct Elicitation {
    editor: ConnectionTo<Editor>,
}

impl ElicitationHandler for Elicitation {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<ElicitationResponse> {
        let editor = self.editor.clone();
        Box::pin(async move {
            // Ours is MCP's shape, and so is ACP's form mode: the members carry over.
            let acp = serde_json::json!({
                "mode": "form",
                "sessionId": request.session_id,
                "message": request.message,
                "requestedSchema": request.requested_schema.unwrap_or_else(
                    || serde_json::json!({"type": "object", "properties": {}})
                ),
            });
            let acp: CreateElicitationRequest = match serde_json::from_value(acp) {
                Ok(acp) => acp,
                Err(e) => {
                    tracing::warn!("a question the editor's form cannot carry: {e}");
                    return ElicitationResponse::decline();
                }
            };
            match editor.send_request(acp).block_task().await {
                Ok(answer) => serde_json::to_value(answer)
                    .and_then(serde_json::from_value)
                    .unwrap_or_else(|e| {
                        tracing::warn!("an elicitation answer we cannot read: {e}");
                        ElicitationResponse::cancel()
                    }),
                Err(e) => {
                    tracing::warn!("the editor's elicitation failed: {e}");
                    ElicitationResponse::cancel()
                }
            }
        })
    }
}

/// The handler that does the daemon's file operations in the editor, declared for the
/// operations the editor declared; `None` if it declared neither.
pub fn fs(
    bridge: Arc<Bridge>,
    editor: ConnectionTo<Editor>,
    caps: EditorCaps,
) -> Option<FsOptions> {
    (caps.read_text_file || caps.write_text_file).then(|| FsOptions {
        read_text_file: caps.read_text_file,
        write_text_file: caps.write_text_file,
        handler: Arc::new(EditorFiles {
            // Weak: the bridge owns the daemon connection, which owns this handler.
            bridge: Arc::downgrade(&bridge),
            editor,
        }),
    })
}

struct EditorFiles {
    bridge: Weak<Bridge>,
    editor: ConnectionTo<Editor>,
}

impl EditorFiles {
    /// The path, absolute against the session's cwd (ACP's paths are absolute).
    fn path(&self, session_id: &str, path: &str) -> PathBuf {
        let cwd = self
            .bridge
            .upgrade()
            .and_then(|bridge| bridge.cwd_of(session_id))
            .unwrap_or_default();
        mapping::absolute(&cwd, path)
    }
}

impl FsHandler for EditorFiles {
    fn read_text_file(&self, params: m::FsReadTextFileParams) -> BoxFuture<Result<String, String>> {
        let request = ReadTextFileRequest::new(
            params.session_id.clone(),
            self.path(&params.session_id, &params.path),
        )
        .line(params.line)
        .limit(params.limit);
        let sent = self.editor.send_request(request);
        Box::pin(async move {
            sent.block_task()
                .await
                .map(|answer| answer.content)
                .map_err(|e| e.to_string())
        })
    }

    fn write_text_file(&self, params: m::FsWriteTextFileParams) -> BoxFuture<Result<(), String>> {
        let request = WriteTextFileRequest::new(
            params.session_id.clone(),
            self.path(&params.session_id, &params.path),
            params.content,
        );
        let sent = self.editor.send_request(request);
        Box::pin(async move { sent.block_task().await.map(drop).map_err(|e| e.to_string()) })
    }
}

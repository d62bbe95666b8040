//! Opening a session for the editor: `session/new`, `session/load` (with the history),
//! `session/resume` (without) and `session/fork`. Each is answered by a task of its own, so
//! the editor's `$/cancel_request` of it is read while the daemon works (a `SessionStart`
//! hook, a long replay). A cancelled one is answered `-32800` at once; what the daemon then
//! did for it is undone when its call finishes: a session made for it (new, fork) is deleted,
//! since the editor never learnt its id; a session it attached (load, resume) is detached,
//! unless the editor has it open here by then.

use super::{Bridge, commands, config, mapping, mcp_servers, modes};
use agent_client_protocol::v1::schema::{
    ForkSessionRequest, ForkSessionResponse, LoadSessionRequest, LoadSessionResponse, McpServer,
    NewSessionRequest, NewSessionResponse, ResumeSessionRequest, ResumeSessionResponse,
    SessionConfigOption, SessionModeState,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client as Editor, Error as AcpError, RequestCancellation};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zeroclaw_client::{CallResult, Client, NewSession, protocol::methods as m};

/// What undoes a cut-off opening once the daemon answered it.
#[derive(Clone, Copy)]
enum Undo {
    /// The session was made for the request: delete it.
    Delete,
    /// The request attached the session: detach it, unless the editor opened it meanwhile.
    Detach,
}

impl Bridge {
    /// `session/new`: ours, with the editor's MCP servers; the editor is attached to it.
    pub(super) fn new_session(
        self: &Arc<Self>,
        request: NewSessionRequest,
        responder: Responder<NewSessionResponse>,
        cx: ConnectionTo<Editor>,
    ) -> Result<(), AcpError> {
        let (client, mcp_servers) = match self.daemon_and_servers(&request.mcp_servers) {
            Ok(parts) => parts,
            Err(e) => return responder.respond_with_error(e),
        };
        let params = NewSession {
            cwd: Some(request.cwd.display().to_string()),
            mcp_servers,
            ..NewSession::default()
        };
        let bridge = self.clone();
        let cancellation = responder.cancellation();
        self.openings.spawn(async move {
            let call = {
                let client = client.clone();
                async move { client.session_new(params).await }
            };
            let info = match bridge
                .call_unless_cancelled(cancellation, call, |i| &i.session_id, Undo::Delete)
                .await
            {
                Ok(info) => info,
                Err(e) => return answer(responder, Err(e)),
            };
            bridge
                .open_made(&client, info, &cx, responder, |id, modes, options| {
                    NewSessionResponse::new(id)
                        .modes(modes)
                        .config_options(options)
                })
                .await;
        });
        Ok(())
    }

    /// ACP's (unstable) `session/fork`: our `session/fork` of the whole conversation, then,
    /// with `mcpServers`, our `session/load` of the fork without replay, which starts them for
    /// it as `session/new` does. The fork keeps the source's working directory (a different
    /// `cwd` is logged, as for a load); the editor is attached to the fork.
    pub(super) fn fork_session(
        self: &Arc<Self>,
        request: ForkSessionRequest,
        responder: Responder<ForkSessionResponse>,
        cx: ConnectionTo<Editor>,
    ) -> Result<(), AcpError> {
        let (client, mcp_servers) = match self.daemon_and_servers(&request.mcp_servers) {
            Ok(parts) => parts,
            Err(e) => return responder.respond_with_error(e),
        };
        let source = request.session_id.0.to_string();
        let bridge = self.clone();
        let cancellation = responder.cancellation();
        self.openings.spawn(async move {
            let call = {
                let client = client.clone();
                let source = source.clone();
                async move { fork_with_servers(&client, &source, mcp_servers).await }
            };
            let info = match bridge
                .call_unless_cancelled(cancellation, call, |i| &i.session_id, Undo::Delete)
                .await
            {
                Ok(info) => info,
                Err(e) => return answer(responder, Err(e)),
            };
            if Path::new(&info.cwd) != request.cwd {
                tracing::info!(session = %source, fork = %info.session_id, stored = %info.cwd, asked = %request.cwd.display(), "session/fork: the fork keeps the source's working directory");
            }
            bridge
                .open_made(&client, info, &cx, responder, |id, modes, options| {
                    ForkSessionResponse::new(id)
                        .modes(modes)
                        .config_options(options)
                })
                .await;
        });
        Ok(())
    }

    /// `session/load`: our `session/load` with replay; the history goes to the editor as
    /// `session/update`s before the answer.
    pub(super) fn load_session(
        self: &Arc<Self>,
        request: LoadSessionRequest,
        responder: Responder<LoadSessionResponse>,
        cx: ConnectionTo<Editor>,
    ) -> Result<(), AcpError> {
        let asked = Attach {
            session_id: request.session_id.0.to_string(),
            cwd: request.cwd,
            mcp_servers: request.mcp_servers,
            replay: true,
        };
        self.attach_asked(asked, responder, cx, |summary, options| {
            LoadSessionResponse::new()
                .modes(modes::state(summary.mode))
                .config_options(options)
        })
    }

    /// `session/resume`: our `session/load` without replay: the editor keeps what it shows
    /// and gets the events from now on (a turn running now included).
    pub(super) fn resume_session(
        self: &Arc<Self>,
        request: ResumeSessionRequest,
        responder: Responder<ResumeSessionResponse>,
        cx: ConnectionTo<Editor>,
    ) -> Result<(), AcpError> {
        let asked = Attach {
            session_id: request.session_id.0.to_string(),
            cwd: request.cwd,
            mcp_servers: request.mcp_servers,
            replay: false,
        };
        self.attach_asked(asked, responder, cx, |summary, options| {
            ResumeSessionResponse::new()
                .modes(modes::state(summary.mode))
                .config_options(options)
        })
    }

    /// A load or a resume: our `session/load`, then the session open here (its pump started,
    /// or kept if it was open already) and the answer `respond` makes once every event
    /// received before it was sent (a replay's).
    fn attach_asked<R: agent_client_protocol::JsonRpcResponse + Send + 'static>(
        self: &Arc<Self>,
        asked: Attach,
        responder: Responder<R>,
        cx: ConnectionTo<Editor>,
        respond: impl FnOnce(
            &m::SessionSummary,
            Vec<agent_client_protocol::v1::schema::SessionConfigOption>,
        ) -> R
        + Send
        + 'static,
    ) -> Result<(), AcpError> {
        let (client, mcp_servers) = match self.daemon_and_servers(&asked.mcp_servers) {
            Ok(parts) => parts,
            Err(e) => return responder.respond_with_error(e),
        };
        let session_id = asked.session_id;
        // Subscribed before the call: the replay arrives before its answer.
        let events = client.subscribe(&session_id);
        let params = m::LoadParams {
            session_id: session_id.clone(),
            replay: asked.replay,
            mcp_servers,
        };
        let verb = if asked.replay { "load" } else { "resume" };
        let bridge = self.clone();
        let cancellation = responder.cancellation();
        self.openings.spawn(async move {
            let call = {
                let client = client.clone();
                async move { client.request::<m::SessionLoad>(&params).await }
            };
            let summary = match bridge
                .call_unless_cancelled(cancellation, call, |s| &s.session_id, Undo::Detach)
                .await
            {
                Ok(summary) => summary,
                Err(e) => return answer(responder, Err(e)),
            };
            if Path::new(&summary.cwd) != asked.cwd {
                tracing::info!(
                    session = %session_id,
                    stored = %summary.cwd,
                    asked = %asked.cwd.display(),
                    "session/{verb}: the session keeps its stored working directory"
                );
            }
            let current = config::current(&client, &summary.model, summary.mode).await;
            let options = config::options(&current);
            let link = match bridge.link(&session_id) {
                // Open already: its pump forwards the replay.
                Some(link) => {
                    *config::lock(&link.config) = current;
                    link
                }
                None => bridge.attach(
                    &session_id,
                    PathBuf::from(&summary.cwd),
                    events,
                    &cx,
                    current,
                ),
            };
            link.flush().await;
            answer(responder, Ok(respond(&summary, options)));
            // Queued right after the answer, before anything of a next prompt.
            super::title::announce(&cx, &session_id, summary.title, Some(summary.updated_at));
            commands::announce(&client, &session_id, &cx).await;
        });
        Ok(())
    }

    /// A session the daemon made for the editor (new, fork): open here, answered with the
    /// answer `respond` makes of its id, modes and config options, then its title and
    /// commands announced.
    async fn open_made<R: agent_client_protocol::JsonRpcResponse>(
        self: &Arc<Self>,
        client: &Client,
        info: m::SessionInfo,
        cx: &ConnectionTo<Editor>,
        responder: Responder<R>,
        respond: impl FnOnce(String, SessionModeState, Vec<SessionConfigOption>) -> R,
    ) {
        let events = client.subscribe(&info.session_id);
        let current = config::current(client, &info.model, info.mode).await;
        let options = config::options(&current);
        self.attach(
            &info.session_id,
            PathBuf::from(&info.cwd),
            events,
            cx,
            current,
        );
        let answered = respond(info.session_id.clone(), modes::state(info.mode), options);
        answer(responder, Ok(answered));
        super::title::announce(cx, &info.session_id, info.title, None);
        commands::announce(client, &info.session_id, cx).await;
    }

    /// The daemon's client and the editor's MCP servers in our terms: what every opening
    /// starts from.
    fn daemon_and_servers(
        &self,
        servers: &[McpServer],
    ) -> Result<(Arc<Client>, Vec<m::SessionMcpServer>), AcpError> {
        Ok((self.daemon()?, mcp_servers(servers)?))
    }

    /// Awaits the daemon's `call` for a request of the editor's, unless the editor cancels
    /// the request first: then the request's answer is `-32800` at once, and once `call`
    /// finishes, what it did to the session it names (`id`) is undone in the background.
    /// The daemon's error is the editor's in ACP's terms.
    async fn call_unless_cancelled<T: Send + 'static>(
        self: &Arc<Self>,
        cancellation: RequestCancellation,
        call: impl Future<Output = CallResult<T>> + Send + 'static,
        id: fn(&T) -> &String,
        undo: Undo,
    ) -> Result<T, AcpError> {
        let mut call = Box::pin(call);
        tokio::select! {
            biased;
            outcome = &mut call => outcome.map_err(|e| mapping::call_error(&e)),
            () = cancellation.cancelled() => {
                let bridge = self.clone();
                self.openings.spawn(async move {
                    if let Ok(done) = call.await {
                        bridge.undo(id(&done), undo).await;
                    }
                });
                Err(AcpError::request_cancelled())
            }
        }
    }

    async fn undo(&self, session_id: &str, undo: Undo) {
        let Ok(client) = self.daemon() else { return };
        let undone = match undo {
            Undo::Delete => client.session_delete(session_id).await.map(drop),
            // Opened here meanwhile (another load answered first): it stays.
            Undo::Detach if self.link(session_id).is_some() => Ok(()),
            Undo::Detach => client.session_close(session_id).await.map(drop),
        };
        match undone {
            Ok(()) => {
                tracing::debug!(session = %session_id, "a cancelled request's session undone")
            }
            Err(e) => {
                tracing::warn!(session = %session_id, "could not undo a cancelled request: {e}")
            }
        }
    }
}

/// What a load or a resume asked for.
struct Attach {
    session_id: String,
    cwd: PathBuf,
    mcp_servers: Vec<McpServer>,
    replay: bool,
}

/// Our fork of `source`, with `mcp_servers` started for it (a load without replay).
async fn fork_with_servers(
    client: &Client,
    source: &str,
    mcp_servers: Vec<m::SessionMcpServer>,
) -> CallResult<m::SessionInfo> {
    let info = client.session_fork(source, None).await?;
    if !mcp_servers.is_empty() {
        let params = m::LoadParams {
            session_id: info.session_id.clone(),
            replay: false,
            mcp_servers,
        };
        if let Err(e) = client.request::<m::SessionLoad>(&params).await {
            // The fork is made: the editor gets it, without its servers, and the log says why.
            tracing::warn!(fork = %info.session_id, "the fork's MCP servers were not started: {e}");
        }
    }
    Ok(info)
}

/// Answers a request from a task; an answer that cannot be sent (the editor left) is logged.
fn answer<R: agent_client_protocol::JsonRpcResponse>(
    responder: Responder<R>,
    result: Result<R, AcpError>,
) {
    if let Err(e) = responder.respond_with_result(result) {
        tracing::debug!("an answer could not be sent: {e}");
    }
}

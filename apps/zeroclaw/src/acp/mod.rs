//! `zeroclaw acp`: an Agent Client Protocol (v1) agent on stdin/stdout that bridges an
//! editor to the daemon of its config dir.
//!
//! The editor's requests become our methods on one socket connection (`connect_or_start`,
//! so a daemon is started if none answers); our `session/update` events become ACP
//! `session/update` notifications; our `approval_request` becomes ACP's
//! `session/request_permission`, our `elicitation/create` ACP's, and our `fs/*` requests
//! the editor's. Sessions stay the daemon's: a turn goes on when the editor leaves.
//!
//! - `mapping.rs`: the vocabulary, both ways (pure functions).
//! - `session.rs`: one session the editor opened: its event pump and its approvals.
//! - `daemon_side.rs`: the daemon's questions to the editor (elicitation, files).
//! - `commands.rs`: custom commands, announced to the editor and expanded in prompts.
//! - `config.rs`: the session's config options (model, permission mode).
//! - `open.rs`: `session/new`, `session/load`, `session/resume`, `session/fork`, each
//!   cancellable by the editor.
//! - `lifecycle.rs`: `session/close`, `session/delete`, `session/list`.
//! - `title.rs`: a session's title for the editor (`session_info_update`, `session/set_title`).
//!
//! Only ACP messages go to stdout; diagnostics go to stderr (the CLI's logger).

mod commands;
mod config;
mod daemon_side;
mod lifecycle;
mod mapping;
mod modes;
mod open;
mod session;
mod title;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ForkSessionRequest, ForkSessionResponse, Implementation,
    InitializeRequest, InitializeResponse, ListSessionsRequest, ListSessionsResponse,
    LoadSessionRequest, LoadSessionResponse, McpCapabilities, McpServer, NewSessionRequest,
    NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse, SessionCapabilities,
    SessionCloseCapabilities, SessionDeleteCapabilities, SessionForkCapabilities,
    SessionListCapabilities, SessionResumeCapabilities, SessionTitleCapabilities,
    SetSessionModeRequest, SetSessionModeResponse, SetSessionTitleRequest, SetSessionTitleResponse,
};
use agent_client_protocol::v1::schema::{
    CloseSessionRequest, CloseSessionResponse, DeleteSessionRequest, DeleteSessionResponse,
    ResumeSessionRequest, ResumeSessionResponse, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client as Editor, Error as AcpError, Stdio};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use zeroclaw_client::{Client, ClientOptions, protocol::methods as m};
use zeroclaw_ipc::Paths;

use session::SessionLink;

/// How long, once the daemon is gone, the bridge waits for the prompts in flight to be
/// answered with the error before it exits (each fails at once; this only bounds it).
const DRAIN_GUARD: Duration = Duration::from_secs(5);

/// How long the bridge, once the daemon is gone and the editor told, waits for the editor
/// to close stdin before it exits (so its last answers are written).
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// What the editor declared in `initialize`.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditorCaps {
    pub read_text_file: bool,
    pub write_text_file: bool,
    pub elicitation: bool,
    /// `session.notices`: it shows `notice` updates (ACP sends them only then).
    pub notices: bool,
    /// `session.compaction`: it shows `compaction_update`s (ACP sends them only then).
    pub compaction: bool,
}

/// The bridge's state, shared by the handlers of the editor's messages.
pub struct Bridge {
    paths: Paths,
    /// The daemon connection, made by the first `initialize`.
    daemon: OnceLock<Arc<Client>>,
    /// The sessions this editor created or loaded, by id.
    sessions: Mutex<HashMap<String, Arc<SessionLink>>>,
    /// Cancelled when the daemon's connection is lost.
    gone: CancellationToken,
    /// Cancelled once the open sessions were told the daemon is gone: the prompts it
    /// failed answer after that, so the editor hears why first.
    told: CancellationToken,
    /// The prompts in flight (tasks that answer a `session/prompt`).
    prompts: TaskTracker,
    /// The sessions being opened or closed (`open.rs`, `lifecycle.rs`), and the undoing of
    /// cancelled openings: waited for (a while) when the editor leaves, so none is cut off.
    openings: TaskTracker,
    /// What the editor declared in its last `initialize`.
    caps: Mutex<EditorCaps>,
}

/// How the bridge ended.
enum End {
    /// The editor closed stdin: exit 0; turns go on in the daemon.
    EditorLeft,
    /// The daemon went away: exit non-zero.
    DaemonGone,
}

/// Runs the bridge until the editor closes stdin (0) or the daemon goes away (an error).
pub async fn run(paths: Paths) -> Result<u8, String> {
    let bridge = Arc::new(Bridge {
        paths,
        daemon: OnceLock::new(),
        sessions: Mutex::new(HashMap::new()),
        gone: CancellationToken::new(),
        told: CancellationToken::new(),
        prompts: TaskTracker::new(),
        openings: TaskTracker::new(),
        caps: Mutex::new(EditorCaps::default()),
    });
    let transport = Stdio::new();
    let b = bridge.clone();
    let end = Agent
        .v1()
        .name("zeroclaw")
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: InitializeRequest,
                            responder: Responder<InitializeResponse>,
                            cx: ConnectionTo<Editor>| {
                    bridge.initialize(request, responder, cx).await
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: NewSessionRequest,
                            responder: Responder<NewSessionResponse>,
                            cx: ConnectionTo<Editor>| {
                    bridge.new_session(request, responder, cx)
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: LoadSessionRequest,
                            responder: Responder<LoadSessionResponse>,
                            cx: ConnectionTo<Editor>| {
                    bridge.load_session(request, responder, cx)
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: ForkSessionRequest,
                            responder: Responder<ForkSessionResponse>,
                            cx: ConnectionTo<Editor>| {
                    bridge.fork_session(request, responder, cx)
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: ListSessionsRequest,
                            responder: Responder<ListSessionsResponse>,
                            _cx: ConnectionTo<Editor>| {
                    bridge.list_sessions(request, responder).await
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: PromptRequest,
                            responder: Responder<PromptResponse>,
                            _cx: ConnectionTo<Editor>| {
                    bridge.prompt(request, responder)
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: SetSessionModeRequest,
                            responder: Responder<SetSessionModeResponse>,
                            _cx: ConnectionTo<Editor>| {
                    match bridge.daemon() {
                        Ok(client) => modes::set(&client, request, responder).await,
                        Err(e) => responder.respond_with_error(e),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: SetSessionConfigOptionRequest,
                            responder: Responder<SetSessionConfigOptionResponse>,
                            _cx: ConnectionTo<Editor>| {
                    match bridge.daemon() {
                        Ok(client) => {
                            let current = bridge
                                .link(&request.session_id.0)
                                .map(|link| link.config.clone());
                            config::set(&client, current, request, responder).await
                        }
                        Err(e) => responder.respond_with_error(e),
                    }
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: ResumeSessionRequest,
                            responder: Responder<ResumeSessionResponse>,
                            cx: ConnectionTo<Editor>| {
                    bridge.resume_session(request, responder, cx)
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: CloseSessionRequest,
                            responder: Responder<CloseSessionResponse>,
                            _cx: ConnectionTo<Editor>| {
                    bridge.close_session(request, responder)
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: DeleteSessionRequest,
                            responder: Responder<DeleteSessionResponse>,
                            _cx: ConnectionTo<Editor>| {
                    bridge.delete_session(request, responder).await
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            {
                let bridge = bridge.clone();
                async move |request: SetSessionTitleRequest,
                            responder: Responder<SetSessionTitleResponse>,
                            cx: ConnectionTo<Editor>| {
                    bridge.set_title(request, responder, cx).await
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            {
                let bridge = bridge.clone();
                async move |notification: CancelNotification, _cx: ConnectionTo<Editor>| {
                    bridge.cancel(notification);
                    Ok(())
                }
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Editor>| {
            tokio::select! {
                () = cx.incoming_closed() => Ok(End::EditorLeft),
                () = b.gone.cancelled() => {
                    b.daemon_gone(&cx).await;
                    // What was queued for the editor as the connection shuts down can be
                    // lost (the SDK stops its writer with the foreground): give it until
                    // the editor closes stdin, or a moment, before exiting.
                    let _ = tokio::time::timeout(EXIT_GRACE, cx.incoming_closed()).await;
                    Ok(End::DaemonGone)
                }
            }
        })
        .await;
    match end {
        Ok(End::EditorLeft) => {
            tracing::debug!("the editor closed stdin; turns go on in the daemon");
            bridge.openings.close();
            if tokio::time::timeout(DRAIN_GUARD, bridge.openings.wait())
                .await
                .is_err()
            {
                tracing::warn!("sessions being opened or closed did not finish as the editor left");
            }
            Ok(0)
        }
        Ok(End::DaemonGone) => Err(mapping::DAEMON_GONE.to_owned()),
        Err(e) => Err(format!("ACP connection failed: {e}")),
    }
}

impl Bridge {
    /// The daemon connection, once `initialize` made it.
    fn daemon(&self) -> Result<Arc<Client>, AcpError> {
        match self.daemon.get() {
            Some(client) => Ok(client.clone()),
            None => Err(AcpError::invalid_request()
                .data(serde_json::Value::String("call `initialize` first".into()))),
        }
    }

    fn link(&self, session_id: &str) -> Option<Arc<SessionLink>> {
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(session_id)
            .cloned()
    }

    async fn initialize(
        self: &Arc<Self>,
        request: InitializeRequest,
        responder: Responder<InitializeResponse>,
        cx: ConnectionTo<Editor>,
    ) -> Result<(), AcpError> {
        let caps = EditorCaps {
            read_text_file: request.client_capabilities.fs.read_text_file,
            write_text_file: request.client_capabilities.fs.write_text_file,
            elicitation: request
                .client_capabilities
                .elicitation
                .as_ref()
                .is_some_and(|e| e.form.is_some()),
            notices: request
                .client_capabilities
                .session
                .as_ref()
                .is_some_and(|s| s.notices.is_some()),
            compaction: request
                .client_capabilities
                .session
                .as_ref()
                .is_some_and(|s| s.compaction.is_some()),
        };
        *self.caps.lock().unwrap_or_else(|e| e.into_inner()) = caps;
        if self.daemon.get().is_none() {
            let options = ClientOptions {
                name: "zeroclaw-acp".into(),
                elicitation: caps
                    .elicitation
                    .then(|| daemon_side::elicitation(cx.clone())),
                fs: daemon_side::fs(self.clone(), cx.clone(), caps),
                ..ClientOptions::default()
            };
            match zeroclaw_client::connect_or_start(&self.paths, options).await {
                Ok(client) => {
                    let client = Arc::new(client);
                    if self.daemon.set(client.clone()).is_ok() {
                        let gone = self.gone.clone();
                        tokio::spawn(async move {
                            client.closed().await;
                            gone.cancel();
                        });
                    }
                }
                Err(e) => {
                    tracing::error!("cannot reach the zeroclaw daemon: {e}");
                    return responder.respond_with_error(AcpError::new(
                        -32603,
                        format!("cannot reach the zeroclaw daemon: {e}"),
                    ));
                }
            }
        }
        let capabilities = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(
                PromptCapabilities::new()
                    .image(true)
                    .audio(false)
                    .embedded_context(true),
            )
            .mcp_capabilities(McpCapabilities::new().http(true).sse(false))
            .session_capabilities(
                SessionCapabilities::new()
                    .list(SessionListCapabilities::new())
                    .resume(SessionResumeCapabilities::new())
                    .close(SessionCloseCapabilities::new())
                    .delete(SessionDeleteCapabilities::new())
                    .fork(SessionForkCapabilities::new())
                    .title(SessionTitleCapabilities::new()),
            );
        responder.respond(
            InitializeResponse::new(ProtocolVersion::V1)
                .agent_capabilities(capabilities)
                .auth_methods(Vec::new())
                .agent_info(Implementation::new("zeroclaw", env!("CARGO_PKG_VERSION"))),
        )
    }

    /// `session/prompt`: answered by a task of its own, so the editor's `session/cancel`
    /// and permission answers are read while the turn runs.
    fn prompt(
        self: &Arc<Self>,
        request: PromptRequest,
        responder: Responder<PromptResponse>,
    ) -> Result<(), AcpError> {
        let client = match self.daemon() {
            Ok(client) => client,
            Err(e) => return responder.respond_with_error(e),
        };
        let session_id = request.session_id.0.to_string();
        let Some(link) = self.link(&session_id) else {
            return responder.respond_with_error(AcpError::invalid_params().data(
                serde_json::Value::String(format!(
                    "session {session_id} is not open here: session/new or session/load it first"
                )),
            ));
        };
        let (text, images) = match mapping::prompt_parts(&request.prompt) {
            Ok(parts) => parts,
            Err(e) => return responder.respond_with_error(e),
        };
        let told = self.told.clone();
        let in_flight = link.prompt_begun();
        // The editor's `$/cancel_request` for this prompt: a `session/cancel` of its turn,
        // which then answers `cancelled` as after the editor's own `session/cancel`.
        let withdrawn = responder.cancellation();
        self.prompts.spawn(async move {
            let run = async {
                match commands::expand(&client, &session_id, text).await {
                    Ok(prompt) => client.session_prompt_with(&session_id, &prompt, images).await,
                    Err(e) => Err(e),
                }
            };
            tokio::pin!(run);
            let outcome = tokio::select! {
                outcome = &mut run => outcome,
                () = withdrawn.cancelled() => {
                    if let Err(e) = client.session_cancel(&session_id).await {
                        tracing::warn!(session = %session_id, "session/cancel for $/cancel_request failed: {e}");
                    }
                    run.await
                }
            };
            if matches!(outcome, Err(zeroclaw_rpc::CallError::Closed)) {
                told.cancelled().await;
            }
            // Every event of the turn precedes its answer: forward them all first.
            link.flush().await;
            let sent = match outcome {
                Ok(result) => responder.respond(
                    PromptResponse::new(mapping::stop_reason(result.stop_reason))
                        .usage(result.usage.map(mapping::turn_usage)),
                ),
                Err(e) => responder.respond_with_error(mapping::call_error(&e)),
            };
            if let Err(e) = sent {
                tracing::debug!("the prompt's answer could not be sent: {e}");
            }
            drop(in_flight);
        });
        Ok(())
    }

    /// `session/cancel` (a notification): our `session/cancel`; the prompt then answers
    /// `cancelled`. The permission answers the editor sends after it wait for it
    /// ([`session::CancelGate`]).
    fn cancel(&self, notification: CancelNotification) {
        let Ok(client) = self.daemon() else { return };
        let session_id = notification.session_id.0.to_string();
        let ticket = self.link(&session_id).map(|link| link.cancels.begin());
        tokio::spawn(async move {
            let _answered = ticket;
            if let Err(e) = client.session_cancel(&session_id).await {
                tracing::warn!(session = %session_id, "session/cancel failed: {e}");
            }
        });
    }

    /// Opens the session for this editor: its events are forwarded from now on.
    fn attach(
        &self,
        session_id: &str,
        cwd: PathBuf,
        events: tokio::sync::broadcast::Receiver<zeroclaw_client::SessionUpdate>,
        cx: &ConnectionTo<Editor>,
        current: config::Current,
    ) -> Arc<SessionLink> {
        let compaction = self
            .caps
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .compaction;
        let link = SessionLink::start(
            session::Opened {
                id: session_id.to_owned(),
                cwd,
                compaction,
            },
            events,
            cx.clone(),
            self.daemon.get().cloned(),
            config::shared(current),
        );
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(session_id.to_owned(), link.clone());
        link
    }

    /// The session's working directory, for the editor's file paths.
    pub fn cwd_of(&self, session_id: &str) -> Option<PathBuf> {
        self.link(session_id).map(|link| link.cwd.clone())
    }

    /// The daemon is gone: each open session is told (a `notice`, if the editor shows
    /// them), then every prompt in flight is answered with the error. The notices go
    /// first: what is queued as the connection shuts down may not reach the editor, and ACP
    /// says a notice is best effort, while an answer must arrive.
    async fn daemon_gone(&self, cx: &ConnectionTo<Editor>) {
        tracing::error!("{}", mapping::DAEMON_GONE);
        if self.caps.lock().unwrap_or_else(|e| e.into_inner()).notices {
            let links: Vec<Arc<SessionLink>> = self
                .sessions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .values()
                .cloned()
                .collect();
            for link in links {
                link.notify_gone(cx);
            }
        }
        self.told.cancel();
        self.prompts.close();
        if tokio::time::timeout(DRAIN_GUARD, self.prompts.wait())
            .await
            .is_err()
        {
            tracing::warn!("prompts in flight did not finish after the daemon went away");
        }
    }
}

/// ACP's MCP servers in our `session/new` shape, which is ACP's (`docs/mcp.md`).
fn mcp_servers(servers: &[McpServer]) -> Result<Vec<m::SessionMcpServer>, AcpError> {
    serde_json::to_value(servers)
        .and_then(serde_json::from_value)
        .map_err(|e| {
            AcpError::invalid_params().data(serde_json::Value::String(format!("mcpServers: {e}")))
        })
}

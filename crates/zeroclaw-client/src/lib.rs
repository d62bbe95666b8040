//! The client library for the zeroclaw daemon: connect to the resolved endpoint (or start
//! an ephemeral daemon, or run over any other transport), `initialize`, call every method
//! with typed parameters, run a turn as a stream of its events ([`Turn`]), receive a
//! session's `session/update` events, and answer the daemon's `elicitation/create`
//! requests with a handler of your own.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use zeroclaw_client::{ClientOptions, Decision, TurnEvent, Update};
//! let paths = zeroclaw_ipc::resolve(None)?;
//! let client = zeroclaw_client::connect_or_start(&paths, ClientOptions::default()).await?;
//! let session = client.session_new(Default::default()).await?;
//! let mut turn = client.turn(&session.session_id, "What is in this directory?");
//! while let Some(event) = turn.next().await {
//!     match event {
//!         TurnEvent::Update(Update::AgentMessageChunk { text }) => print!("{text}"),
//!         TurnEvent::Approval(request) => request.answer(Decision::Reject).await?,
//!         TurnEvent::Done(result) => println!("\n{:?}", result?.stop_reason),
//!         _ => {}
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! See `examples/status.rs` for a runnable example.

mod events;
mod images;
pub mod keys;
mod raw;
mod spawn;
mod turn;
mod types;
mod ws;

pub use ws::Remote;

/// The title a session gets from its first prompt: the prompt's first line, at most 60
/// characters. The one rule of every client (`zeroclaw prompt`, zerocode), so a session
/// reads the same in every list whichever started it.
pub fn title_from_prompt(prompt: &str) -> String {
    prompt
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .chars()
        .take(60)
        .collect()
}

pub use events::EVENT_BUFFER;
pub use images::{image_block, image_type};
pub use raw::RawUpdate;
pub use spawn::{connect_or_start, daemon_binary, ephemeral_log};
pub use turn::{Approval, Subagent, TaggedEvent, Turn, TurnEvent};
pub use types::*;
pub use zeroclaw_protocol::{self as protocol, Method};

use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::broadcast;
use zeroclaw_ipc::{ConnectError, Endpoint, LocalTransport};
use zeroclaw_protocol::{
    ElicitationCreate, InitializeParams, NoParams, PROTOCOL_VERSION, methods as m,
};
use zeroclaw_rpc::{
    Answer, BoxFuture, CallError, HandlerResult, Peer, PeerConfig, PeerHandle, RpcError,
    RpcTransport, Service, StreamTransport,
};

/// How long a call other than `session/prompt` waits for its answer.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Answers the daemon's `elicitation/create` requests (the agent's `ask_user` tool).
pub trait ElicitationHandler: Send + Sync + 'static {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<ElicitationResponse>;
}

/// Does the daemon's file operations for it (`fs/read_text_file`, `fs/write_text_file`):
/// an editor that holds unsaved buffers. The error is the message the agent's tool reports.
pub trait FsHandler: Send + Sync + 'static {
    fn read_text_file(&self, params: m::FsReadTextFileParams) -> BoxFuture<Result<String, String>>;
    fn write_text_file(&self, params: m::FsWriteTextFileParams) -> BoxFuture<Result<(), String>>;
}

/// [`ClientOptions::fs`]: the handler, and which of its operations to declare.
#[derive(Clone)]
pub struct FsOptions {
    pub read_text_file: bool,
    pub write_text_file: bool,
    pub handler: Arc<dyn FsHandler>,
}

#[derive(Clone)]
pub struct ClientOptions {
    /// Sent as `clientInfo.name`.
    pub name: String,
    pub max_frame_bytes: usize,
    /// With a handler, the client declares the `elicitation` capability and the daemon may
    /// ask it questions; without one, the agent is told it cannot ask.
    pub elicitation: Option<Arc<dyn ElicitationHandler>>,
    /// Also deliver every notification, `session/update` included, raw through
    /// [`Client::next_notification`] (for tools that print the wire, like `zeroclaw call --events`).
    pub tap_notifications: bool,
    /// With a handler, the client declares `capabilities.fs` and the daemon's file tools
    /// read and write through it in the turns this connection prompts.
    pub fs: Option<FsOptions>,
    /// Deliver every `session/update` here, as the bytes of its params the daemon wrote,
    /// instead of to [`Client::subscribe`] (for a relay that forwards events unchanged).
    /// Overflow rule: while this bounded queue is full the connection is not read (answers
    /// included), so the daemon applies its rule for a client that does not read its events
    /// (it waits, then closes the connection) and nothing is lost silently. Updates that
    /// arrive once the receiver is dropped are discarded.
    pub raw_updates: Option<tokio::sync::mpsc::Sender<RawUpdate>>,
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("name", &self.name)
            .field("max_frame_bytes", &self.max_frame_bytes)
            .field("elicitation", &self.elicitation.is_some())
            .field("tap_notifications", &self.tap_notifications)
            .field("fs", &self.fs.is_some())
            .field("raw_updates", &self.raw_updates.is_some())
            .finish()
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            name: "zeroclaw-client".into(),
            max_frame_bytes: zeroclaw_rpc::DEFAULT_MAX_FRAME_BYTES,
            elicitation: None,
            tap_notifications: false,
            fs: None,
            raw_updates: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error("the daemon at {peer} refused the handshake: {source}")]
    Handshake {
        /// The transport's peer label: the endpoint's path for a socket or pipe.
        peer: String,
        source: Box<CallError>,
    },
    #[error("could not start a daemon: {0}")]
    Start(String),
    #[error("cannot reach the gateway at {url}: {message}")]
    Remote { url: String, message: String },
}

/// A call's failure: the daemon's error, a timeout, or a lost connection.
pub type CallResult<T> = Result<T, CallError>;

/// Capacity of the queue of notifications other than `session/update`. Overflow rule:
/// further ones are dropped and logged until the caller catches up.
const NOTIFICATION_QUEUE: usize = 1024;

struct ClientService {
    router: Arc<events::Router>,
    elicitation: Option<Arc<dyn ElicitationHandler>>,
    fs: Option<FsOptions>,
    others: tokio::sync::mpsc::Sender<Notification>,
    tap: bool,
}

/// A notification from the daemon that is not a `session/update`.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    pub method: String,
    pub params: Option<Value>,
}

impl Service for ClientService {
    fn request(&self, method: String, params: Option<Value>) -> BoxFuture<HandlerResult> {
        if let Some(answer) = self.fs_request(&method, params.as_ref()) {
            return answer;
        }
        match (method.as_str(), &self.elicitation) {
            (ElicitationCreate::NAME, Some(handler)) => {
                let request: ElicitationRequest =
                    match params.map(serde_json::from_value).transpose() {
                        Ok(Some(request)) => request,
                        Ok(None) => return ready(Err(RpcError::invalid_params("missing params"))),
                        Err(e) => return ready(Err(RpcError::invalid_params(e))),
                    };
                let answer = handler.elicit(request);
                Box::pin(async move { Answer::new(&answer.await) })
            }
            _ => ready(Err(RpcError::method_not_found(&method))),
        }
    }

    fn notification(&self, method: String, params: Option<Value>) {
        if method == zeroclaw_protocol::events::SESSION_UPDATE {
            if let Some(update) = params.as_ref().and_then(SessionUpdate::parse) {
                self.router.route(update);
            }
            if !self.tap {
                return;
            }
        }
        if self
            .others
            .try_send(Notification { method, params })
            .is_err()
        {
            tracing::warn!("notification queue full; a notification was dropped");
        }
    }
}

impl ClientService {
    /// `fs/*` when declared: the handler's answer (its error as an internal error, whose
    /// message the tool reports); `None` for any other method.
    fn fs_request(&self, method: &str, params: Option<&Value>) -> Option<BoxFuture<HandlerResult>> {
        let fs = self.fs.as_ref()?;
        fn parse<T: serde::de::DeserializeOwned>(params: Option<&Value>) -> Result<T, RpcError> {
            let params = params.ok_or_else(|| RpcError::invalid_params("missing params"))?;
            T::deserialize(params).map_err(RpcError::invalid_params)
        }
        Some(match method {
            m::FsReadTextFile::NAME if fs.read_text_file => {
                match parse::<m::FsReadTextFileParams>(params) {
                    Ok(params) => {
                        let read = fs.handler.read_text_file(params);
                        Box::pin(async move {
                            match read.await {
                                Ok(content) => Answer::new(&m::FsReadTextFileResult { content }),
                                Err(message) => Err(RpcError::internal(message)),
                            }
                        })
                    }
                    Err(e) => ready(Err(e)),
                }
            }
            m::FsWriteTextFile::NAME if fs.write_text_file => {
                match parse::<m::FsWriteTextFileParams>(params) {
                    Ok(params) => {
                        let write = fs.handler.write_text_file(params);
                        Box::pin(async move {
                            match write.await {
                                Ok(()) => Answer::new(&m::Empty {}),
                                Err(message) => Err(RpcError::internal(message)),
                            }
                        })
                    }
                    Err(e) => ready(Err(e)),
                }
            }
            _ => return None,
        })
    }
}

fn ready(outcome: HandlerResult) -> BoxFuture<HandlerResult> {
    Box::pin(std::future::ready(outcome))
}

/// One initialized connection to the daemon. Cheap to share behind an `Arc`; every method
/// takes `&self`, so calls may run concurrently (a `session/prompt` alongside its cancel).
pub struct Client {
    handle: PeerHandle,
    server: ServerInfo,
    router: Arc<events::Router>,
    others: tokio::sync::Mutex<tokio::sync::mpsc::Receiver<Notification>>,
}

impl Client {
    /// Connects to the daemon's socket (or named pipe) and completes `initialize`.
    pub async fn connect(endpoint: &Endpoint, options: ClientOptions) -> Result<Self, ClientError> {
        let stream = zeroclaw_ipc::connect(endpoint).await?;
        let transport = LocalTransport::new(stream, endpoint.to_string(), options.max_frame_bytes);
        Self::over(transport, options).await
    }

    /// Completes `initialize` over NDJSON on any byte stream (an in-memory duplex, a
    /// tunnel); `label` names the other end in errors.
    pub async fn from_stream<S: AsyncRead + AsyncWrite + Send + 'static>(
        stream: S,
        label: &str,
        options: ClientOptions,
    ) -> Result<Self, ClientError> {
        let transport = StreamTransport::new(stream, label, options.max_frame_bytes);
        Self::over(transport, options).await
    }

    /// Completes `initialize` over any transport (one that carries messages rather than
    /// bytes, such as a WebSocket, implements [`RpcTransport`] itself).
    pub async fn over<T: RpcTransport>(
        transport: T,
        mut options: ClientOptions,
    ) -> Result<Self, ClientError> {
        match options.raw_updates.take() {
            Some(updates) => {
                let tapped = raw::Tapped {
                    inner: transport,
                    updates,
                };
                Self::start(tapped, options).await
            }
            None => Self::start(transport, options).await,
        }
    }

    async fn start<T: RpcTransport>(
        transport: T,
        options: ClientOptions,
    ) -> Result<Self, ClientError> {
        let peer_label = transport.peer_label().to_owned();
        let (peer, handle) = Peer::new(transport, PeerConfig::default());
        let router = Arc::new(events::Router::default());
        let (others_tx, others_rx) = tokio::sync::mpsc::channel(NOTIFICATION_QUEUE);
        let elicitation = options.elicitation.is_some();
        let fs = options
            .fs
            .as_ref()
            .map(|fs| zeroclaw_protocol::FsCapabilities {
                read_text_file: fs.read_text_file,
                write_text_file: fs.write_text_file,
            });
        tokio::spawn(peer.run(Arc::new(ClientService {
            router: router.clone(),
            elicitation: options.elicitation,
            fs: options.fs,
            others: others_tx,
            tap: options.tap_notifications,
        })));
        let params = InitializeParams {
            protocol_version: Some(PROTOCOL_VERSION.into()),
            client_info: Some(ClientInfo {
                name: Some(options.name),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
            capabilities: (elicitation || fs.is_some()).then(|| ClientCapabilities {
                elicitation: elicitation.then(Default::default),
                fs,
            }),
        };
        let handshake = |source| ClientError::Handshake {
            peer: peer_label,
            source: Box::new(source),
        };
        let server = request::<m::Initialize>(&handle, &params, DEFAULT_CALL_TIMEOUT)
            .await
            .map_err(handshake)?;
        Ok(Self {
            handle,
            server,
            router,
            others: tokio::sync::Mutex::new(others_rx),
        })
    }

    /// The daemon's `initialize` result.
    pub fn server_info(&self) -> &ServerInfo {
        &self.server
    }

    /// A raw call: any method, any params, the raw result.
    pub async fn call(&self, method: &str, params: Value) -> CallResult<Value> {
        self.handle
            .request(method, params, DEFAULT_CALL_TIMEOUT)
            .await
    }

    pub async fn call_with_timeout(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> CallResult<Value> {
        self.handle.request(method, params, timeout).await
    }

    /// A typed call of any method of the protocol.
    pub async fn request<M: Method>(&self, params: &M::Params) -> CallResult<M::Result> {
        request::<M>(&self.handle, params, DEFAULT_CALL_TIMEOUT).await
    }

    pub async fn status(&self) -> CallResult<Status> {
        self.request::<m::Status>(&NoParams).await
    }

    pub async fn shutdown(&self) -> CallResult<()> {
        self.request::<m::Shutdown>(&NoParams).await.map(drop)
    }

    /// Creates a session and attaches this connection to it.
    pub async fn session_new(&self, params: NewSession) -> CallResult<SessionInfo> {
        self.request::<m::SessionNew>(&params).await
    }

    /// Every session, most recently updated first: follows `session/list`'s pages.
    pub async fn session_list(&self) -> CallResult<Vec<SessionSummary>> {
        let mut sessions = Vec::new();
        let mut cursor = None;
        loop {
            let page = self
                .session_list_page(m::ListParams {
                    cursor,
                    ..Default::default()
                })
                .await?;
            sessions.extend(page.sessions);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(sessions),
            }
        }
    }

    /// One page of `session/list`: at most `limit` sessions (the daemon's default if
    /// `None`) after `cursor` (a page's `next_cursor`; `None` for the first), only those
    /// matching `search` if given.
    pub async fn session_list_page(
        &self,
        params: m::ListParams,
    ) -> CallResult<m::SessionListResult> {
        self.request::<m::SessionList>(&params).await
    }

    /// Attaches this connection to a session. With `replay`, its history arrives first as
    /// `session/update` events (subscribe before calling to receive them).
    pub async fn session_load(&self, session_id: &str, replay: bool) -> CallResult<SessionSummary> {
        let params = m::LoadParams {
            session_id: session_id.to_owned(),
            replay,
            mcp_servers: Vec::new(),
        };
        self.request::<m::SessionLoad>(&params).await
    }

    pub async fn session_messages(
        &self,
        session_id: &str,
        limit: Option<usize>,
        before: Option<i64>,
    ) -> CallResult<MessagePage> {
        let params = m::MessagesParams {
            session_id: session_id.to_owned(),
            limit,
            before,
            include_hidden: false,
        };
        self.request::<m::SessionMessages>(&params).await
    }

    /// `session/messages` with every member (`includeHidden` among them).
    pub async fn session_messages_with(
        &self,
        params: &m::MessagesParams,
    ) -> CallResult<MessagePage> {
        self.request::<m::SessionMessages>(params).await
    }

    /// The session's checkpoints, oldest first (`session/checkpoints`).
    pub async fn session_checkpoints(&self, session_id: &str) -> CallResult<Vec<m::Checkpoint>> {
        let params = m::CheckpointsParams {
            session_id: session_id.to_owned(),
        };
        let result = self.request::<m::SessionCheckpoints>(&params).await?;
        Ok(result.checkpoints)
    }

    /// Rewinds the session's files and/or conversation to a checkpoint (`session/rewind`);
    /// the caller must be attached. Conflicts are `-32030` with `data.conflicts`.
    pub async fn session_rewind(&self, params: &m::RewindParams) -> CallResult<m::RewindResult> {
        self.request::<m::SessionRewind>(params).await
    }

    /// Reverses the session's last rewind (`session/unrewind`).
    pub async fn session_unrewind(
        &self,
        params: &m::UnrewindParams,
    ) -> CallResult<m::UnrewindResult> {
        self.request::<m::SessionUnrewind>(params).await
    }

    /// A new session from the conversation before a checkpoint (whole without one); this
    /// connection is attached to it (`session/fork`).
    pub async fn session_fork(
        &self,
        session_id: &str,
        checkpoint_id: Option<&str>,
    ) -> CallResult<SessionInfo> {
        let params = m::ForkParams {
            session_id: session_id.to_owned(),
            checkpoint_id: checkpoint_id.map(str::to_owned),
        };
        self.request::<m::SessionFork>(&params).await
    }

    /// Sends `prompt` to the session and streams the turn: its events, the approvals it
    /// waits on, then its answer. See [`Turn`].
    pub fn turn(&self, session_id: &str, prompt: &str) -> Turn {
        self.turn_with(session_id, prompt, Vec::new())
    }

    /// [`Client::turn`] with content blocks (images, resources) sent with the prompt.
    pub fn turn_with(&self, session_id: &str, prompt: &str, content: Vec<m::ContentBlock>) -> Turn {
        let events = self.subscribe(session_id);
        Turn::prompt(self.handle.clone(), events, session_id, prompt, content)
    }

    /// Streams a turn that another client started, in a session this connection loaded.
    /// `events` must be subscribed before the `session/load`; `queued` holds updates of
    /// the turn already taken from it (such as its pending approval requests, which the
    /// load re-sends), yielded first. The turn ends after its `turn_complete`; if a lag
    /// ([`TurnEvent::Lagged`]) lost that event, it ends only when the connection closes,
    /// so a caller should offer to stop following.
    pub fn follow(
        &self,
        session_id: &str,
        events: broadcast::Receiver<SessionUpdate>,
        queued: Vec<SessionUpdate>,
    ) -> Turn {
        Turn::follow(self.handle.clone(), events, session_id, queued)
    }

    /// Runs a turn; answers when it ends. Its events arrive through [`Client::subscribe`]
    /// ([`Client::turn`] does both).
    pub async fn session_prompt(&self, session_id: &str, prompt: &str) -> CallResult<PromptResult> {
        turn::prompt_call(&self.handle, session_id, prompt, Vec::new()).await
    }

    /// [`Client::session_prompt`] with content blocks (images, resources).
    pub async fn session_prompt_with(
        &self,
        session_id: &str,
        prompt: &str,
        content: Vec<m::ContentBlock>,
    ) -> CallResult<PromptResult> {
        turn::prompt_call(&self.handle, session_id, prompt, content).await
    }

    /// A stored prompt image's type and bytes (base64), by its `attachmentId`.
    pub async fn session_attachment(
        &self,
        session_id: &str,
        attachment_id: &str,
    ) -> CallResult<m::AttachmentResult> {
        let params = m::AttachmentParams {
            session_id: session_id.to_owned(),
            attachment_id: attachment_id.to_owned(),
        };
        self.request::<m::SessionAttachment>(&params).await
    }

    pub async fn session_cancel(&self, session_id: &str) -> CallResult<bool> {
        turn::cancel(&self.handle, session_id).await
    }

    pub async fn session_approve(
        &self,
        session_id: &str,
        request_id: &str,
        decision: Decision,
    ) -> CallResult<()> {
        turn::approve(&self.handle, session_id, request_id, decision).await
    }

    /// Adds `text` to the session's running turn (`session/steer`): the model gets it at
    /// the turn's next step. Answers the turn's id; with no turn running, the daemon's
    /// `NO_TURN_RUNNING` error (send a prompt instead).
    pub async fn session_steer(&self, session_id: &str, text: &str) -> CallResult<String> {
        let params = m::SteerParams {
            session_id: session_id.to_owned(),
            text: text.to_owned(),
        };
        let result = self.request::<m::SessionSteer>(&params).await?;
        Ok(result.turn_id)
    }

    /// Sets a session's title; `None` (or a blank title) clears it.
    pub async fn session_rename(&self, session_id: &str, title: Option<&str>) -> CallResult<()> {
        let params = m::RenameParams {
            session_id: session_id.to_owned(),
            title: title.map(str::to_owned),
        };
        self.request::<m::SessionRename>(&params).await.map(drop)
    }

    /// Sets the model of the session's next turns (`session/set_model`); the caller must be
    /// attached. Answers the new model and the one it replaced.
    pub async fn session_set_model(
        &self,
        session_id: &str,
        model: &str,
    ) -> CallResult<m::SetModelResult> {
        let params = m::SetModelParams {
            session_id: session_id.to_owned(),
            model: model.to_owned(),
        };
        self.request::<m::SessionSetModel>(&params).await
    }

    /// Sets the session's permission mode (`session/set_mode`); the caller must be attached.
    /// Answers the new mode and the one it replaced.
    pub async fn session_set_mode(
        &self,
        session_id: &str,
        mode: m::PermissionMode,
    ) -> CallResult<m::SetModeResult> {
        let params = m::SetModeParams {
            session_id: session_id.to_owned(),
            mode,
        };
        self.request::<m::SessionSetMode>(&params).await
    }

    /// Folds the session's older messages into a summary now (`session/compact`).
    pub async fn session_compact(&self, session_id: &str) -> CallResult<m::CompactResult> {
        let params = session_id_params(session_id);
        self.request::<m::SessionCompact>(&params).await
    }

    /// The full id of the one session whose id starts with `prefix` (`session/resolve`): at
    /// least 4 characters; an ambiguous prefix is `-32602` with `data.candidates`.
    pub async fn session_resolve(&self, prefix: &str) -> CallResult<String> {
        let params = m::ResolveParams {
            prefix: prefix.to_owned(),
        };
        Ok(self.request::<m::SessionResolve>(&params).await?.session_id)
    }

    /// What the session's turns load from its project: instruction files, skills, custom
    /// commands, and what was skipped (`session/context`).
    pub async fn session_context(&self, session_id: &str) -> CallResult<m::ProjectContext> {
        let params = session_id_params(session_id);
        self.request::<m::SessionContext>(&params).await
    }

    /// The session's token usage and cost so far, summed from the store (`session/usage`).
    pub async fn session_usage(&self, session_id: &str) -> CallResult<m::SessionUsageResult> {
        let params = session_id_params(session_id);
        self.request::<m::SessionUsage>(&params).await
    }

    /// The custom commands of the session's project and the config dir (`commands/list`).
    pub async fn commands_list(&self, session_id: &str) -> CallResult<Vec<m::CommandInfo>> {
        let params = session_id_params(session_id);
        Ok(self.request::<m::CommandsList>(&params).await?.commands)
    }

    /// Custom command `name`'s prompt with `arguments` (as typed) filled in
    /// (`commands/expand`); `-32602` if the session has no such command.
    pub async fn commands_expand(
        &self,
        session_id: &str,
        name: &str,
        arguments: &str,
    ) -> CallResult<String> {
        let params = m::ExpandParams {
            session_id: session_id.to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        };
        Ok(self.request::<m::CommandsExpand>(&params).await?.prompt)
    }

    /// Detaches this connection from a session (`session/close`): its events stop coming.
    /// `false` if it was not attached.
    pub async fn session_close(&self, session_id: &str) -> CallResult<bool> {
        let params = session_id_params(session_id);
        Ok(self.request::<m::SessionClose>(&params).await?.closed)
    }

    pub async fn session_delete(&self, session_id: &str) -> CallResult<bool> {
        let params = session_id_params(session_id);
        Ok(self.request::<m::SessionDelete>(&params).await?.deleted)
    }

    /// The session's `session/update` events from now on. See [`EVENT_BUFFER`] for what
    /// happens to a receiver that falls behind.
    pub fn subscribe(&self, session_id: &str) -> broadcast::Receiver<SessionUpdate> {
        self.router.subscribe(session_id)
    }

    /// The next notification that is not a `session/update`, or `None` once closed.
    pub async fn next_notification(&self) -> Option<Notification> {
        let mut others = self.others.lock().await;
        tokio::select! {
            biased;
            n = others.recv() => n,
            () = self.handle.closed() => others.try_recv().ok(),
        }
    }

    /// A notification already received, if there is one; never waits.
    pub fn try_next_notification(&self) -> Option<Notification> {
        self.others.try_lock().ok()?.try_recv().ok()
    }

    /// Resolves when the connection has closed (the daemon went away, or [`Client::close`]).
    pub async fn closed(&self) {
        self.handle.closed().await;
    }

    pub fn is_closed(&self) -> bool {
        self.handle.is_closed()
    }

    pub fn close(&self) {
        self.handle.close();
    }
}

fn session_id_params(session_id: &str) -> m::SessionIdParams {
    m::SessionIdParams {
        session_id: session_id.to_owned(),
    }
}

/// Sends `M` with `params` and reads its result as `M::Result`.
async fn request<M: Method>(
    handle: &PeerHandle,
    params: &M::Params,
    timeout: Duration,
) -> CallResult<M::Result> {
    let params = serde_json::to_value(params).map_err(|e| {
        CallError::Rpc(RpcError::invalid_params(format!(
            "{} params did not serialise: {e}",
            M::NAME
        )))
    })?;
    let value = handle.request(M::NAME, params, timeout).await?;
    serde_json::from_value(value).map_err(|e| {
        CallError::Rpc(RpcError::internal(format!(
            "unexpected {} result: {e}",
            M::NAME
        )))
    })
}

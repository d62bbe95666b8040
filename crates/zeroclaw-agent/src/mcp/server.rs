//! One MCP server: its supervisor (start, watch, restart), its calls, its tools.
//!
//! The supervisor starts the server (a child process in its own process group, recorded
//! for reaping like bash's, or a streamable HTTP session), lists its tools and registers
//! them, then waits for the end: a stop, the server closing its side (a crash), or a call
//! finding it dead or timing out three times in a row. After an end other than a stop the
//! server is restarted in the background, 1 s after the end and then doubling up to 60 s,
//! its state `restarting`; calls meanwhile fail at once. A server that fails its very first
//! start is `failed` and stays so until the daemon restarts (the config is wrong more often
//! than not). No wait on a server is unbounded: a start and each call have `timeout_secs`.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService, ServiceError};
use serde_json::{Value, json};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::client::{Askers, Handler, Watched};
use super::process::ChildGuard;
use super::{Settings, Snapshot, State, output, vars};
use crate::config::McpServerConfig;
use crate::tools::preview::PreviewAt;
use crate::tools::{
    Checked, DynTool, ToolContext, ToolDef, ToolOutput, ToolPolicy, Tools, check_args, not_started,
};
use futures_util::future::BoxFuture;
use zeroclaw_protocol::events::ApprovalPreview;

const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Why a server is restarted when its side closed.
const CLOSED: &str = "the server closed its connection (it exited or crashed)";
/// Calls in a row that time out before the server is restarted.
const TIMEOUTS_BEFORE_RESTART: u32 = 3;

/// A started connection.
struct Live {
    service: RunningService<RoleClient, Handler>,
    /// Cancelled when the server's side closed.
    closed: CancellationToken,
    /// Cancelled when a call found this connection dead, or too many timed out.
    lost: CancellationToken,
    child: tokio::sync::Mutex<Option<ChildGuard>>,
}

impl Live {
    /// Closes the connection and kills the child's process group.
    async fn end(&self) {
        self.service.cancellation_token().cancel();
        if let Some(child) = self.child.lock().await.take() {
            child.kill().await;
        }
    }
}

pub struct Server {
    pub config: McpServerConfig,
    settings: Arc<Settings>,
    registry: Arc<Tools>,
    pub status: watch::Sender<Snapshot>,
    live: Mutex<Option<Arc<Live>>>,
    /// The names registered for this server, and their definitions (`mcp/tools`).
    registered: Mutex<Vec<ToolDef>>,
    askers: Arc<Askers>,
    /// `tools/list_changed` seen on the connection, and the count the registered list
    /// reflects.
    list_seen: Arc<AtomicU64>,
    list_applied: AtomicU64,
    refreshing: tokio::sync::Mutex<()>,
    changed: Arc<Notify>,
    pub stop: CancellationToken,
    timeouts: AtomicU32,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Server {
    pub fn new(config: McpServerConfig, settings: Arc<Settings>, registry: Arc<Tools>) -> Self {
        let (status, _) = watch::channel(Snapshot {
            name: config.name.clone(),
            state: State::Starting,
            tools: 0,
            error: None,
        });
        Self {
            config,
            settings,
            registry,
            status,
            live: Mutex::new(None),
            registered: Mutex::new(Vec::new()),
            askers: Arc::new(Askers::default()),
            list_seen: Arc::new(AtomicU64::new(0)),
            list_applied: AtomicU64::new(0),
            refreshing: tokio::sync::Mutex::new(()),
            changed: Arc::new(Notify::new()),
            stop: CancellationToken::new(),
            timeouts: AtomicU32::new(0),
        }
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs(self.config.timeout_secs.max(1))
    }

    fn set(&self, state: State, error: Option<String>) {
        self.status.send_modify(|s| {
            s.state = state;
            if error.is_some() {
                s.error = error;
            }
        });
    }

    /// The tools' definitions as the model sees them.
    pub fn tools(&self) -> Vec<ToolDef> {
        lock(&self.registered).clone()
    }

    /// Runs the server until it is stopped.
    pub async fn supervise(self: Arc<Self>) {
        let mut backoff = FIRST_BACKOFF;
        let mut started_once = false;
        loop {
            let attempt = tokio::select! {
                () = self.stop.cancelled() => break,
                attempt = tokio::time::timeout(self.timeout(), self.start()) => attempt,
            };
            let attempt = match attempt {
                Ok(attempt) => attempt,
                Err(_) => Err(format!(
                    "did not start within {} s (timeout_secs)",
                    self.timeout().as_secs()
                )),
            };
            match attempt {
                Ok(live) => {
                    tracing::info!(server = %self.name(), tools = lock(&self.registered).len(), "MCP server ready");
                    self.set(State::Ready, None);
                    started_once = true;
                    backoff = FIRST_BACKOFF;
                    let why = self.watch(&live).await;
                    self.end(&live).await;
                    let Some(why) = why else { break };
                    tracing::warn!(server = %self.name(), reason = %why, "MCP server lost; restarting");
                    self.set(State::Restarting, Some(why));
                }
                Err(error) => {
                    tracing::warn!(server = %self.name(), %error, "MCP server did not start");
                    if !started_once {
                        self.set(State::Failed, Some(error));
                        return;
                    }
                    self.set(State::Restarting, Some(error));
                }
            }
            tokio::select! {
                () = self.stop.cancelled() => break,
                () = tokio::time::sleep(backoff) => {}
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
        self.set(State::Stopped, None);
    }

    /// Waits for the connection's end: `None` for a stop, else why it ended. Refreshes the
    /// tools on `tools/list_changed` meanwhile.
    async fn watch(self: &Arc<Self>, live: &Arc<Live>) -> Option<String> {
        loop {
            tokio::select! {
                biased;
                () = self.stop.cancelled() => return None,
                () = live.lost.cancelled() => {
                    // `lose` has said why.
                    return Some(self.status.borrow().error.clone().unwrap_or_default());
                }
                () = live.closed.cancelled() => return Some(CLOSED.into()),
                () = self.changed.notified() => {
                    if let Err(e) = self.refresh_bounded(live).await {
                        tracing::warn!(server = %self.name(), error = %e, "could not refresh the MCP server's tools");
                    }
                }
            }
        }
    }

    async fn end(&self, live: &Live) {
        *lock(&self.live) = None;
        live.end().await;
        let old: Vec<String> = lock(&self.registered).drain(..).map(|d| d.name).collect();
        self.registry.replace(&old, Vec::new());
        self.status.send_modify(|s| s.tools = 0);
    }

    /// Connects, initializes, lists and registers the tools.
    async fn start(self: &Arc<Self>) -> Result<Arc<Live>, String> {
        let closed = CancellationToken::new();
        let handler = Handler {
            server: self.name().to_owned(),
            askers: self.askers.clone(),
            changed: self.changed.clone(),
        };
        let (service, child) = match (&self.config.command, &self.config.url) {
            (Some(command), _) => {
                let env = vars::resolve(&self.config.env, "env")?;
                let mut child = super::process::spawn(command, &self.config, env, &self.settings)?;
                let (Some(stdout), Some(stdin)) = child.pipes() else {
                    return Err("the child's pipes were not set up".into());
                };
                let transport =
                    rmcp::transport::async_rw::AsyncRwTransport::<RoleClient, _, _>::new_client(
                        stdout, stdin,
                    );
                let transport = Watched::new(transport, self.list_seen.clone(), closed.clone());
                let service = rmcp::serve_client(handler, transport)
                    .await
                    .map_err(|e| format!("the MCP handshake failed: {e}"))?;
                (service, Some(child))
            }
            (None, Some(url)) => {
                let headers = vars::resolve(&self.config.headers, "header")?;
                let transport = super::http::transport(url, headers)?;
                let transport = Watched::new(transport, self.list_seen.clone(), closed.clone());
                let service = rmcp::serve_client(handler, transport)
                    .await
                    .map_err(|e| format!("the MCP handshake failed: {e}"))?;
                (service, None)
            }
            (None, None) => return Err("neither `command` nor `url` is set".into()),
        };
        let live = Arc::new(Live {
            service,
            closed,
            lost: CancellationToken::new(),
            child: tokio::sync::Mutex::new(child),
        });
        self.timeouts.store(0, Ordering::Relaxed);
        if let Err(e) = self.refresh(&live).await {
            live.end().await;
            return Err(e);
        }
        *lock(&self.live) = Some(live.clone());
        Ok(live)
    }

    async fn refresh_bounded(self: &Arc<Self>, live: &Live) -> Result<(), String> {
        match tokio::time::timeout(self.timeout(), self.refresh(live)).await {
            Ok(done) => done,
            Err(_) => Err("tools/list timed out".into()),
        }
    }

    /// Lists the server's tools and swaps them into the registry.
    async fn refresh(self: &Arc<Self>, live: &Live) -> Result<(), String> {
        let _one_at_a_time = self.refreshing.lock().await;
        let seen = self.list_seen.load(Ordering::SeqCst);
        let listed = live
            .service
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        let tools: Vec<Arc<dyn DynTool>> = listed
            .iter()
            .filter_map(|t| McpTool::new(self.clone(), t))
            .map(|t| Arc::new(t) as Arc<dyn DynTool>)
            .collect();
        let defs: Vec<ToolDef> = tools.iter().map(|t| t.definition().clone()).collect();
        let old: Vec<String> = lock(&self.registered)
            .iter()
            .map(|d| d.name.clone())
            .collect();
        let refused = self.registry.replace(&old, tools);
        for taken in &refused {
            tracing::warn!(server = %self.name(), "{taken}; that tool is not offered");
        }
        let defs: Vec<ToolDef> = defs
            .into_iter()
            .filter(|d| !refused.iter().any(|r| r.0 == d.name))
            .collect();
        let count = defs.len();
        *lock(&self.registered) = defs;
        self.status.send_modify(|s| s.tools = count);
        self.list_applied.store(seen, Ordering::SeqCst);
        Ok(())
    }

    fn current(&self) -> Option<Arc<Live>> {
        lock(&self.live).clone()
    }

    /// A call found `live` unusable: from now on calls fail at once and the state says
    /// `restarting` (before the call's result is out, so a client that reads it next sees
    /// the restart); the supervisor restarts it.
    fn lose(&self, live: &Arc<Live>, why: String) {
        {
            let mut current = lock(&self.live);
            if !current.as_ref().is_some_and(|c| Arc::ptr_eq(c, live)) {
                return;
            }
            *current = None;
        }
        self.set(State::Restarting, Some(why));
        live.lost.cancel();
    }

    /// Calls the server's tool `tool` (its own name) with `args`.
    pub async fn call(self: &Arc<Self>, tool: &str, args: Value, ctx: &ToolContext) -> ToolOutput {
        let server = self.name();
        let Some(live) = self.current() else {
            let status = self.status.borrow().clone();
            let why = status.error.map(|e| format!(" ({e})")).unwrap_or_default();
            return ToolOutput::error(format!(
                "the MCP server {server} is {}{why}; the call did not run. Try again later, or do without this tool",
                status.state.as_str()
            ));
        };
        let params: CallToolRequestParams =
            match serde_json::from_value(json!({"name": tool, "arguments": args})) {
                Ok(params) => params,
                Err(e) => return ToolOutput::error(format!("{server}: invalid arguments: {e}")),
            };
        let _asker = ctx.ask_user.clone().map(|a| self.askers.add(a));
        let timeout = self.timeout();
        let outcome = {
            // Dropping the call (time-out, cancellation) sends `notifications/cancelled`.
            let call = live.service.call_tool(params);
            tokio::pin!(call);
            let mut deadline = Instant::now() + timeout;
            loop {
                tokio::select! {
                    result = &mut call => break Some(result),
                    () = tokio::time::sleep_until(deadline) => {
                        if self.askers.busy() {
                            // The user is answering the server's question: not its fault.
                            deadline = Instant::now() + timeout;
                            continue;
                        }
                        break None;
                    }
                    () = ctx.cancel.cancelled() => {
                        return ToolOutput::error(format!(
                            "the turn was cancelled during this call; {server} was told to stop it"
                        ));
                    }
                }
            }
        };
        let output = match outcome {
            None => {
                let n = self.timeouts.fetch_add(1, Ordering::Relaxed) + 1;
                if n >= TIMEOUTS_BEFORE_RESTART {
                    self.lose(
                        &live,
                        format!("{TIMEOUTS_BEFORE_RESTART} calls in a row timed out"),
                    );
                }
                return ToolOutput::error(format!(
                    "the MCP server {server} did not answer within {} s (its timeout_secs), so the call was cancelled",
                    timeout.as_secs()
                ));
            }
            Some(Ok(result)) => {
                self.timeouts.store(0, Ordering::Relaxed);
                output::to_output(&serde_json::to_value(&result).unwrap_or(Value::Null))
            }
            Some(Err(ServiceError::McpError(e))) => {
                self.timeouts.store(0, Ordering::Relaxed);
                ToolOutput::error(format!(
                    "the MCP server {server} answered with an error: {}",
                    e.message
                ))
            }
            Some(Err(e @ (ServiceError::TransportClosed | ServiceError::TransportSend(_)))) => {
                let why = if live.closed.is_cancelled() {
                    CLOSED
                } else {
                    "the connection to the server was lost"
                };
                self.lose(&live, why.to_owned());
                return ToolOutput::error(format!(
                    "the MCP server {server} exited or lost its connection during the call ({e}); it is being restarted, and the call may or may not have had an effect"
                ));
            }
            Some(Err(e)) => ToolOutput::error(format!("the MCP server {server}: {e}")),
        };
        // A list change the server announced during the call is in before the model is
        // called again.
        if self.list_seen.load(Ordering::SeqCst) > self.list_applied.load(Ordering::SeqCst)
            && let Err(e) = self.refresh_bounded(&live).await
        {
            tracing::warn!(server = %server, error = %e, "could not refresh the MCP server's tools");
        }
        output
    }
}

/// One tool of the server, run through the [`Tool`] trait like any other, its approval
/// from the server's `approve`.
pub struct McpTool {
    server: Arc<Server>,
    /// The server's own name for it.
    tool: String,
    def: ToolDef,
}

impl McpTool {
    /// From a `tools/list` entry; `None` if it has no name.
    fn new(server: Arc<Server>, listed: &rmcp::model::Tool) -> Option<Self> {
        let (tool, def) = super::tool::definition(server.name(), listed)?;
        Some(Self { server, tool, def })
    }
}

/// Its definition is the server's, so it is registered as a [`DynTool`]: its arguments are
/// checked against the server's schema and passed on as given.
impl DynTool for McpTool {
    fn definition(&self) -> &ToolDef {
        &self.def
    }

    fn check(&self, args: &Value) -> Result<Checked, ToolOutput> {
        check_args(&self.def, args)?;
        Ok(Checked {
            path: None,
            escape: None,
        })
    }

    fn policy(&self) -> ToolPolicy {
        ToolPolicy::Own(self.server.config.approve.policy(&self.tool))
    }

    fn preview<'a>(
        &'a self,
        _args: &'a Value,
        _at: &'a PreviewAt,
    ) -> BoxFuture<'a, Option<ApprovalPreview>> {
        Box::pin(async { None })
    }

    fn run<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            if let Some(out) = not_started(&self.def.name, ctx) {
                return out;
            }
            match check_args(&self.def, args) {
                Ok(args) => self.server.call(&self.tool, args, ctx).await,
                Err(out) => out,
            }
        })
    }
}

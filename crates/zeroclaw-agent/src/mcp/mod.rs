//! MCP servers as tool sources (docs/mcp.md).
//!
//! [`Mcp`] is a set of servers — the daemon's, from `[[mcp_servers]]`, or one session's own
//! from `session/new {mcpServers}` — each run by its supervisor (`server.rs`) on the
//! official SDK `rmcp`: a child process over stdio (`process.rs`) or streamable HTTP
//! (`http.rs`). Their tools are registered at run time in a [`Tools`] registry as
//! `DynTool`s whose definitions are the server's (`tool.rs`), named `<server>__<tool>`
//! (`names.rs`); a call's result becomes
//! the model's text (`output.rs`); the server's questions go to the client (`client.rs`).

mod client;
mod http;
mod names;
mod output;
mod process;
mod server;
mod tool;
mod vars;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::task::TaskTracker;

use crate::config::McpServerConfig;
use crate::tools::{EnvScrub, ToolDef, Tools};
use server::Server;

/// What a server's state is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Starting,
    Ready,
    Restarting,
    Failed,
    Stopped,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Starting => "starting",
            State::Ready => "ready",
            State::Restarting => "restarting",
            State::Failed => "failed",
            State::Stopped => "stopped",
        }
    }
}

/// A server as `status` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub name: String,
    pub state: State,
    /// Tools registered.
    pub tools: usize,
    /// The last error, kept after a recovery.
    pub error: Option<String>,
}

/// What servers' processes are started with.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Where child process groups are recorded (`tools/orphans.rs`); `None`: nowhere.
    pub records: Option<PathBuf>,
    /// The daemon's variables a child does not inherit.
    pub scrub: EnvScrub,
    /// The children's working directory when their config gives none.
    pub cwd: Option<PathBuf>,
}

/// A set of running servers.
pub struct Mcp {
    servers: Vec<Arc<Server>>,
    /// Where their tools are registered.
    pub tools: Arc<Tools>,
    tasks: TaskTracker,
}

impl std::fmt::Debug for Mcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.servers.iter().map(|s| s.name()))
            .finish()
    }
}

impl Mcp {
    /// Starts every enabled server of `configs` in the background, registering their
    /// tools in `tools`. Must be called inside a tokio runtime.
    pub fn start(configs: &[McpServerConfig], tools: Arc<Tools>, settings: Settings) -> Self {
        let settings = Arc::new(settings);
        let tasks = TaskTracker::new();
        let servers: Vec<Arc<Server>> = configs
            .iter()
            .filter(|c| c.enabled)
            .map(|c| Arc::new(Server::new(c.clone(), settings.clone(), tools.clone())))
            .collect();
        for server in &servers {
            tasks.spawn(server.clone().supervise());
        }
        tasks.close();
        Self {
            servers,
            tools,
            tasks,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    pub fn status(&self) -> Vec<Snapshot> {
        self.servers
            .iter()
            .map(|s| s.status.borrow().clone())
            .collect()
    }

    /// Waits until no server is `starting` (nor, with `restarting`, restarting): each
    /// start is bounded by its server's `timeout_secs`.
    pub async fn settled(&self, restarting: bool) {
        for server in &self.servers {
            let mut rx = server.status.subscribe();
            let _ = rx
                .wait_for(|s| {
                    s.state != State::Starting && !(restarting && s.state == State::Restarting)
                })
                .await;
        }
    }

    /// The tools of the server called `name`; `None` if there is no such server.
    pub fn tools_of(&self, name: &str) -> Option<Vec<ToolDef>> {
        self.servers
            .iter()
            .find(|s| s.name() == name)
            .map(|s| s.tools())
    }

    /// Tells every server to stop (killing the children), without waiting.
    pub fn stop_now(&self) {
        for server in &self.servers {
            server.stop.cancel();
        }
    }

    /// Stops every server (killing the children) and waits, at most `wait`, for them.
    pub async fn stop(&self, wait: Duration) {
        for server in &self.servers {
            server.stop.cancel();
        }
        if tokio::time::timeout(wait, self.tasks.wait()).await.is_err() {
            tracing::warn!("some MCP servers did not stop within {wait:?}");
        }
    }
}

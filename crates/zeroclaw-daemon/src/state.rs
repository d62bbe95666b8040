//! What every connection of one daemon shares: the agent's parts, and the daemon's.

use crate::auth::Tokens;
use crate::clients::ClientCounter;
use crate::config::Config;
use crate::service::Metrics;
use crate::unattended::rules::Queues;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use zeroclaw_agent::provider::Provider;
use zeroclaw_agent::sandbox::{Sandbox, Support};
use zeroclaw_agent::session::Sessions;
use zeroclaw_agent::state::{AgentState, Dirs};
use zeroclaw_ipc::Paths;
use zeroclaw_protocol::GatewayStatus;

pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Debug)]
pub struct DaemonState {
    /// Sessions, turns, the provider, tools and MCP servers.
    pub agent: Arc<AgentState>,
    pub paths: Paths,
    /// Computed once: `status` answers it on every call.
    pub pid: u32,
    /// `status`'s members that never change, serialised the first time it is called.
    pub status_fixed: OnceLock<String>,
    pub config: Config,
    pub ephemeral: bool,
    pub started: Instant,
    /// Clients and running turns (the agent tells it of these).
    pub clients: Arc<ClientCounter>,
    /// Cancelled to stop the daemon (signal, `shutdown`, or the ephemeral rule).
    pub shutdown: CancellationToken,
    /// Cancelled once running turns have wound down, to close the connections: a turn's
    /// last events and answer reach its clients before they are disconnected.
    pub close_connections: CancellationToken,
    /// The gateway's tokens and login codes.
    pub tokens: Tokens,
    /// `status.gateway`: set once at start-up, before any connection is served.
    pub gateway: OnceLock<Option<GatewayStatus>>,
    /// Each webhook's and schedule's bounded queue of unattended runs (`unattended/`).
    pub runs: Queues,
    /// What `/metrics` serves (`service/metrics.rs`).
    pub metrics: Arc<Metrics>,
    next_connection: AtomicU64,
}

impl DaemonState {
    pub fn new(
        paths: Paths,
        config: Config,
        ephemeral: bool,
        sessions: Sessions,
        provider: Provider,
        tokens: Tokens,
        support: Support,
    ) -> Self {
        let metrics = Arc::new(Metrics::new());
        let clients = Arc::new(ClientCounter::new(metrics.clone()));
        let dirs = Dirs {
            data_dir: paths.data_dir.clone(),
            config_file: paths.config_file(),
        };
        let agent = AgentState::new(
            dirs,
            config.agent.clone(),
            sessions,
            provider,
            clients.clone(),
            Sandbox::new(support, hidden(&paths)),
        );
        let runs = Queues::new(&config);
        Self {
            agent: Arc::new(agent),
            runs,
            pid: std::process::id(),
            status_fixed: OnceLock::new(),
            paths,
            config,
            ephemeral,
            started: Instant::now(),
            clients,
            shutdown: CancellationToken::new(),
            close_connections: CancellationToken::new(),
            tokens,
            gateway: OnceLock::new(),
            metrics,
            next_connection: AtomicU64::new(1),
        }
    }

    pub fn next_connection_id(&self) -> u64 {
        self.next_connection.fetch_add(1, Ordering::Relaxed)
    }
}

/// What no sandboxed tool may read, write or connect to: the daemon's data dir (its
/// database holds every session and the token hashes), its config dir, its socket (a
/// command that reached it could approve its own requests), and the local services that
/// run commands for whoever connects (`service_sockets`).
fn hidden(paths: &Paths) -> Vec<std::path::PathBuf> {
    let mut hidden = vec![paths.data_dir.clone(), paths.config_dir.clone()];
    // A named pipe is no path; elsewhere the sandbox is unavailable anyway.
    if cfg!(unix) {
        hidden.push(paths.endpoint.as_path().to_path_buf());
    }
    hidden.extend(zeroclaw_agent::sandbox::service_sockets());
    hidden
}

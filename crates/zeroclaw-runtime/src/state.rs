//! What every connection of one daemon shares.

use crate::auth::Tokens;
use crate::clients::ClientCounter;
use crate::config::Config;
use crate::mcp::{Mcp, Settings};
use crate::provider::Provider;
use crate::session::Sessions;
use crate::tools::{EnvScrub, Tools, orphans};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use zeroclaw_ipc::Paths;
use zeroclaw_protocol::GatewayStatus;

pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Debug)]
pub struct DaemonState {
    pub paths: Paths,
    /// Computed once: `status` answers it on every call.
    pub pid: u32,
    /// `status`'s members that never change, serialised the first time it is called.
    pub status_fixed: OnceLock<String>,
    pub config: Config,
    pub ephemeral: bool,
    pub started: Instant,
    pub clients: ClientCounter,
    pub sessions: Sessions,
    pub provider: Provider,
    /// The tools turns offer the model; built once, changeable at run time (MCP servers).
    pub tools: Arc<Tools>,
    /// The servers of `[[mcp_servers]]`, their tools registered in `tools`.
    pub mcp: Mcp,
    /// Running turns, so shutdown can cancel them and wait for their history to be stored.
    pub turns: TaskTracker,
    /// One permit per running turn (`agent.max_running_turns`).
    pub turn_slots: Arc<Semaphore>,
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
    pub runs: crate::runs::Queues,
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
    ) -> Self {
        let turn_slots = Arc::new(Semaphore::new(config.agent.max_running_turns));
        let tools = Arc::new(Tools::builtin());
        let mcp = Mcp::start(
            &config.mcp_servers,
            tools.clone(),
            Settings {
                records: Some(orphans::dir(&paths.data_dir)),
                scrub: scrub(&config),
                cwd: None,
            },
        );
        let runs = crate::runs::Queues::new(&config);
        Self {
            runs,
            pid: std::process::id(),
            status_fixed: OnceLock::new(),
            paths,
            config,
            ephemeral,
            started: Instant::now(),
            clients: ClientCounter::default(),
            sessions,
            provider,
            tools,
            mcp,
            turns: TaskTracker::new(),
            turn_slots,
            shutdown: CancellationToken::new(),
            close_connections: CancellationToken::new(),
            tokens,
            gateway: OnceLock::new(),
            next_connection: AtomicU64::new(1),
        }
    }

    pub fn next_connection_id(&self) -> u64 {
        self.next_connection.fetch_add(1, Ordering::Relaxed)
    }
}

/// The daemon's variables no process it starts inherits (bash's commands, MCP servers).
pub fn scrub(config: &Config) -> EnvScrub {
    EnvScrub::new(
        config.provider.api_key_env.as_deref(),
        &config.tools.scrub_env,
    )
}

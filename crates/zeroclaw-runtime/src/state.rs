//! What every connection of one daemon shares.

use crate::clients::ClientCounter;
use crate::config::Config;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use zeroclaw_ipc::Paths;

pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Debug)]
pub struct DaemonState {
    pub paths: Paths,
    pub config: Config,
    pub ephemeral: bool,
    pub started: Instant,
    pub clients: ClientCounter,
    /// Cancelled to stop the daemon (signal, `shutdown`, or the ephemeral rule).
    pub shutdown: CancellationToken,
}

impl DaemonState {
    pub fn new(paths: Paths, config: Config, ephemeral: bool) -> Self {
        Self {
            paths,
            config,
            ephemeral,
            started: Instant::now(),
            clients: ClientCounter::default(),
            shutdown: CancellationToken::new(),
        }
    }
}

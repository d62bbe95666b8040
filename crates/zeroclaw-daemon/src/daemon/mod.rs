//! The daemon's lifecycle: open the store, open the doors, serve, and stop cleanly.
//!
//! [`serve`] runs any [`Listener`]'s accept loop; the local socket (or pipe) is the first
//! door ([`LocalDoor`]), and every door's connections end in the same gate and method table.

mod admission;
mod gateway;
mod local;
mod open_files;
mod serve;
mod signals;

pub use local::LocalDoor;
pub use serve::{Doors, Incoming, Listener, serve};

use crate::clients::EPHEMERAL_GRACE;
use crate::config::{Config, ConfigError};
use crate::state::DaemonState;
use std::sync::Arc;
use std::time::Duration;
use zeroclaw_agent::provider::Provider;
use zeroclaw_agent::session::Sessions;
use zeroclaw_agent::store::Store;
use zeroclaw_ipc::{BindError, LocalListener, Paths};

/// How long shutdown waits for connections to flush their last frames.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
pub struct DaemonOptions {
    pub paths: Paths,
    pub ephemeral: bool,
    pub gateway: GatewayChoice,
}

/// `zeroclaw daemon --gateway ADDR` / `--no-gateway`, or neither.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum GatewayChoice {
    /// `[gateway]` decides (never with `--ephemeral`).
    #[default]
    Config,
    Off,
    /// Serve it on this address whatever the config says.
    Listen(String),
}

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Bind(#[from] BindError),
    #[error("cannot install the signal handler: {0}")]
    Signal(std::io::Error),
    #[error("cannot open the session database {}: {source}", path.display())]
    Store {
        path: std::path::PathBuf,
        source: zeroclaw_agent::store::StoreError,
    },
    #[error("{0}")]
    Provider(String),
    #[error("{0}")]
    Gateway(String),
}

/// Starts the gateway and its door; a failure (the port is taken, say) is logged and shown
/// by `status`, and the daemon goes on serving its socket.
async fn start_gateway(
    state: &Arc<DaemonState>,
    doors: &Doors,
) -> Option<(tokio::task::JoinHandle<()>, tokio::task::JoinHandle<()>)> {
    let backend = Arc::new(gateway::DaemonBackend {
        state: state.clone(),
        doors: doors.clone(),
    });
    let started = zeroclaw_gateway::start(
        &state.config.gateway,
        state.config.daemon.max_frame_bytes,
        backend,
        state.shutdown.clone(),
        state.close_connections.clone(),
    )
    .await;
    match started {
        Ok(started) => {
            tracing::info!(url = %started.url, tls = started.tls, "gateway listening");
            let _ = state
                .gateway
                .set(Some(zeroclaw_protocol::GatewayStatus::Up {
                    url: started.url,
                    tls: started.tls,
                }));
            let door = tokio::spawn(serve(
                state.clone(),
                doors.clone(),
                gateway::GatewayDoor::new(started.connections),
            ));
            Some((door, started.task))
        }
        Err(error) => {
            tracing::warn!(error = %error, "the gateway is not serving; the socket is");
            let _ = state
                .gateway
                .set(Some(zeroclaw_protocol::GatewayStatus::Down { error }));
            None
        }
    }
}

/// How long shutdown waits for MCP servers to be stopped (their process groups killed).
const MCP_STOP: Duration = Duration::from_secs(5);

/// How long shutdown waits for cancelled turns to store what they have.
const TURN_WIND_DOWN: Duration = Duration::from_secs(10);

/// Runs the daemon until a signal, `shutdown`, or (with `--ephemeral`) the last client
/// leaving. Returns `Ok` on every orderly stop.
pub async fn run(options: DaemonOptions) -> Result<(), DaemonError> {
    let mut config = Config::load(&options.paths.config_file())?;
    config.daemon.max_connections = open_files::connection_cap(config.daemon.max_connections);
    let provider = Provider::new(config.agent.provider.clone()).map_err(DaemonError::Provider)?;
    let serve_gateway = match &options.gateway {
        GatewayChoice::Off => false,
        GatewayChoice::Listen(addr) => {
            config.gateway.listen.clone_from(addr);
            true
        }
        GatewayChoice::Config => config.gateway.enabled && !options.ephemeral,
    };
    if serve_gateway {
        // Its rules (loopback, TLS) are configuration: refused before anything starts.
        config
            .gateway
            .plan()
            .map_err(|e| DaemonError::Gateway(e.0))?;
    }
    // One daemon per data dir, whatever its endpoint: the data dir's lock comes before
    // anything in the data dir is touched (the store opened, runs and turns marked, bash
    // records reaped), so a second daemon is refused having changed nothing. It is held
    // until the store is closed, after the socket is gone: a daemon started meanwhile is
    // refused, never served by a store still being written.
    let data_dir = zeroclaw_ipc::claim_data_dir(&options.paths)?;
    let mut listener = LocalListener::bind(&options.paths, &data_dir)?;
    if config.daemon.socket_check_secs > 0 {
        listener.watch_socket(Duration::from_secs(config.daemon.socket_check_secs));
    }
    let db_path = options
        .paths
        .data_dir
        .join(zeroclaw_agent::store::FILE_NAME);
    // Opening reads and migrates the file: off the reactor, like every later store call.
    let opened = {
        let path = db_path.clone();
        tokio::task::spawn_blocking(move || Store::open(&path))
            .await
            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
    };
    let opened = match opened {
        Ok(opened) => opened,
        Err(source) => {
            // Refused (damaged, empty, newer): no socket is left behind for clients to find.
            listener.close();
            return Err(DaemonError::Store {
                path: db_path,
                source,
            });
        }
    };
    if opened.interrupted > 0 {
        tracing::warn!(
            turns = opened.interrupted,
            "marked turns left running by a previous daemon as interrupted"
        );
    }
    let orphans = zeroclaw_agent::tools::orphans::reap(&zeroclaw_agent::tools::orphans::dir(
        &options.paths.data_dir,
    ));
    if orphans > 0 {
        tracing::warn!(
            groups = orphans,
            "killed bash commands left running by a previous daemon"
        );
    }
    let tokens = match crate::auth::Tokens::load(
        opened.store.clone(),
        crate::auth::SessionLimits::of(&config.gateway),
    )
    .await
    {
        Ok(tokens) => tokens,
        Err(source) => {
            listener.close();
            return Err(DaemonError::Store {
                path: db_path,
                source,
            });
        }
    };
    let frame_cap = config.daemon.max_frame_bytes;
    let state = Arc::new(DaemonState::new(
        options.paths.clone(),
        config,
        options.ephemeral,
        Sessions::new(opened.store, opened.sessions, frame_cap),
        provider,
        tokens,
    ));
    let signals = signals::watch(state.shutdown.clone()).map_err(DaemonError::Signal)?;
    if state.ephemeral {
        let state = state.clone();
        tokio::spawn(async move {
            state
                .clients
                .exit_when_idle(EPHEMERAL_GRACE, state.shutdown.clone())
                .await;
        });
    }
    tracing::info!(
        endpoint = %state.paths.endpoint,
        pid = std::process::id(),
        ephemeral = state.ephemeral,
        "listening"
    );

    let doors = Doors::new(&state);
    let gateway = if serve_gateway {
        start_gateway(&state, &doors).await
    } else {
        let _ = state.gateway.set(None);
        None
    };
    crate::unattended::recover(&state).await;
    crate::unattended::start(&state, gateway.is_some());
    let local = tokio::spawn(serve(
        state.clone(),
        doors.clone(),
        LocalDoor::new(listener, state.config.daemon.max_frame_bytes),
    ));
    state.shutdown.cancelled().await;

    tracing::info!("shutting down");
    // The door closes (and removes its socket) as its accept loop ends.
    if let Err(e) = local.await {
        tracing::error!(error = %e, "the socket's accept loop failed");
    }
    if let Some((door, accept_loop)) = gateway {
        let _ = door.await;
        let _ = accept_loop.await;
    }
    let running = state.agent.sessions.cancel_all();
    state.agent.turns.close();
    if running > 0 {
        tracing::info!(turns = running, "cancelling running turns");
    }
    if tokio::time::timeout(TURN_WIND_DOWN, state.agent.turns.wait())
        .await
        .is_err()
    {
        tracing::warn!("some turns did not stop within {TURN_WIND_DOWN:?}");
    }
    // Their children die with the daemon (and a SIGKILLed daemon's are reaped at the next
    // start, from their records).
    state.agent.mcp.stop(MCP_STOP).await;
    state.agent.sessions.stop_mcp(MCP_STOP).await;
    state.close_connections.cancel();
    doors.connections.close();
    if tokio::time::timeout(DRAIN_TIMEOUT, doors.connections.wait())
        .await
        .is_err()
    {
        tracing::warn!("some connections did not finish within {DRAIN_TIMEOUT:?}");
    }
    // Last: nothing writes any more. Closing checkpoints the WAL, so the database file is
    // whole on its own (a copy of it is a backup).
    state.agent.sessions.store.close().await;
    drop(data_dir);
    signals.abort();
    tracing::info!("stopped");
    Ok(())
}

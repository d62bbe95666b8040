//! The start-up steps of [`run`](super::run), each on its own; their order is written
//! there.

use super::local::LocalDoor;
use super::serve::{Doors, serve};
use super::{DaemonError, DaemonOptions, GatewayChoice, open_files};
use crate::auth::{SessionLimits, Tokens};
use crate::clients::EPHEMERAL_GRACE;
use crate::config::Config;
use crate::state::DaemonState;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::task::JoinHandle;
use zeroclaw_agent::provider::Provider;
use zeroclaw_agent::sandbox::{Mode, Support};
use zeroclaw_agent::session::Sessions;
use zeroclaw_agent::store::{Opened, Store};
use zeroclaw_agent::tools::orphans;
use zeroclaw_ipc::{DataDirLock, Paths};

/// What the configuration and the command line decide.
pub struct Settings {
    pub config: Config,
    pub provider: Provider,
    /// Whether the gateway is to serve (on `config.gateway.listen`).
    pub gateway: bool,
    /// Where that address came from: the config, or `--gateway`.
    pub listen_from: zeroclaw_gateway::ListenFrom,
}

/// Reads `config.toml` and applies the command line to it: the connection cap under the
/// open-file limit (the soft limit raised first), the provider, whether and where the
/// gateway serves. Everything refused here — a malformed file, an unknown key, a provider
/// it cannot build, a gateway its rules forbid (a remote bind without TLS, say) — stops
/// the daemon having touched nothing.
pub fn read_settings(options: &DaemonOptions) -> Result<Settings, DaemonError> {
    let mut config = Config::load(&options.paths.config_file())?;
    config.daemon.max_connections = open_files::connection_cap(config.daemon.max_connections);
    let provider = Provider::new(config.agent.provider.clone()).map_err(DaemonError::Provider)?;
    let gateway = match &options.gateway {
        GatewayChoice::Off => false,
        GatewayChoice::Listen(addr) => {
            config.gateway.listen.clone_from(addr);
            true
        }
        GatewayChoice::Config => config.gateway.enabled && !options.ephemeral,
    };
    if gateway {
        config
            .gateway
            .plan()
            .map_err(|e| DaemonError::Gateway(e.0))?;
    }
    let listen_from = match options.gateway {
        GatewayChoice::Listen(_) => zeroclaw_gateway::ListenFrom::Flag,
        _ => zeroclaw_gateway::ListenFrom::Config,
    };
    Ok(Settings {
        config,
        provider,
        gateway,
        listen_from,
    })
}

/// Takes the data dir's lock (creating the directory, private, if need be): one daemon
/// per data dir, whatever its endpoint. A second daemon is refused here, naming the
/// first one's pid and endpoint, so it must come before anything in the data dir is
/// touched (the socket bound, the store opened, runs and turns marked, bash records
/// reaped); and it is held until the store is closed, so a daemon started meanwhile is
/// refused, never served by a store still being written.
pub fn claim_data_dir(paths: &Paths) -> Result<DataDirLock, DaemonError> {
    Ok(zeroclaw_ipc::claim_data_dir(paths)?)
}

/// Binds the endpoint (the data dir's lock held). It comes before the store is opened,
/// so a daemon whose endpoint is taken is refused having changed nothing there; a later
/// step that fails drops it, which removes the socket. Clients that connect meanwhile
/// wait in the listen backlog until [`serve_socket`].
pub fn bind_socket(
    paths: &Paths,
    lock: &DataDirLock,
    config: &Config,
) -> Result<LocalDoor, DaemonError> {
    Ok(LocalDoor::bind(paths, lock, &config.daemon)?)
}

fn store_file(paths: &Paths) -> PathBuf {
    paths.data_dir.join(zeroclaw_agent::store::FILE_NAME)
}

/// Opens the store: reads, checks and migrates the file (a damaged, empty or newer one
/// is refused, saying why), and marks the turns a previous daemon left running as
/// interrupted. Off the reactor, like every later store call.
pub async fn open_store(paths: &Paths) -> Result<Opened, DaemonError> {
    let path = store_file(paths);
    let opened = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || Store::open(&path))
            .await
            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
    };
    let opened = opened.map_err(|source| DaemonError::Store { path, source })?;
    if opened.interrupted > 0 {
        tracing::warn!(
            turns = opened.interrupted,
            "marked turns left running by a previous daemon as interrupted"
        );
    }
    Ok(opened)
}

/// Kills the bash commands a previous daemon left running (a SIGKILLed one cannot stop
/// them), from the records in the data dir.
pub fn reap_orphans(paths: &Paths) {
    let reaped = orphans::reap(&orphans::dir(&paths.data_dir));
    if reaped > 0 {
        tracing::warn!(
            groups = reaped,
            "killed bash commands left running by a previous daemon"
        );
    }
}

/// Loads the gateway's tokens and dashboard sessions from the store (deleting the
/// sessions that expired meanwhile).
pub async fn load_tokens(
    paths: &Paths,
    store: &Store,
    config: &Config,
) -> Result<Tokens, DaemonError> {
    Tokens::load(store.clone(), SessionLimits::of(&config.gateway))
        .await
        .map_err(|source| DaemonError::Store {
            path: store_file(paths),
            source,
        })
}

/// Finds what the kernel offers the sandbox, once (a trial child applies a whole sandbox:
/// a few milliseconds), and says at start-up what is missing: no silent fallback. `status`
/// reports the same.
pub fn probe_sandbox(config: &Config) -> Support {
    let support = Support::probe();
    let sandbox = &config.agent.sandbox;
    match support.unavailable_reason() {
        None => {
            tracing::info!(mechanism = %support.mechanism(), mode = %sandbox.mode, network = sandbox.network, "sandbox");
            for gap in support.gaps() {
                tracing::warn!("sandbox: {gap}");
            }
        }
        Some(reason) if sandbox.mode == Mode::Full => {
            tracing::info!(
                "sandbox off ([sandbox] mode = \"full\"); it would be unavailable anyway: {reason}"
            );
        }
        Some(reason) if sandbox.require => {
            tracing::error!(
                "sandbox unavailable: {reason}; [sandbox] require = true, so tools that start \
                 commands are refused"
            );
        }
        Some(reason) => {
            tracing::warn!(
                "sandbox unavailable: {reason}; tools' commands run UNCONFINED, with the user's \
                 full rights (set [sandbox] require = true to refuse them instead); unattended \
                 runs are refused unless their entry sets sandbox = {{ require = false }}"
            );
        }
    }
    support
}

/// What every connection shares: the agent over the opened store, and the daemon's parts
/// (config, tokens, the unattended queues, the shutdown tokens).
pub fn assemble(
    options: &DaemonOptions,
    config: Config,
    provider: Provider,
    opened: Opened,
    tokens: Tokens,
    support: Support,
) -> Arc<DaemonState> {
    let frame_cap = config.daemon.max_frame_bytes;
    Arc::new(DaemonState::new(
        options.paths.clone(),
        config,
        options.ephemeral,
        Sessions::new(opened.store, opened.sessions, frame_cap),
        provider,
        tokens,
        support,
    ))
}

/// With `--ephemeral`: cancels `shutdown` a grace period after the last client leaves
/// (never before the first one came).
pub fn keep_ephemeral_rule(state: &Arc<DaemonState>) {
    if !state.ephemeral {
        return;
    }
    let state = state.clone();
    tokio::spawn(async move {
        state
            .clients
            .exit_when_idle(EPHEMERAL_GRACE, state.shutdown.clone())
            .await;
    });
}

/// Runs the socket's accept loop until shutdown; the socket is closed (and its file
/// removed) as the loop ends.
pub fn serve_socket(state: &Arc<DaemonState>, doors: &Doors, socket: LocalDoor) -> JoinHandle<()> {
    tokio::spawn(serve(state.clone(), doors.clone(), socket))
}

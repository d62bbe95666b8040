//! The start-up steps of [`run`](super::run), each on its own; their order is written
//! there.

use super::local::LocalDoor;
use super::serve::{Doors, serve};
use super::{DaemonError, DaemonOptions, GatewayChoice, open_files};
use crate::auth::{SessionLimits, Tokens};
use crate::clients::EPHEMERAL_GRACE;
use crate::config::Config;
use crate::service::{Activation, Notifier};
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
    let provider = Provider::configured(&config.agent).map_err(DaemonError::Provider)?;
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
///
/// With socket activation, the socket the service manager passed as `rpc` is served
/// instead (the same rules; its file is the manager's and stays).
pub fn bind_socket(
    paths: &Paths,
    lock: &DataDirLock,
    config: &Config,
    activation: &mut Activation,
) -> Result<LocalDoor, DaemonError> {
    #[cfg(unix)]
    if let Some(socket) = activation.take_rpc() {
        tracing::info!(endpoint = %paths.endpoint, "serving the socket the service manager passed");
        return Ok(LocalDoor::inherit(socket, paths, lock, &config.daemon)?);
    }
    let _ = activation;
    Ok(LocalDoor::bind(paths, lock, &config.daemon)?)
}

/// The gateway's socket if the service manager passed one (`gateway`): the gateway then
/// serves on it whatever `[gateway] enabled` says, under the same rules for its address
/// (checked when it starts), unless `--no-gateway` (the socket is then closed, with a
/// warning). Checked to be a listening TCP socket before anything is touched.
pub fn passed_gateway(
    activation: &mut Activation,
    options: &DaemonOptions,
    settings: &mut Settings,
) -> Result<Option<std::net::TcpListener>, DaemonError> {
    #[cfg(unix)]
    {
        let Some(socket) = activation.take_gateway().map_err(DaemonError::Gateway)? else {
            return Ok(None);
        };
        if options.gateway == GatewayChoice::Off {
            tracing::warn!(
                "--no-gateway: the gateway socket the service manager passed is not served"
            );
            return Ok(None);
        }
        settings.gateway = true;
        Ok(Some(socket))
    }
    #[cfg(not(unix))]
    {
        let _ = (activation, options, settings);
        Ok(None)
    }
}

/// Tells the service manager the daemon is ready (`READY=1`, with a first `STATUS=`),
/// then keeps its status line up to date as clients and turns come and go. Only once the
/// store is open and every door listens: with `Type=notify`, the manager holds back what
/// depends on the daemon until then. Nothing without a manager.
pub fn announce_ready(state: &Arc<DaemonState>, notifier: &Arc<Notifier>) {
    if !notifier.is_on() {
        return;
    }
    notifier.ready(&status_line(state));
    let (state, notifier) = (state.clone(), notifier.clone());
    tokio::spawn(async move {
        // A watch channel: only the latest counts are kept, however fast they change.
        let mut changes = state.clients.changes();
        loop {
            tokio::select! {
                () = state.shutdown.cancelled() => return,
                changed = changes.changed() => if changed.is_err() { return },
            }
            notifier.status(&status_line(&state));
        }
    });
}

/// `STATUS=`: what the daemon is doing, in words `systemctl status` shows.
fn status_line(state: &DaemonState) -> String {
    format!(
        "serving {}: {} clients, {} turns running, {} sessions loaded",
        state.paths.endpoint,
        state.clients.current(),
        state.clients.turns(),
        state.agent.sessions.loaded_count()
    )
}

/// With `WATCHDOG_USEC`: sends `WATCHDOG=1` at half that period while the daemon is
/// healthy. The pings come from a task on the daemon's own runtime, after a read through
/// the store's threads has answered: a runtime that is stuck, or a store that no longer
/// answers, stops the pings, and the manager restarts the daemon.
pub fn keep_watchdog(state: &Arc<DaemonState>, notifier: &Arc<Notifier>) {
    let Some(every) = notifier.watchdog_every() else {
        return;
    };
    tracing::info!(every = ?every, "watchdog pings on");
    let (state, notifier) = (state.clone(), notifier.clone());
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = state.shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            let store = state.agent.sessions.store.session("watchdog");
            match tokio::time::timeout(every, store).await {
                Ok(Ok(_)) => notifier.watchdog(),
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "the store failed its health read; no watchdog ping")
                }
                Err(_) => tracing::warn!(
                    "the store did not answer its health read in time; no watchdog ping"
                ),
            }
        }
    });
}

/// `--exit-when-idle DURATION`: once no connection has been open and no turn has run for
/// that long, stops the doors between two connections (`Doors::pause`), checks again that
/// nothing came in meanwhile, and shuts down; if something did, the doors go on and the
/// wait starts over. With socket activation the manager keeps the listening socket, so a
/// connection that arrives as the daemon exits waits in its backlog and is served by the
/// next instance. A daemon with `[[schedules]]` never exits this way: nothing would run
/// them while it is gone.
pub fn keep_idle_rule(state: &Arc<DaemonState>, doors: &Doors, idle: Option<std::time::Duration>) {
    let Some(idle) = idle else {
        return;
    };
    if !state.config.schedules.is_empty() {
        tracing::warn!(
            "--exit-when-idle is ignored: [[schedules]] are configured, and nothing would run them while the daemon is gone"
        );
        return;
    }
    let (state, doors) = (state.clone(), doors.clone());
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = state.shutdown.cancelled() => return,
                () = state.clients.idle_for(idle) => {}
            }
            let paused = doors.pause().await;
            if state.clients.nothing_open() {
                tracing::info!(idle = ?idle, "idle; exiting (--exit-when-idle)");
                state.shutdown.cancel();
                // Held until the loops have seen the shutdown: none accepts again.
                drop(paused);
                return;
            }
            drop(paused);
        }
    });
}

fn store_file(paths: &Paths) -> PathBuf {
    paths.data_dir.join(zeroclaw_agent::store::FILE_NAME)
}

/// Opens the store: reads, checks (unless a clean close left it as it is) and migrates the
/// file (a damaged, empty or newer one is refused, saying why), and marks the turns a
/// previous daemon left running as interrupted. Off the reactor, like every later store
/// call.
pub async fn open_store(paths: &Paths) -> Result<Opened, DaemonError> {
    let path = store_file(paths);
    let opened = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || Store::open(&path))
            .await
            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
    };
    let opened = opened.map_err(|source| DaemonError::Store { path, source })?;
    if opened.checked {
        tracing::debug!("store: quick_check read every page");
    } else {
        tracing::debug!("store: unchanged since a clean close; quick_check skipped");
    }
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

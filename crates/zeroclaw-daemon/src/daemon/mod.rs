//! The daemon's lifecycle: [`run`] is the whole of it, a sequence of named steps (in
//! `start.rs` and `stop.rs`, the gateway's in `gateway.rs`), with the rules of their order
//! written where each is taken. A new step (socket activation, readiness and watchdog
//! notifications, metrics) is one more line there.
//!
//! [`serve`](serve::serve) runs any [`Listener`](serve::Listener)'s accept loop; the local
//! socket (or pipe) is the first door ([`LocalDoor`](local::LocalDoor)), the gateway's
//! `/rpc` the second (`gateway.rs`), and every door's connections end in the same gate and
//! method table.

mod admission;
mod direct;
mod gateway;
mod local;
mod open_files;
mod serve;
mod signals;
mod start;
mod stop;

pub use serve::{Doors, Incoming};

use crate::config::ConfigError;
use crate::service::{Activation, Notifier};
use zeroclaw_ipc::{BindError, Paths};

#[derive(Debug)]
pub struct DaemonOptions {
    pub paths: Paths,
    pub ephemeral: bool,
    pub gateway: GatewayChoice,
    /// The sockets a service manager passed (`LISTEN_FDS`); empty otherwise.
    pub activation: Activation,
    /// The service manager's notification socket (`NOTIFY_SOCKET`); off otherwise.
    pub notifier: Notifier,
    /// `--exit-when-idle`: exit after this long with no connection and no running turn.
    pub exit_when_idle: Option<std::time::Duration>,
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

/// Runs the daemon until a signal, `shutdown`, or (with `--ephemeral`) the last client
/// leaving. Returns `Ok` on every orderly stop; a start-up step that fails returns its
/// error, leaving no socket behind.
pub async fn run(options: DaemonOptions) -> Result<(), DaemonError> {
    let DaemonOptions {
        mut activation,
        notifier,
        exit_when_idle,
        ..
    } = options;
    let options = DaemonOptions {
        activation: Activation::default(),
        notifier: Notifier::default(),
        ..options
    };
    // Start-up. Until the doors open, nothing is served.
    // Everything the configuration can refuse, before anything is touched.
    let mut settings = start::read_settings(&options)?;
    // A gateway socket the service manager passed, checked before anything is touched.
    let gateway_socket = start::passed_gateway(&mut activation, &options, &mut settings)?;
    // Before anything in the data dir: a second daemon is refused here. Held to the end.
    let data_dir = start::claim_data_dir(&options.paths)?;
    // From here a failing step drops the socket, which removes it (never a passed one).
    let socket = start::bind_socket(&options.paths, &data_dir, &settings.config, &mut activation)?;
    let opened = start::open_store(&options.paths).await?;
    start::reap_orphans(&options.paths);
    let tokens = start::load_tokens(&options.paths, &opened.store, &settings.config).await?;
    let support = start::probe_sandbox(&settings.config);
    let state = start::assemble(
        &options,
        settings.config,
        settings.provider,
        opened,
        tokens,
        support,
    );
    let signals = signals::watch(state.shutdown.clone()).map_err(DaemonError::Signal)?;
    start::keep_ephemeral_rule(&state);
    // Before any door: no delivery or `schedule/run` overtakes a run left waiting.
    crate::unattended::recover(&state).await;
    let doors = Doors::new(&state);
    // Its HTTP loop accepts from here; what it admits waits for the doors to open.
    let gateway = gateway::open(
        &state,
        &doors,
        settings.gateway,
        settings.listen_from,
        gateway_socket,
    )
    .await;
    crate::unattended::start(&state, gateway.is_some());
    let socket = start::serve_socket(&state, &doors, socket);
    // Ready: every connection admitted so far, and each later one, is served.
    doors.open();
    tracing::info!(
        endpoint = %state.paths.endpoint,
        pid = std::process::id(),
        ephemeral = state.ephemeral,
        activated = activation.activated,
        "listening"
    );
    // After the doors open: the manager passes on connections it held once told.
    let notifier = std::sync::Arc::new(notifier);
    start::announce_ready(&state, &notifier);
    start::keep_watchdog(&state, &notifier);
    start::keep_idle_rule(&state, &doors, exit_when_idle);

    state.shutdown.cancelled().await;

    // Shutdown.
    tracing::info!("shutting down");
    // First: the manager knows the stop is orderly (and starts no instance meanwhile).
    stop::announce_stopping(&notifier);
    // First, so nothing new comes in while the rest stops.
    stop::close_doors(socket, gateway).await;
    stop::stop_turns(&state).await;
    // After the turns, which may be calling their tools.
    stop::stop_mcp_servers(&state).await;
    // After the turns: a turn's last events and answer reach its clients first.
    stop::close_connections(&state, &doors).await;
    // Last: nothing writes any more.
    stop::close_store(&state).await;
    // Only once the store is closed: a daemon started now finds a whole file.
    drop(data_dir);
    signals.abort();
    tracing::info!("stopped");
    Ok(())
}

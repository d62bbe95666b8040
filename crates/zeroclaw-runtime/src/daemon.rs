//! The daemon's lifecycle: listen, accept, serve, and stop cleanly.

use crate::clients::EPHEMERAL_GRACE;
use crate::config::{Config, ConfigError};
use crate::connection::{Connection, Gate};
use crate::provider::Provider;
use crate::session::Sessions;
use crate::state::DaemonState;
use crate::store::Store;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio_util::task::TaskTracker;
use zeroclaw_ipc::{Accepted, BindError, LocalListener, LocalTransport, Paths};
use zeroclaw_rpc::{Peer, PeerConfig, codes};

/// How long shutdown waits for connections to flush their last frames.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);
/// Accept-error backoff bounds (descriptor exhaustion clears only when others close).
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(10);
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

#[derive(Debug, Clone)]
pub struct DaemonOptions {
    pub paths: Paths,
    pub ephemeral: bool,
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
        source: crate::store::StoreError,
    },
    #[error("{0}")]
    Provider(String),
}

/// How long shutdown waits for cancelled turns to store what they have.
const TURN_WIND_DOWN: Duration = Duration::from_secs(10);

/// Runs the daemon until a signal, `shutdown`, or (with `--ephemeral`) the last client
/// leaving. Returns `Ok` on every orderly stop.
pub async fn run(options: DaemonOptions) -> Result<(), DaemonError> {
    let config = Config::load(&options.paths.config_file())?;
    let provider = Provider::new(config.provider.clone()).map_err(DaemonError::Provider)?;
    // Bind first: it takes the lock, so a second daemon never opens the database.
    let mut listener = LocalListener::bind(&options.paths)?;
    let db_path = options.paths.data_dir.join("zeroclaw.db");
    let (store, interrupted) = Store::open(&db_path).map_err(|source| DaemonError::Store {
        path: db_path.clone(),
        source,
    })?;
    if interrupted > 0 {
        tracing::warn!(
            turns = interrupted,
            "marked turns left running by a previous daemon as interrupted"
        );
    }
    let orphans = crate::tools::orphans::reap(&crate::tools::orphans::dir(&options.paths.data_dir));
    if orphans > 0 {
        tracing::warn!(
            groups = orphans,
            "killed bash commands left running by a previous daemon"
        );
    }
    let state = Arc::new(DaemonState::new(
        options.paths.clone(),
        config,
        options.ephemeral,
        Sessions::new(store).map_err(|source| DaemonError::Store {
            path: db_path.clone(),
            source,
        })?,
        provider,
    ));
    let signals = spawn_signal_watch(state.shutdown.clone()).map_err(DaemonError::Signal)?;
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

    let connections = TaskTracker::new();
    let slots = Arc::new(Semaphore::new(state.config.daemon.max_connections));
    let mut backoff = ACCEPT_BACKOFF_MIN;
    loop {
        let accepted = tokio::select! {
            biased;
            () = state.shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok(accepted) => {
                backoff = ACCEPT_BACKOFF_MIN;
                admit(&state, &connections, &slots, accepted);
            }
            Err(e) => {
                tracing::warn!(error = %e, retry_in = ?backoff, "accept failed; backing off");
                tokio::select! {
                    () = state.shutdown.cancelled() => break,
                    () = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
            }
        }
    }

    tracing::info!("shutting down");
    listener.close();
    let running = state.sessions.cancel_all();
    state.turns.close();
    if running > 0 {
        tracing::info!(turns = running, "cancelling running turns");
    }
    if tokio::time::timeout(TURN_WIND_DOWN, state.turns.wait())
        .await
        .is_err()
    {
        tracing::warn!("some turns did not stop within {TURN_WIND_DOWN:?}");
    }
    state.close_connections.cancel();
    connections.close();
    if tokio::time::timeout(DRAIN_TIMEOUT, connections.wait())
        .await
        .is_err()
    {
        tracing::warn!("some connections did not finish within {DRAIN_TIMEOUT:?}");
    }
    signals.abort();
    tracing::info!("stopped");
    Ok(())
}

fn admit(
    state: &Arc<DaemonState>,
    connections: &TaskTracker,
    slots: &Arc<Semaphore>,
    accepted: Accepted,
) {
    let Accepted { stream, peer } = accepted;
    if !peer.is_trusted() {
        tracing::warn!(peer = %peer.label, "refused a connection from another user");
        return;
    }
    let transport = LocalTransport::new(
        stream,
        peer.label.clone(),
        state.config.daemon.max_frame_bytes,
    );
    let Ok(slot) = slots.clone().try_acquire_owned() else {
        let limit = state.config.daemon.max_connections;
        tracing::warn!(peer = %peer.label, limit, "connection limit reached; refusing");
        connections.spawn(refuse(transport, limit));
        return;
    };
    tracing::info!(peer = %peer.label, "connection accepted");
    let peer_config = PeerConfig {
        outbound_queue: state.config.daemon.outbound_queue,
        max_in_flight: state.config.daemon.max_requests_in_flight,
    };
    let (rpc_peer, handle) = Peer::new(transport, peer_config);
    let connection = Connection::new(state.clone(), handle.clone());
    let close = state.close_connections.clone();
    connections.spawn(async move {
        let run = rpc_peer.run(Arc::new(Gate(connection.clone())));
        tokio::pin!(run);
        tokio::select! {
            () = &mut run => {}
            () = close.cancelled() => {
                handle.close();
                run.await;
            }
        }
        connection.finished();
        tracing::info!(peer = %peer.label, "connection closed");
        drop(slot);
        release_freed_memory();
    });
}

/// Hands memory freed by closed connections back to the OS, a second after the closes
/// (one trim for a whole burst of them). glibc's allocator keeps freed heap pages for
/// reuse, so after a burst of clients the daemon's RSS would otherwise stay tens of MiB
/// above its idle size.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::sync::atomic::{AtomicBool, Ordering};
        static TRIM_PENDING: AtomicBool = AtomicBool::new(false);
        if TRIM_PENDING.swap(true, Ordering::AcqRel) {
            return;
        }
        tokio::spawn(async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            TRIM_PENDING.store(false, Ordering::Release);
            let _ = tokio::task::spawn_blocking(|| {
                // SAFETY: malloc_trim only walks and releases the allocator's own free
                // lists; it is thread-safe and has no preconditions.
                unsafe { libc::malloc_trim(0) };
                tracing::debug!("returned freed heap to the OS");
            })
            .await;
        });
    }
}

/// Tells a connection over the limit why it is being closed, then closes it.
async fn refuse(transport: LocalTransport, limit: usize) {
    use zeroclaw_rpc::transport::{FrameSink, RpcTransport};
    let (_, mut sink) = transport.into_halves();
    let error = zeroclaw_rpc::RpcError::new(
        codes::LIMIT_REACHED,
        format!("the daemon is serving its limit of {limit} connections; close another client or raise daemon.max_connections"),
    )
    .with_data(serde_json::json!({ "limit": limit }));
    let mut line = zeroclaw_rpc::message::encode_response(&serde_json::Value::Null, &Err(error));
    line.push(b'\n');
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let _ = zeroclaw_rpc::transport::write_all(&mut sink, &line).await;
        let _ = sink.close().await;
    })
    .await;
}

/// SIGTERM and SIGINT (Ctrl-C on Windows) stop the daemon gracefully.
fn spawn_signal_watch(
    shutdown: tokio_util::sync::CancellationToken,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        // SIGXFSZ's default action kills the process at the first write past a file-size
        // limit (`ulimit -f`). Handled, it lets that write fail with EFBIG, which the store
        // reports as a storage error while the daemon keeps serving.
        let mut xfsz = signal(SignalKind::from_raw(rustix::process::Signal::XFSZ.as_raw()))?;
        Ok(tokio::spawn(async move {
            let name = loop {
                tokio::select! {
                    _ = term.recv() => break "SIGTERM",
                    _ = int.recv() => break "SIGINT",
                    _ = xfsz.recv() => tracing::warn!("a write went past the file-size limit (SIGXFSZ); it failed and the daemon goes on"),
                }
            };
            tracing::info!(signal = name, "signal received");
            shutdown.cancel();
        }))
    }
    #[cfg(windows)]
    {
        let mut ctrl_c = tokio::signal::windows::ctrl_c()?;
        let mut close = tokio::signal::windows::ctrl_close()?;
        Ok(tokio::spawn(async move {
            tokio::select! {
                _ = ctrl_c.recv() => {}
                _ = close.recv() => {}
            }
            tracing::info!("console signal received");
            shutdown.cancel();
        }))
    }
}

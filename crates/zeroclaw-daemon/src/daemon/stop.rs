//! The shutdown steps of [`run`](super::run), taken once `shutdown` is cancelled, each on
//! its own; their order is written there.

use super::gateway;
use super::serve::Doors;
use crate::state::DaemonState;
use std::time::Duration;
use tokio::task::JoinHandle;

/// How long shutdown waits for cancelled turns to store what they have.
const TURN_WIND_DOWN: Duration = Duration::from_secs(10);

/// How long shutdown waits for MCP servers to be stopped (their process groups killed).
const MCP_STOP: Duration = Duration::from_secs(5);

/// How long shutdown waits for connections to flush their last frames.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// Tells the service manager an orderly stop has begun (`STOPPING=1`; nothing without
/// one).
pub fn announce_stopping(notifier: &crate::service::Notifier) {
    notifier.stopping();
}

/// Waits for the doors' accept loops to end. Each ends as soon as `shutdown` is
/// cancelled (the socket's file is removed as its loop ends), so nothing new comes in
/// while the rest stops; connections already served go on.
pub async fn close_doors(socket: JoinHandle<()>, gateway: Option<gateway::Serving>) {
    if let Err(e) = socket.await {
        tracing::error!(error = %e, "the socket's accept loop failed");
    }
    if let Some(gateway) = gateway {
        gateway.closed().await;
    }
}

/// Cancels every running turn (unattended runs' too) and starts no more, then waits up to
/// [`TURN_WIND_DOWN`] for them to store what they have. The unattended workers are tasks
/// of the same tracker, so they have ended too when this returns in time.
pub async fn stop_turns(state: &DaemonState) {
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
}

/// Stops the MCP servers, the daemon's and each session's, killing their process groups.
/// Their children die with the daemon (and a SIGKILLed daemon's are reaped at the next
/// start, from their records).
pub async fn stop_mcp_servers(state: &DaemonState) {
    state.agent.mcp.stop(MCP_STOP).await;
    state.agent.sessions.stop_mcp(MCP_STOP).await;
}

/// Closes every connection, and waits up to [`DRAIN_TIMEOUT`] for them to flush their
/// last frames.
pub async fn close_connections(state: &DaemonState, doors: &Doors) {
    state.close_connections.cancel();
    doors.connections.close();
    if tokio::time::timeout(DRAIN_TIMEOUT, doors.connections.wait())
        .await
        .is_err()
    {
        tracing::warn!("some connections did not finish within {DRAIN_TIMEOUT:?}");
    }
}

/// Closes the store. Closing checkpoints the WAL, so the database file is whole on its own
/// (a copy of it is a backup).
pub async fn close_store(state: &DaemonState) {
    state.agent.sessions.store.close().await;
}

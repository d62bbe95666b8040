//! Counting initialized clients and running turns, and the ephemeral daemon's exit rule
//! built on the counts.

use crate::service::Metrics;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use zeroclaw_agent::state::TurnCount;

/// How long an ephemeral daemon waits after its last client leaves.
pub const EPHEMERAL_GRACE: Duration = Duration::from_secs(1);

/// The counts at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Initialized clients connected.
    pub current: usize,
    ever: u64,
    /// Turns running; a turn outlives the client that started it, so it keeps an
    /// ephemeral daemon up too.
    pub turns: usize,
    /// Connections admitted and not yet closed, initialized or not (`--exit-when-idle`
    /// waits for none: one that has not initialized yet is a client all the same).
    connections: usize,
}

impl Counts {
    fn idle(&self) -> bool {
        self.current == 0 && self.turns == 0
    }

    fn nothing_open(&self) -> bool {
        self.idle() && self.connections == 0
    }
}

/// Clients that completed `initialize` and are still connected. A watch channel, so the
/// ephemeral rule waits on changes instead of polling.
#[derive(Debug)]
pub struct ClientCounter {
    counts: watch::Sender<Counts>,
    /// What turns tell it of their model and tool calls goes on to the metrics.
    metrics: Arc<Metrics>,
}

impl Default for ClientCounter {
    fn default() -> Self {
        Self::new(Arc::new(Metrics::new()))
    }
}

impl ClientCounter {
    pub fn new(metrics: Arc<Metrics>) -> Self {
        Self {
            counts: watch::Sender::new(Counts::default()),
            metrics,
        }
    }

    pub fn current(&self) -> usize {
        self.counts.borrow().current
    }

    pub fn turns(&self) -> usize {
        self.counts.borrow().turns
    }

    /// A connection was admitted; it counts until the guard is dropped.
    pub fn opened(self: &Arc<Self>) -> OpenCount {
        self.counts.send_modify(|c| c.connections += 1);
        OpenCount(self.clone())
    }

    /// A receiver that sees every change of the counts (for `STATUS=` lines).
    pub fn changes(&self) -> watch::Receiver<Counts> {
        self.counts.subscribe()
    }

    /// Whether no connection is open and no turn runs.
    pub fn nothing_open(&self) -> bool {
        self.counts.borrow().nothing_open()
    }

    /// Resolves once no connection is open and no turn runs, and has stayed so for
    /// `idle` (`--exit-when-idle`): a connection or a turn meanwhile starts the wait over.
    pub async fn idle_for(&self, idle: Duration) {
        let mut rx = self.counts.subscribe();
        loop {
            // The guards `wait_for` returns are dropped at once: they are not `Send`.
            let quiet = rx.wait_for(Counts::nothing_open).await.is_ok();
            if !quiet {
                return std::future::pending().await;
            }
            tokio::select! {
                () = tokio::time::sleep(idle) => return,
                busy = async { rx.wait_for(|c| !c.nothing_open()).await.is_ok() } => {
                    if !busy {
                        return std::future::pending().await;
                    }
                }
            }
        }
    }

    pub fn joined(&self) {
        self.counts.send_modify(|c| {
            c.current += 1;
            c.ever += 1;
        });
    }

    pub fn left(&self) {
        self.counts
            .send_modify(|c| c.current = c.current.saturating_sub(1));
    }

    /// The `--ephemeral` rule: never before the first client; then, each time no client is
    /// connected and no turn runs, cancel `shutdown` after `grace` unless a client joins
    /// (or a turn starts) first.
    pub async fn exit_when_idle(&self, grace: Duration, shutdown: CancellationToken) {
        let mut rx = self.counts.subscribe();
        if rx.wait_for(|c| c.ever > 0).await.is_err() {
            return;
        }
        loop {
            if rx.wait_for(Counts::idle).await.is_err() {
                return;
            }
            tracing::info!("last client left; exiting in {grace:?} unless a client connects");
            tokio::select! {
                () = tokio::time::sleep(grace) => {
                    tracing::info!("no client came back; ephemeral daemon shutting down");
                    shutdown.cancel();
                    return;
                }
                joined = rx.wait_for(|c| !c.idle()) => {
                    if joined.is_err() {
                        return;
                    }
                    tracing::info!("a client connected within the grace period; staying up");
                }
            }
        }
    }
}

/// An admitted connection, counted open until dropped.
#[derive(Debug)]
pub struct OpenCount(Arc<ClientCounter>);

impl Drop for OpenCount {
    fn drop(&mut self) {
        self.0
            .counts
            .send_modify(|c| c.connections = c.connections.saturating_sub(1));
    }
}

/// The agent tells it of its turns, and of what they call.
impl TurnCount for ClientCounter {
    fn turn_started(&self) {
        self.counts.send_modify(|c| c.turns += 1);
    }

    fn turn_ended(&self) {
        self.counts
            .send_modify(|c| c.turns = c.turns.saturating_sub(1));
    }

    fn model_call(&self, seconds: f64, error: Option<&'static str>) {
        self.metrics.model_call(seconds, error);
    }

    fn tokens_used(&self, input: u64, output: u64) {
        self.metrics.tokens_used(input, output);
    }

    fn tool_call(&self, tool: &str, outcome: &'static str) {
        self.metrics.tool_call(tool, outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A counter with the ephemeral rule running on it, and the token the rule cancels.
    fn watched() -> (
        Arc<ClientCounter>,
        CancellationToken,
        tokio::task::JoinHandle<()>,
    ) {
        let counter = Arc::new(ClientCounter::default());
        let shutdown = CancellationToken::new();
        let task = tokio::spawn({
            let (c, s) = (counter.clone(), shutdown.clone());
            async move { c.exit_when_idle(EPHEMERAL_GRACE, s).await }
        });
        (counter, shutdown, task)
    }

    #[tokio::test(start_paused = true)]
    async fn never_exits_before_the_first_client() {
        let (counter, shutdown, task) = watched();
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert!(!shutdown.is_cancelled());
        counter.joined();
        counter.left();
        tokio::time::sleep(EPHEMERAL_GRACE + Duration::from_millis(1)).await;
        assert!(shutdown.is_cancelled());
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_running_turn_keeps_the_daemon_up_after_its_client_left() {
        let (counter, shutdown, _task) = watched();
        counter.joined();
        counter.turn_started();
        counter.left();
        tokio::time::sleep(EPHEMERAL_GRACE * 10).await;
        assert!(!shutdown.is_cancelled());
        counter.turn_ended();
        tokio::time::sleep(EPHEMERAL_GRACE + Duration::from_millis(1)).await;
        assert!(shutdown.is_cancelled());
    }

    #[tokio::test(start_paused = true)]
    async fn a_client_within_the_grace_cancels_the_exit() {
        let (counter, shutdown, _task) = watched();
        counter.joined();
        counter.left();
        tokio::time::sleep(EPHEMERAL_GRACE / 2).await;
        counter.joined();
        tokio::time::sleep(EPHEMERAL_GRACE * 10).await;
        assert!(!shutdown.is_cancelled());
        counter.left();
        tokio::time::sleep(EPHEMERAL_GRACE / 2).await;
        assert!(!shutdown.is_cancelled());
        tokio::time::sleep(EPHEMERAL_GRACE).await;
        assert!(shutdown.is_cancelled());
    }
}

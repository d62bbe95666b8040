//! Counting initialized clients and running turns, and the ephemeral daemon's exit rule
//! built on the counts.

use std::time::Duration;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use zeroclaw_agent::state::TurnCount;

/// How long an ephemeral daemon waits after its last client leaves.
pub const EPHEMERAL_GRACE: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    current: usize,
    ever: u64,
    /// Turns running; a turn outlives the client that started it, so it keeps an
    /// ephemeral daemon up too.
    turns: usize,
}

impl Counts {
    fn idle(&self) -> bool {
        self.current == 0 && self.turns == 0
    }
}

/// Clients that completed `initialize` and are still connected. A watch channel, so the
/// ephemeral rule waits on changes instead of polling.
#[derive(Debug)]
pub struct ClientCounter {
    counts: watch::Sender<Counts>,
}

impl Default for ClientCounter {
    fn default() -> Self {
        Self {
            counts: watch::Sender::new(Counts::default()),
        }
    }
}

impl ClientCounter {
    pub fn current(&self) -> usize {
        self.counts.borrow().current
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

/// The agent tells it of its turns.
impl TurnCount for ClientCounter {
    fn turn_started(&self) {
        self.counts.send_modify(|c| c.turns += 1);
    }

    fn turn_ended(&self) {
        self.counts
            .send_modify(|c| c.turns = c.turns.saturating_sub(1));
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

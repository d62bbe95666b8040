//! [`Gate`]: a latch the test opens to let a paused reply go on
//! ([`Step::WaitFor`](crate::Step::WaitFor)).

use std::sync::Arc;

use tokio::sync::watch;

/// A one-shot latch a test opens to release a [`Step::WaitFor`](crate::Step::WaitFor).
///
/// Cheap to clone; all clones share the same state. Once opened it stays open,
/// so a step that reaches it later passes straight through.
#[derive(Clone, Debug)]
pub struct Gate {
    tx: Arc<watch::Sender<bool>>,
}

impl Default for Gate {
    fn default() -> Self {
        Self::new()
    }
}

impl Gate {
    /// A new, closed gate.
    pub fn new() -> Gate {
        Gate {
            tx: Arc::new(watch::Sender::new(false)),
        }
    }

    /// Opens the gate (idempotent). Callable from sync or async code.
    pub fn open(&self) {
        self.tx.send_replace(true);
    }

    /// Whether [`Gate::open`] has been called.
    pub fn is_open(&self) -> bool {
        *self.tx.borrow()
    }

    /// Waits until the gate is open.
    pub async fn wait(&self) {
        let mut rx = self.tx.subscribe();
        // The sender lives in `self`, so this cannot fail with "closed".
        let _ = rx.wait_for(|open| *open).await;
    }
}

//! Connection slots: `daemon.max_connections` of them, shared by every door.
//!
//! A connection that has not completed `initialize` holds its slot only provisionally: when
//! every slot is taken, a newcomer takes the slot of the oldest such connection, which is
//! closed. Idle sockets that never say `initialize` thus cannot lock a real client out; only
//! initialized clients can fill the daemon (and the handshake timeout closes the idle ones
//! anyway).

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;

#[derive(Debug)]
pub struct Admission {
    limit: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Connections holding a slot, by admission number.
    holders: HashSet<u64>,
    /// Every holder, oldest first, with its handshake: those not initialized can be evicted.
    handshakes: BTreeMap<u64, Handshake>,
    next: u64,
}

/// One connection's handshake, as its slot sees it.
#[derive(Debug, Clone, Default)]
pub struct Handshake {
    /// Cancelled by the connection's first successful `initialize` (the connection holds it
    /// and cancels it before answering, so no newcomer can take the slot afterwards).
    pub done: CancellationToken,
    /// Cancelled when a newcomer took the slot before the connection initialized.
    pub evicted: CancellationToken,
}

/// One connection's slot; dropping it frees the slot.
#[derive(Debug)]
pub struct Slot {
    number: u64,
    admission: Arc<Admission>,
    pub handshake: Handshake,
}

impl Admission {
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            inner: Mutex::new(Inner::default()),
        })
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A slot for a new connection: a free one, else the oldest un-initialized connection's
    /// (which is told to close); `None` when every slot holds an initialized client.
    pub fn admit(self: &Arc<Self>) -> Option<Slot> {
        let mut inner = self.lock();
        if inner.holders.len() >= self.limit {
            let (&oldest, victim) = inner
                .handshakes
                .iter()
                .find(|(_, h)| !h.done.is_cancelled())?;
            victim.evicted.cancel();
            inner.handshakes.remove(&oldest);
            inner.holders.remove(&oldest);
        }
        let number = inner.next;
        inner.next += 1;
        inner.holders.insert(number);
        let handshake = Handshake::default();
        inner.handshakes.insert(number, handshake.clone());
        Some(Slot {
            number,
            admission: self.clone(),
            handshake,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut inner = self.admission.lock();
        inner.holders.remove(&self.number);
        inner.handshakes.remove(&self.number);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_daemon_evicts_the_oldest_uninitialized_connection_never_a_client() {
        let admission = Admission::new(3);
        let client = admission.admit().unwrap();
        client.handshake.done.cancel();
        let idle_old = admission.admit().unwrap();
        let idle_new = admission.admit().unwrap();
        let newcomer = admission.admit().unwrap();
        assert!(idle_old.handshake.evicted.is_cancelled());
        assert!(!idle_new.handshake.evicted.is_cancelled());
        assert!(!client.handshake.evicted.is_cancelled());
        // The evicted slot is no longer counted: its late drop frees nothing twice.
        drop(idle_old);
        newcomer.handshake.done.cancel();
        idle_new.handshake.done.cancel();
        assert!(
            admission.admit().is_none(),
            "three initialized clients fill it"
        );
        drop(client);
        assert!(admission.admit().is_some());
    }
}

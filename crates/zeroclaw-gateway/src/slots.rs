//! The connection cap, `gateway.max_connections`: which connections hold a slot, and which
//! one gives its slot up when a newcomer finds them all taken.
//!
//! A connection is *idle* from its accept until its first request's headers are complete,
//! and again from the end of each response until the next request's headers are complete
//! (a keep-alive connection between requests; a silent or slow sender). It is *busy* while
//! a request is handled and its response (an SSE stream included) is being sent, and
//! *upgraded* once it is a WebSocket. A newcomer past the cap takes the slot of the
//! connection that has been idle longest, which is closed at once; when none is idle, the
//! newcomer is refused (503). So idle sockets never keep a real client out, and nothing a
//! client is waiting on is ever cut.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;

pub struct Slots {
    max: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Ids and idle-order numbers, from one counter: a later number is a later event.
    counter: u64,
    held: HashMap<u64, Held>,
    /// The idle connections by when they became idle (its order number) → their id.
    idle: BTreeMap<u64, u64>,
}

struct Held {
    /// Requests under way (HTTP/1.1 serves one at a time; counted all the same).
    requests: usize,
    /// Its key in `idle` while it is there.
    idle_since: Option<u64>,
    upgraded: bool,
    shed: CancellationToken,
}

impl Inner {
    fn next(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }
}

impl Slots {
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max,
            inner: Mutex::new(Inner::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A slot for a new connection (idle until its first request): a free one, or the one
    /// of the connection idle longest, whose [`Slot::shed`] is cancelled; `None` when every
    /// slot holds a connection that is busy or upgraded.
    pub fn take(self: &Arc<Self>) -> Option<Slot> {
        let mut inner = self.lock();
        if inner.held.len() >= self.max {
            let (_, victim) = inner.idle.pop_first()?;
            if let Some(held) = inner.held.remove(&victim) {
                held.shed.cancel();
            }
        }
        let id = inner.next();
        let since = inner.next();
        let shed = CancellationToken::new();
        inner.held.insert(
            id,
            Held {
                requests: 0,
                idle_since: Some(since),
                upgraded: false,
                shed: shed.clone(),
            },
        );
        inner.idle.insert(since, id);
        Some(Slot {
            slots: self.clone(),
            id,
            shed,
        })
    }

    /// Connections holding a slot.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().held.len()
    }
}

/// One connection's place under the cap; dropping it frees the place.
pub struct Slot {
    slots: Arc<Slots>,
    id: u64,
    shed: CancellationToken,
}

impl Slot {
    /// Cancelled when the slot went to a newcomer: the connection is to close at once (it
    /// was idle, so no request is cut).
    pub fn shed(&self) -> &CancellationToken {
        &self.shed
    }

    /// A request's headers are complete: busy until [`Slot::end`].
    pub fn begin(&self) {
        let mut inner = self.slots.lock();
        let Some(held) = inner.held.get_mut(&self.id) else {
            return;
        };
        held.requests += 1;
        if let Some(since) = held.idle_since.take() {
            inner.idle.remove(&since);
        }
    }

    /// A response has been sent (or dropped); `upgraded`: it switched protocols, and the
    /// connection is a WebSocket from now on, never idle again.
    pub fn end(&self, upgraded: bool) {
        let mut inner = self.slots.lock();
        let since = inner.next();
        let Some(held) = inner.held.get_mut(&self.id) else {
            return;
        };
        held.requests = held.requests.saturating_sub(1);
        held.upgraded |= upgraded;
        if held.requests == 0 && !held.upgraded && held.idle_since.is_none() {
            held.idle_since = Some(since);
            inner.idle.insert(since, self.id);
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut inner = self.slots.lock();
        // Gone already when it was shed.
        if let Some(held) = inner.held.remove(&self.id)
            && let Some(since) = held.idle_since
        {
            inner.idle.remove(&since);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn past_the_cap_the_longest_idle_connection_gives_up_its_slot() {
        let slots = Slots::new(3);
        let silent = slots.take().unwrap();
        let kept = slots.take().unwrap();
        let busy = slots.take().unwrap();
        kept.begin();
        kept.end(false);
        busy.begin();
        // Full: the newcomer takes the slot of the one idle longest (silent since accept).
        let first = slots.take().unwrap();
        assert!(silent.shed().is_cancelled());
        assert!(!kept.shed().is_cancelled());
        assert_eq!(slots.len(), 3);
        // Its drop (the connection closing) frees nothing more.
        drop(silent);
        assert_eq!(slots.len(), 3);
        // Next: the keep-alive one, idle since its response, before the newcomer arrived.
        let _second = slots.take().unwrap();
        assert!(kept.shed().is_cancelled());
        assert!(!first.shed().is_cancelled());
        assert!(!busy.shed().is_cancelled());
    }

    #[test]
    fn busy_and_upgraded_connections_are_never_shed_and_then_a_newcomer_is_refused() {
        let slots = Slots::new(2);
        let streaming = slots.take().unwrap();
        let socket = slots.take().unwrap();
        streaming.begin();
        socket.begin();
        socket.end(true);
        assert!(slots.take().is_none());
        assert!(!streaming.shed().is_cancelled() && !socket.shed().is_cancelled());
        // The stream ends: now idle, and the next newcomer takes its slot.
        streaming.end(false);
        let _newcomer = slots.take().unwrap();
        assert!(streaming.shed().is_cancelled());
        assert!(!socket.shed().is_cancelled());
        // A closed connection frees its slot.
        drop(socket);
        assert_eq!(slots.len(), 1);
    }
}

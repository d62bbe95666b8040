//! What one connection's handles share with its task: the outbound queue, the closed
//! token, the slots for our own requests, and the pending map — each of our requests waiting
//! for its answer, resolved exactly once: removal from the map is the single point where
//! that is decided (by the answer, the timeout or the close; a caller that gives up removes
//! its own entry).

use super::{CallError, NotifyError};
use crate::message::Notification;
use bytes::Bytes;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, MutexGuard};
use tokio::sync::{Notify, Semaphore, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// The connection task's end of the outbound queue (`Shared::outbound` is the handles' end);
/// the inbound side drains it too, so that what a handler queued goes out before its answer.
pub(super) type Queue = mpsc::Receiver<Bytes>;

pub(super) type Waiter = oneshot::Sender<Result<Value, CallError>>;

struct Pending {
    open: bool,
    waiters: HashMap<String, Waiter>,
}

pub(super) struct Shared {
    pub(super) label: String,
    /// The frame cap (the transport's): nothing longer is written.
    pub(super) max_frame_bytes: usize,
    pub(super) outbound: mpsc::Sender<Bytes>,
    pending: Mutex<Pending>,
    pub(super) next_id: AtomicU64,
    /// One permit per unanswered outbound request ([`PeerConfig::max_outstanding`]).
    ///
    /// [`PeerConfig::max_outstanding`]: super::PeerConfig::max_outstanding
    pub(super) outstanding: Semaphore,
    /// Signalled each time the connection task takes frames off the queue.
    pub(super) drained: Notify,
    pub(super) closed: CancellationToken,
    /// No connection behind it (`detached.rs`): nobody answers our requests, so they fail
    /// at once as on a closed connection.
    pub(super) detached: bool,
    /// What is sent is dropped at once, as if written ([`PeerHandle::discarding`]).
    ///
    /// [`PeerHandle::discarding`]: super::PeerHandle::discarding
    pub(super) discard: bool,
}

impl Shared {
    pub(super) fn new(
        label: String,
        max_frame_bytes: usize,
        outbound: mpsc::Sender<Bytes>,
        max_outstanding: usize,
    ) -> Self {
        Self {
            label,
            max_frame_bytes,
            outbound,
            pending: Mutex::new(Pending {
                open: true,
                waiters: HashMap::new(),
            }),
            next_id: AtomicU64::new(0),
            outstanding: Semaphore::new(max_outstanding),
            drained: Notify::new(),
            closed: CancellationToken::new(),
            detached: false,
            discard: false,
        }
    }

    fn pending(&self) -> MutexGuard<'_, Pending> {
        // A panic while holding this lock cannot leave the map inconsistent (every
        // operation is a single insert or remove), so a poisoned lock is still usable.
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Puts the waiter for `id` in the map; `false`, and nothing put, once the connection
    /// has closed (its waiters were all failed already).
    pub(super) fn register(&self, id: String, waiter: Waiter) -> bool {
        let mut pending = self.pending();
        if !pending.open {
            return false;
        }
        pending.waiters.insert(id, waiter);
        true
    }

    /// Queues `frames` in order, waiting for space: each wait takes every slot free then
    /// (at least one), so a burst reaches the connection task in a few wake-ups, not one a
    /// frame. Fails once the connection is closed (frames queued before stay queued).
    pub(super) async fn enqueue_all(&self, frames: Vec<Notification>) -> Result<(), NotifyError> {
        if self.discard && !self.closed.is_cancelled() {
            return Ok(());
        }
        let mut left = frames.len();
        let mut frames = frames.into_iter();
        while left > 0 {
            let take = left.min(self.outbound.capacity().max(1));
            let permits = tokio::select! {
                biased;
                permits = self.outbound.reserve_many(take) => permits.map_err(|_| NotifyError::Closed)?,
                () = self.closed.cancelled() => return Err(NotifyError::Closed),
            };
            for (permit, frame) in permits.zip(frames.by_ref()) {
                permit.send(frame.0);
            }
            left -= take;
        }
        Ok(())
    }

    /// Queues a frame, waiting for space; fails once the connection is closed.
    pub(super) async fn enqueue(&self, frame: Bytes) -> Result<(), NotifyError> {
        if self.discard && !self.closed.is_cancelled() {
            return Ok(());
        }
        tokio::select! {
            biased;
            sent = self.outbound.send(frame) => sent.map_err(|_| NotifyError::Closed),
            () = self.closed.cancelled() => Err(NotifyError::Closed),
        }
    }

    /// Resolves the waiter for `id`, if this side has one. Returns whether it did.
    pub(super) fn resolve(&self, id: &str, outcome: Result<Value, CallError>) -> bool {
        let mut pending = self.pending();
        match pending.waiters.remove(id) {
            Some(waiter) => {
                // Sent under the lock, so a timed-out caller that finds its entry gone
                // can rely on the outcome already being in its channel.
                let _ = waiter.send(outcome);
                true
            }
            None => false,
        }
    }

    pub(super) fn forget(&self, id: &str) -> bool {
        self.pending().waiters.remove(id).is_some()
    }

    pub(super) fn close(&self) {
        self.closed.cancel();
        let mut pending = self.pending();
        pending.open = false;
        for (_, waiter) in pending.waiters.drain() {
            let _ = waiter.send(Err(CallError::Closed));
        }
    }
}

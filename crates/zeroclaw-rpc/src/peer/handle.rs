//! The outbound side: [`PeerHandle`], cheap to clone, sends requests (each waiting for its
//! answer within a timeout and a slot of [`PeerConfig::max_outstanding`]) and
//! notifications into the connection's bounded queue, and tells how much room it has.
//!
//! [`PeerConfig::max_outstanding`]: super::PeerConfig::max_outstanding

use super::shared::Shared;
use super::{CallError, NotifyError};
use crate::message::{Id, Notification, RpcError, encode_request};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::WaitForCancellationFutureOwned;

/// A cheap, cloneable handle for sending to the other side of one connection.
#[derive(Clone)]
pub struct PeerHandle {
    pub(super) shared: Arc<Shared>,
}

impl std::fmt::Debug for PeerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerHandle")
            .field("label", &self.shared.label)
            .finish()
    }
}

impl PeerHandle {
    pub fn label(&self) -> &str {
        &self.shared.label
    }

    /// Sends a request and waits for its answer, at most `timeout`.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        // The timeout covers waiting for a slot and for queue space too: a peer that stopped
        // reading must not hold the caller past its deadline.
        if self.shared.detached {
            return Err(CallError::Closed);
        }
        let deadline = tokio::time::Instant::now() + timeout;
        let slot = tokio::time::timeout_at(deadline, async {
            tokio::select! {
                biased;
                () = self.shared.closed.cancelled() => None,
                permit = self.shared.outstanding.acquire() => permit.ok(),
            }
        });
        let _slot = match slot.await {
            Ok(Some(permit)) => permit,
            Ok(None) => return Err(CallError::Closed),
            Err(_) => return Err(CallError::Timeout(timeout)),
        };
        let n = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let id = format!("zc-out-{n}");
        let (tx, mut rx) = oneshot::channel();
        if !self.shared.register(id.clone(), tx) {
            return Err(CallError::Closed);
        }
        // From here on the entry must leave the map whatever happens, including the
        // caller dropping this future.
        let entry = PendingEntry {
            shared: &self.shared,
            id: &id,
        };
        let frame = encode_request(method, Some(&params), Some(&Id::String(id.clone())));
        if frame.len() > self.shared.max_frame_bytes {
            return Err(CallError::Rpc(RpcError::internal(format!(
                "the request is {} bytes, over the frame cap of {} bytes; it was not sent",
                frame.len(),
                self.shared.max_frame_bytes
            ))));
        }
        match tokio::time::timeout_at(deadline, self.shared.enqueue(frame.into())).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Err(CallError::Closed),
            // Never sent; dropping `entry` removes the waiter.
            Err(_) => return Err(CallError::Timeout(timeout)),
        }
        let outcome = match tokio::time::timeout_at(deadline, &mut rx).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Err(CallError::Closed),
            Err(_) if self.shared.forget(&id) => Err(CallError::Timeout(timeout)),
            // The answer won the race against the timer and is already in the channel.
            Err(_) => rx.try_recv().unwrap_or(Err(CallError::Closed)),
        };
        drop(entry);
        outcome
    }

    /// Sends a notification, waiting for queue space.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), NotifyError> {
        self.shared
            .enqueue(encode_request(method, Some(&params), None).into())
            .await
    }

    /// Queues a notification only if there is room now.
    pub fn try_notify(&self, method: &str, params: Value) -> Result<(), NotifyError> {
        self.try_send(&Notification(
            encode_request(method, Some(&params), None).into(),
        ))
    }

    /// Queues a notification serialised earlier, waiting for queue space.
    pub async fn send(&self, notification: &Notification) -> Result<(), NotifyError> {
        self.shared.enqueue(notification.0.clone()).await
    }

    /// Queues notifications serialised earlier, in order, waiting for queue space: for a
    /// burst (a replay's page), which then costs the connection task a few wake-ups
    /// instead of one each. On `Closed`, those before the failure may have been queued.
    pub async fn send_all(&self, notifications: Vec<Notification>) -> Result<(), NotifyError> {
        self.shared.enqueue_all(notifications).await
    }

    /// Queues a notification serialised earlier (once, for many connections) only if there
    /// is room now.
    pub fn try_send(&self, notification: &Notification) -> Result<(), NotifyError> {
        if self.shared.closed.is_cancelled() {
            return Err(NotifyError::Closed);
        }
        if self.shared.discard {
            return Ok(());
        }
        self.shared
            .outbound
            .try_send(notification.0.clone())
            .map_err(|e| match e {
                mpsc::error::TrySendError::Full(_) => NotifyError::Full,
                mpsc::error::TrySendError::Closed(_) => NotifyError::Closed,
            })
    }

    /// Free slots in the outbound queue now.
    pub fn queue_room(&self) -> usize {
        self.shared.outbound.capacity()
    }

    /// The outbound queue's size ([`PeerConfig::outbound_queue`]).
    ///
    /// [`PeerConfig::outbound_queue`]: super::PeerConfig::outbound_queue
    pub fn queue_capacity(&self) -> usize {
        self.shared.outbound.max_capacity()
    }

    /// Waits until the outbound queue has at least `room` free slots; `false` if it has
    /// not by `deadline` or the connection closed. Lets a producer that must not block
    /// for long (a turn streaming events) slow down to a reader's pace, within a bound.
    pub async fn wait_for_room(&self, room: usize, deadline: tokio::time::Instant) -> bool {
        let room = room.min(self.queue_capacity());
        loop {
            let drained = self.shared.drained.notified();
            tokio::pin!(drained);
            // Registered before the check, so a drain right after it still wakes us.
            drained.as_mut().enable();
            if self.queue_room() >= room {
                return true;
            }
            tokio::select! {
                biased;
                () = self.shared.closed.cancelled() => return false,
                () = &mut drained => {}
                () = tokio::time::sleep_until(deadline) => return self.queue_room() >= room,
            }
        }
    }

    /// Ends the connection: reading stops, queued frames get a short grace to flush.
    pub fn close(&self) {
        self.shared.close();
    }

    pub fn is_closed(&self) -> bool {
        self.shared.closed.is_cancelled()
    }

    /// Resolves when the connection has closed, for whatever reason.
    pub fn closed(&self) -> WaitForCancellationFutureOwned {
        self.shared.closed.clone().cancelled_owned()
    }
}

/// Removes a request's waiter when the request is over, however it ended.
struct PendingEntry<'a> {
    shared: &'a Shared,
    id: &'a str,
}

impl Drop for PendingEntry<'_> {
    fn drop(&mut self) {
        self.shared.forget(self.id);
    }
}

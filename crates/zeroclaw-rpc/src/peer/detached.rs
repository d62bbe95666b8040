//! Handles with no connection behind them, for a caller that runs requests through the
//! dispatch itself (the gateway's REST calls and streams): nothing reads or answers on the
//! other side, so the handle's requests fail at once as on a closed connection, and what
//! is sent to it is either dropped ([`PeerHandle::discarding`]) or read by the caller, as
//! the frames the daemon serialised ([`PeerHandle::channel`], [`Outbound`]).

use super::handle::PeerHandle;
use super::shared::Shared;
use bytes::Bytes;
use std::sync::Arc;
use tokio::sync::mpsc;

impl PeerHandle {
    /// A handle for a caller that reads no events: notifications are accepted and dropped
    /// at once, so whoever sends them never waits on it.
    pub fn discarding(label: String, max_frame_bytes: usize) -> Self {
        // Nothing is ever queued: the receiver is not needed.
        let (outbound, _) = mpsc::channel(1);
        let mut shared = Shared::new(label, max_frame_bytes, outbound, 1);
        shared.detached = true;
        shared.discard = true;
        Self {
            shared: Arc::new(shared),
        }
    }

    /// A handle whose queue of `capacity` frames is read by the caller through the
    /// returned [`Outbound`], as a connection's task would read it: the same room, the
    /// same pacing (`wait_for_room` wakes as the caller takes frames), the same close.
    pub fn channel(label: String, max_frame_bytes: usize, capacity: usize) -> (Self, Outbound) {
        let (outbound, frames) = mpsc::channel(capacity.max(1));
        let mut shared = Shared::new(label, max_frame_bytes, outbound, 1);
        shared.detached = true;
        let shared = Arc::new(shared);
        let handle = Self {
            shared: shared.clone(),
        };
        (handle, Outbound { frames, shared })
    }
}

/// The reading end of a [`PeerHandle::channel`]: the frames sent to the handle, each as its
/// sender serialised it (without a newline). Dropping it closes the handle.
pub struct Outbound {
    frames: mpsc::Receiver<Bytes>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Outbound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbound")
            .field("label", &self.shared.label)
            .finish()
    }
}

impl Outbound {
    /// Waits for frames and moves up to `limit` of them into `buf`; 0 once the handle is
    /// closed and every frame sent before has been taken. Cancel-safe.
    pub async fn recv_many(&mut self, buf: &mut Vec<Bytes>, limit: usize) -> usize {
        let n = tokio::select! {
            biased;
            n = self.frames.recv_many(buf, limit) => n,
            () = self.shared.closed.cancelled() => {
                let mut n = 0;
                while n < limit {
                    let Ok(frame) = self.frames.try_recv() else { break };
                    buf.push(frame);
                    n += 1;
                }
                n
            }
        };
        if n > 0 {
            self.shared.drained.notify_waiters();
        }
        n
    }

    /// A frame already queued, if any.
    pub fn try_recv(&mut self) -> Option<Bytes> {
        let frame = self.frames.try_recv().ok()?;
        self.shared.drained.notify_waiters();
        Some(frame)
    }

    /// Whether the handle was closed (by its sender's side: a session that let a reader
    /// fall behind go, or by [`Outbound::close`]).
    pub fn is_closed(&self) -> bool {
        self.shared.closed.is_cancelled()
    }

    /// Ends the handle, as a connection's close does: senders see it closed.
    pub fn close(&self) {
        self.shared.close();
    }
}

impl Drop for Outbound {
    fn drop(&mut self) {
        self.shared.close();
    }
}

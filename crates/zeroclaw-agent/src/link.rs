//! A client attached to a session, as the agent sees it: whatever door it came through
//! (the socket, the gateway's WebSocket, an in-process connection), sessions send it
//! events and turns ask it questions through [`Link`]. The daemon implements it for its
//! connections' peers; the agent knows no socket, no JSON-RPC peer and no HTTP server.
//!
//! A [`Notification`] is one session event serialised once, as the bytes of a complete
//! JSON-RPC notification, and shared by every attached connection: sending it to one more
//! connection copies nothing.

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;
use std::time::Duration;

/// The future of the two methods that wait; named here for the implementations.
pub use futures_util::future::BoxFuture;

/// One client connection attached to a session: what sessions (events, pacing) and turns
/// (`elicitation/create`, `fs/*`) use of it. Every method is cheap and never blocks, except
/// the two that return a future.
pub trait Link: Send + Sync + std::fmt::Debug {
    /// Who it is, for the log.
    fn label(&self) -> &str;

    /// Queues a frame only if there is room now. Overflow rule: the caller decides (a
    /// session detaches and closes a connection whose queue is full).
    fn try_send(&self, frame: &Notification) -> Result<(), NotifyError>;

    /// Free slots in the connection's outbound queue now.
    fn queue_room(&self) -> usize;

    /// The outbound queue's size.
    fn queue_capacity(&self) -> usize;

    /// Waits until the queue has at least `room` free slots; `false` if it has not by
    /// `deadline` or the connection closed.
    fn wait_for_room(&self, room: usize, deadline: tokio::time::Instant) -> BoxFuture<'_, bool>;

    /// Ends the connection.
    fn close(&self);

    fn is_closed(&self) -> bool;

    /// Sends a request to the client and waits for its answer, at most `timeout`.
    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Value, CallError>>;
}

/// A notification serialised once, to be queued on many connections (a session's event to
/// every attached client) without serialising it again for each.
#[derive(Debug, Clone)]
pub struct Notification(Bytes);

/// What [`Notification::new`] reserves before serialising: most events are a few hundred
/// bytes, and starting there saves the reallocations of growing from empty, on the path
/// every streamed chunk takes.
const FRAME_START_CAPACITY: usize = 256;

impl Notification {
    pub fn new<T: Serialize + ?Sized>(method: &str, params: &T) -> serde_json::Result<Self> {
        #[derive(Serialize)]
        struct Frame<'a, T: ?Sized> {
            jsonrpc: &'static str,
            method: &'a str,
            params: &'a T,
        }
        let mut line = Vec::with_capacity(FRAME_START_CAPACITY);
        serde_json::to_writer(
            &mut line,
            &Frame {
                jsonrpc: "2.0",
                method,
                params,
            },
        )?;
        Ok(Self(line.into()))
    }

    /// A frame serialised by the caller: one complete JSON-RPC notification object, compact,
    /// without its newline. For hot paths that write a frame's constant part once and
    /// only its variable part per frame (a streamed chunk); their tests check the bytes
    /// against [`Notification::new`]'s.
    pub fn from_serialized(line: Vec<u8>) -> Self {
        debug_assert!(
            serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok(),
            "a frame that is not JSON"
        );
        Self(line.into())
    }

    /// Like [`Notification::from_serialized`], for a frame cut from a buffer that holds
    /// others too (streamed chunks and a replay page share buffers: `session/frame_buf.rs`).
    pub fn from_shared(line: Bytes) -> Self {
        debug_assert!(
            serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok(),
            "a frame that is not JSON"
        );
        Self(line)
    }

    /// The frame, without its newline.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The frame's shared bytes, for a connection to queue without copying them.
    pub fn bytes(&self) -> &Bytes {
        &self.0
    }

    /// The frame's bytes, for a connection to queue a frame it alone sends.
    pub fn into_bytes(self) -> Bytes {
        self.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotifyError {
    #[error("the connection's outbound queue is full")]
    Full,
    #[error("the connection is closed")]
    Closed,
}

/// Why a request to the client did not get a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    /// The client answered with an error object.
    #[error("{0}")]
    Rpc(Refusal),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("the connection closed before an answer arrived")]
    Closed,
}

/// The error object a client answered a request with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} ({code})")]
pub struct Refusal {
    pub code: i64,
    pub message: String,
}

#[cfg(test)]
pub mod testing {
    //! A link to a client that never reads: its queue only fills, as a stalled client's
    //! does. For the session's own tests, which need no door.

    use super::*;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[derive(Debug)]
    pub struct Unread {
        queued: Mutex<Vec<Notification>>,
        capacity: usize,
        closed: AtomicBool,
    }

    impl Unread {
        pub fn new(capacity: usize) -> Self {
            Self {
                queued: Mutex::new(Vec::new()),
                capacity,
                closed: AtomicBool::new(false),
            }
        }

        fn queued(&self) -> usize {
            self.queued.lock().map(|q| q.len()).unwrap_or(self.capacity)
        }
    }

    impl Link for Unread {
        fn label(&self) -> &str {
            "unread"
        }

        fn try_send(&self, frame: &Notification) -> Result<(), NotifyError> {
            if self.is_closed() {
                return Err(NotifyError::Closed);
            }
            let mut queued = self.queued.lock().map_err(|_| NotifyError::Closed)?;
            if queued.len() >= self.capacity {
                return Err(NotifyError::Full);
            }
            queued.push(frame.clone());
            Ok(())
        }

        fn queue_room(&self) -> usize {
            self.capacity - self.queued()
        }

        fn queue_capacity(&self) -> usize {
            self.capacity
        }

        fn wait_for_room(&self, room: usize, _: tokio::time::Instant) -> BoxFuture<'_, bool> {
            // Nothing is ever read: the room there is now is all there will be.
            Box::pin(async move { self.queue_room() >= room })
        }

        fn close(&self) {
            self.closed.store(true, Ordering::Relaxed);
        }

        fn is_closed(&self) -> bool {
            self.closed.load(Ordering::Relaxed)
        }

        fn request<'a>(
            &'a self,
            _: &'a str,
            _: Value,
            _: Duration,
        ) -> BoxFuture<'a, Result<Value, CallError>> {
            Box::pin(async { Err(CallError::Closed) })
        }
    }
}

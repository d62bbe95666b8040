//! The bidirectional JSON-RPC peer: one per connection, the same code on both ends.
//!
//! Contract:
//! - One connection task reads, classifies frames in arrival order and writes. It never
//!   waits on a handler: a handler that is not ready at its first poll runs as its own
//!   task, so responses to our own requests, cancels and other calls keep being read while
//!   it works. Answers ready at once go straight into the task's output buffer (a burst of
//!   requests is answered in one write, with no hand-off to another task); frames from
//!   other tasks (notifications, late answers, our requests) come through the bounded
//!   outbound queue. Only this task writes, so frames never interleave.
//! - Outbound requests use ids `zc-out-<n>` from a per-connection counter. Responses are
//!   matched only against this side's own pending map (correlation is directional).
//! - Every pending outbound request is resolved exactly once: by its response, by its
//!   timeout, or with [`CallError::Closed`] when the connection ends. Removal from the
//!   pending map is the single point where that is decided.
//! - Nothing longer than the transport's frame cap is written (the cap this side reads
//!   with): an answer over it becomes a `-32603` naming the limit, our own request over it
//!   fails at once, and any other frame over it is dropped and logged. An oversized line
//!   read that answers one of our pending requests (its `id`, the last member of an answer,
//!   is in the [`Frame::OversizedEnd`] tail) resolves that request with an error at once.
//! - At most [`PeerConfig::max_outstanding`] of this side's own requests are unanswered at
//!   once; a further call waits for a slot, within its timeout. That keeps the output
//!   buffer from filling with our own requests, so the connection (which stops reading
//!   while its output is full) cannot wedge against a peer that stopped the same way.
//!
//! The parts: `shared.rs` holds what the handles and the connection task share, above all
//! the pending map, where each of our requests is resolved exactly once; `handle.rs` is the
//! outbound side ([`PeerHandle`]: requests, notifications, room in the queue);
//! `connection.rs` is the connection task (the loop above, and the grace at close);
//! `detached.rs` makes handles with no connection behind them (a caller of the dispatch
//! that reads no events, or reads them itself);
//! `inbound.rs` dispatches what is read; `frame_cap.rs` keeps answers under the frame cap and
//! finds the id in an oversized one.
//!
//! [`Frame::OversizedEnd`]: crate::codec::Frame::OversizedEnd

mod connection;
mod detached;
mod frame_cap;
mod handle;
mod inbound;
mod shared;

pub use connection::Peer;
pub use detached::Outbound;
pub use handle::PeerHandle;

use crate::message::{Answer, RpcError};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
/// A handler's outcome: its result already serialised (see [`Answer`]), or an error.
pub type HandlerResult = Result<Answer, RpcError>;

/// What a connection's owner does with the other side's requests and notifications.
pub trait Service: Send + Sync + 'static {
    /// Called on the connection loop, in frame order; must not block. Synchronous checks (the
    /// handshake gate) happen here, so their order is the order frames arrived in. When
    /// the connection closes, a returned future still running gets a short grace to
    /// finish and answer, and is then dropped.
    fn request(&self, method: String, params: Option<Value>) -> BoxFuture<HandlerResult>;

    /// Called on the connection loop, in frame order; must not block.
    fn notification(&self, method: String, params: Option<Value>) {
        let _ = (method, params);
    }
}

#[derive(Debug, Clone)]
pub struct PeerConfig {
    /// Capacity of the outbound frame queue (frames from other tasks), and, plus one, of
    /// the connection's output buffer in frames. Overflow rules: a full output buffer stops
    /// reading and taking from the queue until the other side reads; on a full queue, late
    /// answers and [`PeerHandle::notify`] wait for space (backpressure lands on the slow
    /// connection itself) and [`PeerHandle::try_notify`] fails with [`NotifyError::Full`]
    /// for its caller to decide.
    pub outbound_queue: usize,
    /// Inbound requests whose handlers may run at once. Overflow rule: the extra request is
    /// answered `-32001` at once, so the reader never stops reading (it must stay free to
    /// read the answers those handlers may be waiting for).
    pub max_in_flight: usize,
}

impl PeerConfig {
    /// How many of this side's own requests may be unanswered at once: at most
    /// `max_in_flight` (what the other side, configured alike, runs before answering
    /// `-32001`) and at most half the outbound queue, so that our requests plus the answers
    /// we owe a peer bound the same way never fill the output buffer.
    pub fn max_outstanding(&self) -> usize {
        self.max_in_flight.min(self.outbound_queue / 2).max(1)
    }
}

impl Default for PeerConfig {
    fn default() -> Self {
        Self {
            outbound_queue: 1024,
            max_in_flight: 256,
        }
    }
}

/// Why an outbound request or notification did not get a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    /// The other side answered with an error object.
    #[error("{0}")]
    Rpc(RpcError),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("the connection closed before an answer arrived")]
    Closed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotifyError {
    #[error("the connection's outbound queue is full")]
    Full,
    #[error("the connection is closed")]
    Closed,
}

//! zeroclaw's JSON-RPC 2.0 protocol layer: bytes → frames → envelopes → peer.
//!
//! - [`codec`]: NDJSON framing with a frame cap that never buffers an oversized line.
//! - [`envelope`]: classification of one frame by the protocol's envelope rules.
//! - [`peer`]: the bidirectional peer (directional correlation, `zc-out-<n>` ids,
//!   timeouts, resolve-exactly-once) shared by the daemon and every client.
//! - [`transport`]: the seam a new transport implements.
//!
//! Nothing here opens sockets or decides policy; that is `zeroclaw-ipc` and the daemon.

pub mod codec;
pub mod envelope;
pub mod message;
mod outbox;
pub mod peer;
pub mod transport;
#[cfg(feature = "websocket")]
pub mod websocket;

pub use codec::{DEFAULT_MAX_FRAME_BYTES, Frame};
pub use message::{Answer, Id, Notification, NumberText, RpcError, codes};
pub use peer::{
    BoxFuture, CallError, HandlerResult, NotifyError, Outbound, Peer, PeerConfig, PeerHandle,
    Service,
};
pub use transport::{RpcTransport, StreamTransport};

//! The gateway's REST requests and streams: each one calls the method table directly
//! ([`methods::call`], the function every connection's gate calls too) through a
//! [`Direct`] record acting for its token, instead of opening an in-process connection
//! and saying `initialize` over NDJSON for every request.
//!
//! The record is what a connection would be to the dispatch, for as long as the request
//! runs: a slot among `daemon.max_connections`, a client in `status.clients` and in the
//! `--ephemeral` and `--exit-when-idle` rules, an open connection in the metrics (door
//! `http`), the sessions it attaches to (detached when it ends). Its peer has no
//! connection behind it: for a REST call a [`PeerHandle::discarding`] (it reads no
//! events, so what a session sends it is dropped at once and a turn never waits for it);
//! for a stream a [`PeerHandle::channel`], whose frames the gateway writes into the HTTP
//! body as the daemon serialised them, with a connection's queue, pacing and overflow rule.
//!
//! [`methods::call`]: crate::methods::call
//! [`PeerHandle::discarding`]: zeroclaw_rpc::PeerHandle::discarding
//! [`PeerHandle::channel`]: zeroclaw_rpc::PeerHandle::channel

use super::admission::Slot;
use crate::clients::OpenCount;
use crate::connection::{ClientHello, Connection};
use crate::methods;
use crate::service::metrics::OpenConnection;
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use zeroclaw_protocol::codes;
use zeroclaw_rpc::{BoxFuture, HandlerResult, RpcError};

/// One REST request's place in the daemon; dropping it ends it (its sessions detached, its
/// client and slot given back).
pub struct Direct {
    pub(super) conn: Arc<Connection>,
    /// A stream's record (logged when it ends, as a connection's close is).
    pub(super) stream: bool,
    /// Start-up done (`Doors::open`): nothing is served before.
    pub(super) opened: CancellationToken,
    /// The daemon's `close_connections`: a call running when it is cancelled ends.
    pub(super) close: CancellationToken,
    pub(super) slot: Slot,
    pub(super) _open: (OpenCount, OpenConnection),
}

impl Direct {
    /// Counts the record as an initialized client, as `initialize` would a connection.
    pub(super) fn initialized(self) -> Result<Self, String> {
        self.conn.mark_initialized(ClientHello {
            name: Some("zeroclaw-gateway".into()),
            version: Some(env!("CARGO_PKG_VERSION").into()),
            ..ClientHello::default()
        });
        // A newcomer may have taken the slot in the moment before it was marked initialized.
        if self.slot.handshake.evicted.is_cancelled() {
            return Err(
                "the daemon is serving its limit of initialized clients; close another client or raise daemon.max_connections".into(),
            );
        }
        Ok(self)
    }
}

impl zeroclaw_gateway::Caller for Direct {
    fn call(&self, method: &'static str, params: Option<Value>) -> BoxFuture<HandlerResult> {
        let conn = self.conn.clone();
        let (opened, close) = (self.opened.clone(), self.close.clone());
        Box::pin(async move {
            opened.cancelled().await;
            let authority = conn.authority.clone();
            // What ends a connection mid-call ends the call: the daemon closing its
            // connections, the token ending (`serve_connection`'s rules).
            tokio::select! {
                biased;
                answer = methods::call(&conn, method, params) => answer,
                () = close.cancelled() => Err(RpcError::internal("the daemon is stopping")),
                () = authority.over() => Err(RpcError::new(
                    codes::AUTH_REQUIRED,
                    "the token was revoked or has expired",
                )),
            }
        })
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        self.conn.peer.close();
        self.conn.finished();
        if self.stream {
            tracing::info!(peer = %self.conn.peer.label(), "stream closed");
        }
    }
}

//! The method table and the handshake gate in front of it.
//!
//! A handler is written against its method's types from `zeroclaw-protocol`: it implements
//! [`Handle`] for the method (`fn handle(ctx, params) -> Reply<result>`), and one row in
//! [`TABLE`] makes it callable. [`dispatch`] decodes the params, runs the handler, and
//! encodes its result; `initialize` advertises the table's names.

mod compact;
pub(crate) mod errors;
mod lifecycle;
mod mcp;
mod session;

use crate::connection::Connection;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;
use zeroclaw_protocol::{Method, PROTOCOL_VERSION, codes, methods as m};
use zeroclaw_rpc::{Answer, BoxFuture, HandlerResult, RpcError, Service};

/// What a handler gets: the connection it serves (and through it, the daemon).
#[derive(Debug, Clone)]
pub struct Ctx(pub Arc<Connection>);

/// A handler's answer. `Now` is computed on the connection's loop, in frame order (checks
/// whose order matters, and everything quick); `Later` runs as its own task, so a slow call
/// never holds up the frames behind it.
pub enum Reply<R> {
    Now(Result<R, RpcError>),
    /// Already serialised by hand (a hot path); it must read as `R`.
    Raw(Answer),
    Later(BoxFuture<Result<R, RpcError>>),
}

impl<R> Reply<R> {
    pub fn later(future: impl Future<Output = Result<R, RpcError>> + Send + 'static) -> Self {
        Reply::Later(Box::pin(future))
    }
}

impl<R> From<Result<R, RpcError>> for Reply<R> {
    fn from(outcome: Result<R, RpcError>) -> Self {
        Reply::Now(outcome)
    }
}

/// The daemon's side of one [`Method`].
pub trait Handle: Method {
    fn handle(ctx: Ctx, params: Self::Params) -> Reply<Self::Result>;
}

/// Called on the connection's loop with the raw params.
type Handler = fn(Ctx, Option<Value>) -> BoxFuture<HandlerResult>;

const fn row<M: Handle>() -> (&'static str, Handler) {
    (M::NAME, dispatch::<M>)
}

/// Every method a client may call, in the order `initialize` lists them.
const TABLE: &[(&str, Handler)] = &[
    row::<m::Initialize>(),
    row::<m::Status>(),
    row::<m::Shutdown>(),
    row::<m::SessionNew>(),
    row::<m::SessionList>(),
    row::<m::SessionLoad>(),
    row::<m::SessionMessages>(),
    row::<m::SessionPrompt>(),
    row::<m::SessionCancel>(),
    row::<m::SessionApprove>(),
    row::<m::SessionRename>(),
    row::<m::SessionCompact>(),
    row::<m::SessionDelete>(),
    row::<m::McpServers>(),
    row::<m::McpTools>(),
];

fn find(method: &str) -> Option<Handler> {
    TABLE
        .iter()
        .find(|(name, _)| *name == method)
        .map(|(_, handler)| *handler)
}

/// The methods `initialize` advertises.
pub fn names() -> Vec<&'static str> {
    TABLE.iter().map(|(name, _)| *name).collect()
}

/// The typed adapter: decodes the params, runs `M`'s handler, encodes its result.
fn dispatch<M: Handle>(ctx: Ctx, params: Option<Value>) -> BoxFuture<HandlerResult> {
    let params = match decode::<M::Params>(params) {
        Ok(params) => params,
        Err(e) => return ready(Err(e)),
    };
    match M::handle(ctx, params) {
        Reply::Now(outcome) => ready(outcome.and_then(|r| Answer::new(&r))),
        Reply::Raw(answer) => ready(Ok(answer)),
        Reply::Later(future) => Box::pin(async move { future.await.and_then(|r| Answer::new(&r)) }),
    }
}

/// Decodes a method's params; absent params are read as `{}`.
fn decode<T: DeserializeOwned>(params: Option<Value>) -> Result<T, RpcError> {
    serde_json::from_value(params.unwrap_or_else(|| Value::Object(Default::default())))
        .map_err(RpcError::invalid_params)
}

fn ready(outcome: HandlerResult) -> BoxFuture<HandlerResult> {
    Box::pin(std::future::ready(outcome))
}

/// The [`Service`] the peer calls: refuses everything but `initialize` until the handshake
/// is done, then looks the method up. It sees every request in frame order.
#[derive(Debug, Clone)]
pub struct Gate(pub Arc<Connection>);

impl Service for Gate {
    fn request(&self, method: String, params: Option<Value>) -> BoxFuture<HandlerResult> {
        let conn = &self.0;
        if method != m::Initialize::NAME && !conn.is_initialized() {
            return ready(Err(RpcError::new(
                codes::NOT_INITIALIZED,
                format!(
                    "not initialized: the first request on a connection must be `initialize`, e.g. {{\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"params\":{{\"protocolVersion\":{PROTOCOL_VERSION}}},\"id\":1}}; {method:?} was refused",
                ),
            )));
        }
        match find(&method) {
            Some(handler) => handler(Ctx(conn.clone()), params),
            None => ready(Err(RpcError::method_not_found(&method))),
        }
    }

    fn notification(&self, method: String, _params: Option<Value>) {
        // Before `initialize` notifications are dropped; after it, none are defined for
        // the client to send yet.
        tracing::debug!(peer = %self.0.peer.label(), method, "notification ignored");
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_protocol_reference_documents_every_method_and_event() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/protocol.md");
        let doc = std::fs::read_to_string(path).unwrap();
        for method in names() {
            assert!(
                doc.contains(&format!("### `{method}`")),
                "docs/protocol.md has no section for {method}"
            );
        }
        for event in zeroclaw_protocol::EVENTS {
            assert!(
                doc.contains(&format!("| `{event}` |")),
                "docs/protocol.md's event table has no row for {event}"
            );
        }
    }
}

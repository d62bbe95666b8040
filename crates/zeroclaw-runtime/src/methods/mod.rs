//! The method table. Adding a method is one handler and one row in [`TABLE`].

pub(crate) mod errors;
mod lifecycle;
mod session;

use crate::connection::Connection;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;
use zeroclaw_rpc::{BoxFuture, HandlerResult, RpcError};

/// What a handler gets: the connection it serves (and through it, the daemon).
#[derive(Debug, Clone)]
pub struct Ctx(pub Arc<Connection>);

/// Called on the connection's loop; do synchronous work inline and return a ready
/// future, or return a future that awaits (it then runs as its own task).
pub type Handler = fn(Ctx, Option<Value>) -> BoxFuture<HandlerResult>;

const TABLE: &[(&str, Handler)] = &[
    ("initialize", lifecycle::initialize),
    ("status", lifecycle::status),
    ("shutdown", lifecycle::shutdown),
    ("session/new", session::new),
    ("session/list", session::list),
    ("session/load", session::load),
    ("session/messages", session::messages),
    ("session/prompt", session::prompt),
    ("session/cancel", session::cancel),
    ("session/approve", session::approve),
    ("session/delete", session::delete),
];

/// The `type`s of `session/update` notifications the daemon sends.
pub const EVENTS: &[&str] = &[
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_result",
    "approval_request",
    "user_message_chunk",
    "turn_complete",
];

pub fn find(method: &str) -> Option<Handler> {
    TABLE
        .iter()
        .find(|(name, _)| *name == method)
        .map(|(_, handler)| *handler)
}

pub fn names() -> Vec<&'static str> {
    TABLE.iter().map(|(name, _)| *name).collect()
}

/// Decodes a method's params; absent params are read as `{}`.
pub fn decode<T: DeserializeOwned>(params: Option<Value>) -> Result<T, RpcError> {
    serde_json::from_value(params.unwrap_or_else(|| Value::Object(Default::default())))
        .map_err(RpcError::invalid_params)
}

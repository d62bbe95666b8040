//! zeroclaw's error codes, beside JSON-RPC's own (-32700 … -32603, in `zeroclaw_rpc::codes`).
//! `docs/protocol.md` lists what each means to a client.

pub use zeroclaw_rpc::codes::{
    INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
};

/// No such session.
pub const SESSION_NOT_FOUND: i64 = -32000;
/// A configured limit (connections, turns, requests in flight) was reached. The peer in
/// `zeroclaw-rpc` answers it itself for too many requests in flight, so it is that crate's.
pub const LIMIT_REACHED: i64 = zeroclaw_rpc::codes::OVERLOADED;
/// A turn is already running in the session; `data.turnId` names it.
pub const SESSION_BUSY: i64 = -32002;
/// The caller may not do that: it is not attached to that session, its token's scope
/// does not cover the method, or the method is served on the local socket only.
pub const NOT_ALLOWED: i64 = -32003;
/// The provider failed, or none is configured; `data` says which and how to fix it.
pub const PROVIDER_ERROR: i64 = -32004;
/// The first request on a connection must be `initialize`.
pub const NOT_INITIALIZED: i64 = -32010;
/// `initialize` asked for a protocol version this daemon does not speak;
/// `data: {supported, requested}`.
pub const VERSION_MISMATCH: i64 = -32011;
/// The gateway needs a valid token (or the dashboard's cookie) for this.
pub const AUTH_REQUIRED: i64 = -32020;

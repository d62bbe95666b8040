//! zeroclaw's error codes, beside JSON-RPC's own (-32700 … -32603). Both are here: the
//! protocol depends on nothing of ours, and `zeroclaw-rpc` takes JSON-RPC's codes (and
//! `LIMIT_REACHED`, which its peer answers by itself) from here.
//! `docs/protocol.md` lists what each means to a client.

/// JSON-RPC 2.0's own codes.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;

/// No such session.
pub const SESSION_NOT_FOUND: i64 = -32000;
/// A configured limit (connections, turns, requests in flight) was reached. The peer in
/// `zeroclaw-rpc` answers it itself for too many requests in flight (its `codes::OVERLOADED`).
pub const LIMIT_REACHED: i64 = -32001;
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
/// `session/rewind` (or `session/unrewind`) would overwrite files changed outside the
/// agent since the checkpoint, or content no snapshot holds: nothing was changed.
/// `data.conflicts` lists `[{path, reason}]`; `force: true` overwrites all but `blocked`.
pub const REWIND_CONFLICT: i64 = -32030;
/// The checkpoint cannot do what was asked: no such checkpoint in the session, or it has
/// no snapshot of the files (`data.reason`), or the rewind to undo is not the last one.
pub const CHECKPOINT_UNAVAILABLE: i64 = -32031;
/// `session/steer` found no turn running in the session (none started, or the running one
/// has already given its final answer): send the text with `session/prompt` instead.
pub const NO_TURN_RUNNING: i64 = -32005;

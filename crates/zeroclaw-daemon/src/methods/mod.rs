//! The method table and the handshake gate in front of it.
//!
//! A handler is written against its method's types from `zeroclaw-protocol`: it implements
//! [`Handle`] for the method (`fn handle(ctx, params) -> Reply<result>`), and one row in
//! [`TABLE`] makes it callable. [`dispatch`] decodes the params, runs the handler, and
//! encodes its result; `initialize` advertises the table's names.

pub(crate) mod errors;
mod lifecycle;
mod mcp;
mod runs;
mod sandbox;
mod session;
mod token;

use crate::connection::{Authority, Connection};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;
use zeroclaw_protocol::{Method, PROTOCOL_VERSION, Scope, codes, methods as m};
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

/// Who may call a method: a gateway token of at least this scope (the local socket may
/// call everything), or the local socket only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Scope(Scope),
    LocalOnly,
}

use Access::LocalOnly;
const READ: Access = Access::Scope(Scope::Read);
const OPERATE: Access = Access::Scope(Scope::Operate);
const ADMIN: Access = Access::Scope(Scope::Admin);

const fn row<M: Handle>(access: Access) -> (&'static str, Handler, Access) {
    (M::NAME, dispatch::<M>, access)
}

/// Every method a client may call, in the order `initialize` lists them, and who may.
const TABLE: &[(&str, Handler, Access)] = &[
    row::<m::Initialize>(READ),
    row::<m::Status>(READ),
    row::<m::Shutdown>(ADMIN),
    row::<m::SessionNew>(OPERATE),
    row::<m::SessionList>(READ),
    row::<m::SessionLoad>(READ),
    row::<m::SessionMessages>(READ),
    row::<m::SessionPrompt>(OPERATE),
    row::<m::SessionCancel>(OPERATE),
    row::<m::SessionApprove>(OPERATE),
    row::<m::SessionSteer>(OPERATE),
    row::<m::SessionRename>(OPERATE),
    row::<m::SessionCompact>(OPERATE),
    row::<m::SessionDelete>(OPERATE),
    row::<m::SessionClose>(READ),
    row::<m::McpServers>(READ),
    row::<m::McpTools>(READ),
    row::<m::TokenCreate>(LocalOnly),
    row::<m::TokenList>(LocalOnly),
    row::<m::TokenRevoke>(LocalOnly),
    row::<m::DashboardLink>(LocalOnly),
    row::<m::RunsList>(READ),
    row::<m::RunsGet>(READ),
    row::<m::SchedulesList>(READ),
    row::<m::ScheduleRun>(OPERATE),
    row::<m::SessionSetModel>(OPERATE),
    row::<m::SessionSetMode>(OPERATE),
    row::<m::SessionResolve>(READ),
    row::<m::SessionCheckpoints>(READ),
    row::<m::SessionRewind>(OPERATE),
    row::<m::SessionUnrewind>(OPERATE),
    row::<m::SessionFork>(OPERATE),
    row::<m::SessionContext>(READ),
    row::<m::CommandsList>(READ),
    row::<m::CommandsExpand>(READ),
    row::<m::SessionUsage>(READ),
    row::<m::SessionAttachment>(READ),
];

fn find(method: &str) -> Option<(&'static str, Handler, Access)> {
    TABLE
        .iter()
        .find(|(name, _, _)| *name == method)
        .map(|(name, handler, access)| (*name, *handler, *access))
}

/// Every method of the table.
pub fn names() -> Vec<&'static str> {
    TABLE.iter().map(|(name, _, _)| *name).collect()
}

/// The methods `initialize` advertises to a connection: those it may call.
pub fn names_for(authority: &Authority) -> Vec<&'static str> {
    TABLE
        .iter()
        .filter(|(_, _, access)| permits(authority, *access))
        .map(|(name, _, _)| *name)
        .collect()
}

/// Whether a connection's authority covers `access`.
pub fn permits(authority: &Authority, access: Access) -> bool {
    match (authority, access) {
        (Authority::Local, _) => true,
        (Authority::Gateway(_), LocalOnly) => false,
        (Authority::Gateway(principal), Access::Scope(needed)) => principal.scope >= needed,
    }
}

/// The refusal of a call its connection's authority does not cover; `-32020` once the
/// token is revoked or expired (checked on every request, so it takes effect at once).
fn refusal(authority: &Authority, method: &str, access: Access) -> Option<RpcError> {
    let Authority::Gateway(principal) = authority else {
        return None;
    };
    if !principal.is_live() {
        return Some(RpcError::new(
            codes::AUTH_REQUIRED,
            format!("token {:?} was revoked or has expired", &*principal.name),
        ));
    }
    if permits(authority, access) {
        return None;
    }
    Some(match access {
        LocalOnly => RpcError::new(
            codes::NOT_ALLOWED,
            format!("{method} is served on the local socket only, never over the gateway"),
        ),
        Access::Scope(needed) => RpcError::new(
            codes::NOT_ALLOWED,
            format!(
                "{method} needs a token of scope {:?}; token {:?} has scope {:?}",
                needed.as_str(),
                &*principal.name,
                principal.scope.as_str()
            ),
        )
        .with_data(serde_json::json!({ "needed": needed, "scope": principal.scope })),
    })
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

/// One request of an initialized connection through the table: the access rule (the
/// token's scope, and its liveness on every call), the handler, the metrics. Every door
/// comes here: a connection's [`Gate`], and the gateway's REST calls, which have no
/// connection of their own and call it directly with a record acting for their token
/// (`daemon::serve::Doors::direct`).
pub fn call(
    conn: &Arc<Connection>,
    method: &str,
    params: Option<Value>,
) -> BoxFuture<HandlerResult> {
    let started = std::time::Instant::now();
    let (name, answer) = match find(method) {
        Some((name, handler, access)) => match refusal(&conn.authority, method, access) {
            Some(refused) => (name, ready(Err(refused))),
            None => (name, handler(Ctx(conn.clone()), params)),
        },
        // A name outside the table is counted as `other`: the label stays bounded.
        None => ("other", ready(Err(RpcError::method_not_found(method)))),
    };
    let metrics = conn.daemon.metrics.clone();
    Box::pin(async move {
        let answer = answer.await;
        metrics.request(name, answer.is_ok(), started.elapsed().as_secs_f64());
        answer
    })
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
        call(conn, &method, params)
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

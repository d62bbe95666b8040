//! The daemon's second door: HTTP and WebSocket for browsers, remote programs and other
//! machines (`docs/gateway.md` is the reference).
//!
//! - `GET /rpc`: the socket's JSON-RPC over WebSocket. Each connection is handed to the
//!   daemon ([`Started::connections`]) and served by the same dispatch as a socket's.
//! - `/api/v1`: REST over the same dispatch: each request calls the daemon's method table
//!   directly ([`Backend::caller`]; a stream, [`Backend::streaming`]), so REST answers are
//!   the RPC results as the daemon serialised them, SSE events its notifications' params as
//!   it serialised them, and the token's scope is enforced by the same table.
//! - `/auth/exchange`, `/login`: the dashboard's one-time code for a dashboard session (a
//!   cookie and a proof the page keeps in `sessionStorage`; `auth`).
//! - `/`, `/assets/*`: the dashboard itself, embedded (`dashboard`).
//! - `/healthz`, `/readyz`, `/metrics`: for supervisors and Prometheus (`service`).
//!
//! The daemon supplies the [`Backend`]: token checks, calls into its dispatch and login
//! codes. This crate knows nothing of sessions or the store.

mod auth;
pub mod config;
mod daemon;
mod dashboard;
mod errors;
mod hooks;
mod hosts;
mod limiter;
mod login;
mod names;
pub mod openapi;
mod rest;
mod server;
mod service;
mod slots;
mod sse;
mod ws;

pub use config::{ConfigError, GatewayConfig, Plan};
pub use errors::http_status;
pub use server::{ListenFrom, Started, start};
pub use service::Check;
pub use zeroclaw_protocol::Scope;

use std::sync::Arc;
use std::time::SystemTime;
use tokio_util::sync::CancellationToken;
use zeroclaw_rpc::BoxFuture;

/// The WebSocket transport of one `/rpc` connection.
pub type WsConnection =
    zeroclaw_rpc::websocket::WsTransport<hyper_util::rt::TokioIo<hyper::upgrade::Upgraded>>;

/// Who a request acts for: a live token or dashboard session.
#[derive(Debug, Clone)]
pub struct Principal {
    /// The token's or dashboard session's name (logged; its secret never is).
    pub name: Arc<str>,
    pub scope: Scope,
    /// Cancelled when the token is revoked: its connections and streams end.
    pub ended: CancellationToken,
    /// A token's expiry, or a dashboard session's absolute limit: its connections and
    /// streams end then.
    pub expires_at: Option<SystemTime>,
    /// A dashboard session's mark of use: while any clone of this principal lives (a
    /// request, a WebSocket, a stream acting for it), the session is in use and its idle
    /// limit does not run; it counts from when the last one ends.
    pub hold: Option<Hold>,
}

/// Opaque to the gateway: the daemon's guard, kept alive with the principal.
#[derive(Clone)]
pub struct Hold(pub Arc<dyn std::any::Any + Send + Sync>);

impl std::fmt::Debug for Hold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hold")
    }
}

/// A dashboard login: the cookie's secret, the page's proof, and how long the session can
/// last at most (the cookie's `Max-Age`).
#[derive(Debug)]
pub struct DashboardLogin {
    pub cookie: String,
    pub proof: String,
    pub max_age: std::time::Duration,
}

impl Principal {
    /// Not revoked, not expired.
    pub fn is_live(&self) -> bool {
        !self.ended.is_cancelled() && self.expires_at.is_none_or(|at| SystemTime::now() < at)
    }

    /// Resolves when the token is revoked or expires.
    pub async fn over(&self) {
        let expiry = async {
            match self.expires_at {
                Some(at) => {
                    let left = at.duration_since(SystemTime::now()).unwrap_or_default();
                    tokio::time::sleep(left).await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = self.ended.cancelled() => {}
            () = expiry => {}
        }
    }
}

/// A `/rpc` connection, upgraded and authenticated, for the daemon to serve.
pub struct Accepted {
    pub transport: WsConnection,
    pub principal: Principal,
    /// `ws:<remote address>,token=<name>`.
    pub label: String,
}

/// What the gateway needs from the daemon.
pub trait Backend: Send + Sync + 'static {
    /// The live token whose secret this is (compared in constant time), counting a use.
    /// Never a dashboard session: its cookie is not a bearer token.
    fn authenticate(&self, secret: &str) -> Option<Principal>;
    /// The live dashboard session whose cookie and proof these are (both compared in
    /// constant time), counting a use; `None` when either is wrong or it expired.
    fn authenticate_dashboard(&self, cookie: &str, proof: &str) -> Option<Principal>;
    /// A REST request's way into the dispatch acting for `principal`, without a
    /// connection: its calls go through the same method table, scope and liveness checks
    /// as a connection's requests, and it counts as a client until it is dropped. What the
    /// daemon would send it (a session's events) is dropped. `Err` says why the daemon
    /// cannot take it now (stopping, full).
    fn caller(&self, principal: &Principal, label: String) -> Result<Box<dyn Caller>, String>;
    /// The same for a stream: what the daemon sends it (`session/update` notifications,
    /// each frame as the daemon serialised it) is read from the [`Outbound`], whose queue
    /// has a connection's size, pacing and overflow rule.
    ///
    /// [`Outbound`]: zeroclaw_rpc::Outbound
    fn streaming(
        &self,
        principal: &Principal,
        label: String,
    ) -> Result<(Box<dyn Caller>, zeroclaw_rpc::Outbound), String>;
    /// Spends a one-time login code: a new dashboard session, or `None` for a code that is
    /// unknown, used or expired. `replacing` is the cookie the browser still holds, if any:
    /// that session ends (a browser holds one cookie, so one session).
    fn exchange_code(
        &self,
        code: String,
        replacing: Option<String>,
    ) -> BoxFuture<Option<DashboardLogin>>;
    /// The largest body webhook `name` accepts, or `None` if there is no such webhook.
    fn hook_body_limit(&self, name: &str) -> Option<usize>;
    /// Handles one webhook delivery whose body was read within that limit: the daemon
    /// checks its signature, deduplicates it and records its run.
    fn deliver(&self, delivery: Delivery) -> BoxFuture<HookAnswer>;
    /// The daemon's metrics in the Prometheus (OpenMetrics) text format, for `/metrics`.
    fn metrics(&self) -> Result<String, String>;
    /// Whether the daemon can serve, check by check, for `/readyz`.
    fn readiness(&self) -> BoxFuture<Vec<Check>>;
}

/// See [`Backend::caller`].
pub trait Caller: Send + Sync {
    /// Calls `method` with `params` as a request of this caller's would be handled on a
    /// connection; the result as the daemon serialised it.
    fn call(
        &self,
        method: &'static str,
        params: Option<serde_json::Value>,
    ) -> BoxFuture<zeroclaw_rpc::HandlerResult>;
}

/// A `POST /hooks/{name}` request, its body read whole (within the hook's limit).
#[derive(Debug)]
pub struct Delivery {
    pub name: String,
    /// Every header, its name lowercased; a value that is not UTF-8 is read lossily.
    pub headers: Vec<(String, String)>,
    pub body: bytes::Bytes,
    pub remote: std::net::SocketAddr,
}

/// The daemon's answer to a [`Delivery`].
#[derive(Debug, Clone, PartialEq)]
pub struct HookAnswer {
    pub status: u16,
    pub body: serde_json::Value,
    /// Seconds, for `Retry-After` (429, 503).
    pub retry_after: Option<u64>,
}

/// Entry points for the fuzz targets: the paths untrusted bytes take.
pub mod fuzzing {
    use zeroclaw_rpc::Frame;
    use zeroclaw_rpc::transport::{FrameSource, RpcTransport};
    use zeroclaw_rpc::websocket::{WsOptions, WsTransport};

    /// Decodes a REST request body as every route with a body does; the error code of
    /// each refusal.
    pub fn decode_bodies(bytes: &[u8]) -> Vec<Option<i64>> {
        fn code<T>(r: Result<T, crate::errors::ApiError>) -> Option<i64> {
            r.err().map(|e| e.error.code)
        }
        vec![
            code(crate::rest::decode::<zeroclaw_protocol::NewSessionParams>(
                bytes,
            )),
            code(crate::rest::decode::<crate::rest::PromptBody>(bytes)),
            code(crate::rest::decode::<crate::rest::ApproveBody>(bytes)),
            code(crate::rest::decode::<crate::rest::SteerBody>(bytes)),
            code(crate::login::decode_exchange(bytes)),
        ]
    }

    /// Reads the credentials of an upgrade's `Sec-WebSocket-Protocol` header as `/rpc` does:
    /// whether `zeroclaw.v1` is offered, a bearer token, a dashboard proof.
    pub fn ws_protocols(header: &str) -> (bool, Option<String>, Option<String>) {
        let offered = crate::ws::offered(header);
        (offered.v1, offered.bearer, offered.proof)
    }

    /// Serves `stream` as the server side of a `/rpc` WebSocket (its handshake done) and
    /// returns the frames the peer would be given, until the end or an error.
    pub async fn ws_frames<S>(stream: S, max_frame_bytes: usize) -> Vec<Frame>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let options = WsOptions {
            max_frame_bytes,
            ping_every: None,
            idle_timeout: None,
        };
        let ws = tokio_tungstenite::WebSocketStream::from_raw_socket(
            stream,
            tokio_tungstenite::tungstenite::protocol::Role::Server,
            Some(options.config()),
        )
        .await;
        let (mut source, _sink) = WsTransport::new(ws, "fuzz", options).into_halves();
        let mut frames = Vec::new();
        while let Ok(Some(frame)) = source.next_frame().await {
            frames.push(frame);
        }
        frames
    }
}

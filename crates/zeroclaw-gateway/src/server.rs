//! Binding, TLS, the connection cap, header timeouts, the request log, the `Host` check,
//! and the router.

use crate::auth::{App, ConnInfo, LogSlot, Origins, Shared};
use crate::config::GatewayConfig;
use crate::hosts::{self, Hosts};
use crate::limiter::Limiter;
use crate::slots::Slots;
use crate::{Accepted, Backend, dashboard, rest, ws};
use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tower::util::BoxCloneSyncService;
use tower::{Layer, ServiceExt};
use zeroclaw_rpc::websocket::WsOptions;

/// Upgraded WebSockets waiting for the daemon's accept loop. Overflow rule: the upgrade
/// task waits for room (the accept loop takes them at once; only a stopping daemon lets
/// it fill, and then the send fails and the connection is dropped).
const ACCEPT_QUEUE: usize = 64;
/// Connections being told "503" at once, past `max_connections`. Overflow rule: beyond it
/// a new connection is closed without an answer.
const REFUSERS: usize = 64;
/// WebSocket keepalive: a ping every 30 s, and a peer silent for 90 s is gone.
const WS_PING: Duration = Duration::from_secs(30);
const WS_IDLE: Duration = Duration::from_secs(90);
/// How long a TLS handshake may take.
const TLS_HANDSHAKE: Duration = Duration::from_secs(10);

/// The whole gateway as one service: the request log, the `Host` check, then the router.
type Gateway = BoxCloneSyncService<Request, Response, Infallible>;

/// A gateway that is serving.
pub struct Started {
    /// `http(s)://address:port`, the real port when the config said 0.
    pub url: String,
    pub tls: bool,
    pub addr: SocketAddr,
    /// Authenticated `/rpc` connections, for the daemon's accept loop.
    pub connections: mpsc::Receiver<Accepted>,
    /// The accept loop; it ends after `stop` is cancelled.
    pub task: tokio::task::JoinHandle<()>,
}

/// Where the address the gateway listens on came from, so a refusal names what to change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenFrom {
    /// `gateway.listen` in config.toml.
    Config,
    /// `zeroclaw daemon --gateway ADDR`.
    Flag,
}

/// Binds `plan.addr`; a taken address names what to change, as `listen_from` says.
async fn bind(plan: &crate::Plan, listen_from: ListenFrom) -> Result<TcpListener, String> {
    TcpListener::bind(plan.addr).await.map_err(|e| {
        let change = match listen_from {
            ListenFrom::Config => "change gateway.listen in config.toml",
            ListenFrom::Flag => {
                "the address came from --gateway: give it another one (--gateway 127.0.0.1:0 takes any free port)"
            }
        };
        format!(
            "cannot listen on {} ({e}); {change}, or run with --no-gateway",
            plan.addr
        )
    })
}

/// Serves a socket the service manager bound and passed (socket activation), under the
/// rules a bound address follows: a non-loopback one needs `allow_remote`, and TLS unless
/// `allow_plaintext` (its address is the socket's, whatever `gateway.listen` says).
fn inherit(listener: std::net::TcpListener, config: &GatewayConfig) -> Result<TcpListener, String> {
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the passed gateway socket's address: {e}"))?;
    let mut as_bound = config.clone();
    as_bound.listen = addr.to_string();
    as_bound.plan().map_err(|e| {
        format!(
            "the gateway socket the service manager passed is bound to {addr}, which the configuration does not allow: {}",
            e.0
        )
    })?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot use the passed gateway socket: {e}"))?;
    TcpListener::from_std(listener)
        .map_err(|e| format!("cannot use the passed gateway socket: {e}"))
}

/// Binds and starts serving (or serves `inherited`, a socket passed by the service
/// manager). `stop` ends the accept loop; `close` ends open connections
/// and streams (after running turns have sent their last events). An error (the address
/// is taken, a TLS file is unreadable) leaves the daemon serving its socket; a taken
/// address names what to change, as `listen_from` says.
pub async fn start(
    config: &GatewayConfig,
    max_frame_bytes: usize,
    backend: Arc<dyn Backend>,
    stop: CancellationToken,
    close: CancellationToken,
    listen_from: ListenFrom,
    inherited: Option<std::net::TcpListener>,
) -> Result<Started, String> {
    let plan = config.plan().map_err(|e| e.0)?;
    let acceptor = match &plan.tls {
        Some((cert, key)) => Some(tls_acceptor(cert, key)?),
        None => None,
    };
    let listener = match inherited {
        Some(listener) => inherit(listener, config)?,
        None => bind(&plan, listen_from).await?,
    };
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot read the gateway's address: {e}"))?;
    let metrics_public = config.metrics_public && addr.ip().is_loopback();
    if config.metrics_public && !metrics_public {
        tracing::warn!(address = %addr, "gateway.metrics_public is ignored on a non-loopback gateway: /metrics asks for a token");
    }
    let tls = acceptor.is_some();
    let url = format!("{}://{addr}", if tls { "https" } else { "http" });
    let hosts = Arc::new(Hosts::new(addr, tls, config.hosts()));
    if hosts.is_off() {
        // A page on any name that resolves to this machine could reach the gateway. Under
        // TLS the browser refuses such a name (the certificate does not match it).
        if tls {
            tracing::info!(
                "gateway.allowed_hosts is empty on a non-loopback bind: any Host is answered (TLS certificate names guard against DNS rebinding); list the names clients use to check them"
            );
        } else {
            tracing::warn!(
                "gateway.allowed_hosts is empty on a non-loopback bind: any Host is answered, so a web page on a name that resolves to this machine can reach the gateway (DNS rebinding); list the names clients use in gateway.allowed_hosts"
            );
        }
    }
    let (accepted, connections) = mpsc::channel(ACCEPT_QUEUE);
    let app = Arc::new(App {
        backend,
        origins: Origins::new(addr, tls, &config.origins()),
        limiter: Limiter::default(),
        tls,
        cookie: crate::auth::cookie_name(addr.port()),
        max_body_bytes: config.max_body_bytes,
        body_timeout: Duration::from_secs(config.body_timeout_secs),
        sse_heartbeat: Duration::from_secs(config.sse_heartbeat_secs),
        max_frame_bytes,
        ws: WsOptions {
            max_frame_bytes,
            ping_every: Some(WS_PING),
            idle_timeout: Some(WS_IDLE),
        },
        accepted,
        close: close.clone(),
        metrics_public,
    });
    let router = gateway(app.clone(), hosts);
    let limits = Limits {
        slots: Slots::new(config.max_connections),
        refusers: Arc::new(Semaphore::new(REFUSERS)),
        header_timeout: Duration::from_secs(config.header_timeout_secs),
    };
    let task = tokio::spawn(accept_loop(listener, acceptor, router, limits, stop, close));
    Ok(Started {
        url,
        tls,
        addr,
        connections,
        task,
    })
}

fn tls_acceptor(cert: &std::path::Path, key: &std::path::Path) -> Result<TlsAcceptor, String> {
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<_, _>>())
        .map_err(|e| format!("cannot read gateway.tls_cert {}: {e}", cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("cannot read gateway.tls_key {}: {e}", key.display()))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = tokio_rustls::rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| {
            format!("gateway.tls_cert and gateway.tls_key do not make a certificate: {e}")
        })?;
    let mut config = config;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Before routing: the request log (outermost, so refusals are logged too), then the
/// `Host` check; then the router.
fn gateway(app: Shared, hosts: Arc<Hosts>) -> Gateway {
    let routes = router(app.clone());
    let checked = middleware::from_fn_with_state(hosts, hosts::check).layer(routes);
    let logged = middleware::from_fn(log_request).layer(checked);
    BoxCloneSyncService::new(logged)
}

fn router(app: Shared) -> Router {
    let cors = {
        use tower_http::cors::{AllowOrigin, CorsLayer};
        let origins: Vec<HeaderValue> = app
            .origins
            .extra()
            .iter()
            .filter_map(|o| HeaderValue::from_str(o).ok())
            .collect();
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(origins))
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE, header::ACCEPT])
            .allow_credentials(true)
    };
    let (api, doc) = crate::openapi::split(crate::openapi::routes());
    // Written once: the document does not change while the gateway serves.
    let doc = serde_json::to_vec(&doc)
        .map(bytes::Bytes::from)
        .map_err(|e| e.to_string());
    let openapi = move || {
        let doc = doc.clone();
        async move {
            match doc {
                Ok(doc) => ([(header::CONTENT_TYPE, "application/json")], doc).into_response(),
                Err(e) => crate::errors::ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    zeroclaw_protocol::codes::INTERNAL_ERROR,
                    format!("the OpenAPI document could not be written: {e}"),
                )
                .into_response(),
            }
        }
    };
    // Besides the API's routes, those that are not REST (so not in the document).
    api.route("/api/v1/openapi.json", get(openapi))
        .route("/rpc", get(ws::rpc))
        .route("/login", get(dashboard::login))
        .route("/", get(dashboard::index))
        .route("/assets/{name}", get(dashboard::asset))
        .route("/healthz", get(crate::service::healthz))
        .route("/readyz", get(crate::service::readyz))
        .route("/metrics", get(crate::service::metrics))
        .fallback(rest::not_found)
        .layer(cors)
        .with_state(app)
}

/// One info line per request: method, path, status, token name, remote, duration. Never
/// a query string, a header value, a body or a secret.
async fn log_request(mut request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let remote = request.extensions().get::<ConnInfo>().map(|c| c.remote);
    let slot = LogSlot::default();
    request.extensions_mut().insert(slot.clone());
    let response = next.run(request).await;
    let token = slot.name();
    tracing::info!(
        method = %method,
        path = %path,
        status = response.status().as_u16(),
        token = token.as_deref().unwrap_or("-"),
        remote = %remote.map_or_else(|| "-".to_owned(), |r| r.to_string()),
        ms = started.elapsed().as_millis() as u64,
        "http"
    );
    response
}

struct Limits {
    slots: Arc<Slots>,
    refusers: Arc<Semaphore>,
    header_timeout: Duration,
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: Option<TlsAcceptor>,
    router: Gateway,
    limits: Limits,
    stop: CancellationToken,
    close: CancellationToken,
) {
    let mut backoff = Duration::from_millis(10);
    loop {
        let accepted = tokio::select! {
            biased;
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, remote) = match accepted {
            Ok(accepted) => {
                backoff = Duration::from_millis(10);
                accepted
            }
            Err(e) => {
                tracing::warn!(error = %e, retry_in = ?backoff, "gateway accept failed; backing off");
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(1));
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        // A free slot, or the one of the connection idle longest; else 503.
        let Some(slot) = limits.slots.take() else {
            refuse(stream, remote, acceptor.clone(), &limits);
            continue;
        };
        let shed = slot.shed().clone();
        let info = ConnInfo {
            remote,
            permit: Arc::new(slot),
        };
        let (router, acceptor, close) = (router.clone(), acceptor.clone(), close.clone());
        let header_timeout = limits.header_timeout;
        tokio::spawn(async move {
            let serve = async move {
                match acceptor {
                    None => serve_http(stream, info, router, header_timeout, close).await,
                    Some(acceptor) => {
                        match tokio::time::timeout(TLS_HANDSHAKE, acceptor.accept(stream)).await {
                            Ok(Ok(tls)) => {
                                serve_http(tls, info, router, header_timeout, close).await
                            }
                            Ok(Err(e)) => {
                                tracing::debug!(remote = %remote, error = %e, "TLS handshake failed")
                            }
                            Err(_) => tracing::debug!(remote = %remote, "TLS handshake timed out"),
                        }
                    }
                }
            };
            // Shed: it was idle (no request under way), so dropping it cuts nothing.
            tokio::select! {
                () = serve => {}
                () = shed.cancelled() => {
                    tracing::debug!(remote = %remote, "gateway.max_connections reached; closed the connection idle longest");
                }
            }
        });
    }
    tracing::info!("gateway stopped accepting");
}

/// Past `max_connections` with no idle connection to shed: 503 with `Retry-After`, then
/// closed; never queued.
fn refuse(stream: TcpStream, remote: SocketAddr, acceptor: Option<TlsAcceptor>, limits: &Limits) {
    let Ok(permit) = limits.refusers.clone().try_acquire_owned() else {
        return;
    };
    tracing::warn!(remote = %remote, "gateway.max_connections reached; answering 503");
    tokio::spawn(async move {
        let _permit = permit;
        let answer = async {
            let body = r#"{"error":{"code":-32001,"message":"the gateway is serving its limit of connections (gateway.max_connections); retry shortly"}}"#;
            let response = format!(
                "HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            match acceptor {
                None => write_and_close(stream, response.as_bytes()).await,
                Some(acceptor) => {
                    if let Ok(tls) = acceptor.accept(stream).await {
                        write_and_close(tls, response.as_bytes()).await;
                    }
                }
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(2), answer).await;
    });
}

/// A request under way on a connection: it ends (the connection idle again, or a
/// WebSocket) when this is dropped.
struct UnderWay {
    slot: Arc<crate::slots::Slot>,
    upgraded: bool,
}

impl UnderWay {
    fn begin(slot: Arc<crate::slots::Slot>) -> Self {
        slot.begin();
        Self {
            slot,
            upgraded: false,
        }
    }
}

impl Drop for UnderWay {
    fn drop(&mut self) {
        self.slot.end(self.upgraded);
    }
}

async fn write_and_close<S: AsyncWrite + Unpin>(mut stream: S, bytes: &[u8]) {
    let _ = stream.write_all(bytes).await;
    let _ = stream.shutdown().await;
}

async fn serve_http<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(
    io: S,
    info: ConnInfo,
    router: Gateway,
    header_timeout: Duration,
    close: CancellationToken,
) {
    let service = hyper::service::service_fn(move |mut request: Request<hyper::body::Incoming>| {
        // Busy from here (the headers are complete) until the response is sent.
        let under_way = UnderWay::begin(info.permit.clone());
        request.extensions_mut().insert(info.clone());
        let answer = router.clone().oneshot(request.map(axum::body::Body::new));
        async move {
            let response = answer.await?;
            let mut under_way = under_way;
            under_way.upgraded = response.status() == StatusCode::SWITCHING_PROTOCOLS;
            // Its body is dropped once sent whole (or when the connection ends): a
            // streaming response keeps the connection busy as long as it flows.
            Ok::<_, Infallible>(response.map(|body| {
                axum::body::Body::new(http_body_util::BodyExt::map_frame(body, move |frame| {
                    let _ = &under_way;
                    frame
                }))
            }))
        }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(true)
        .serve_connection(TokioIo::new(io), service)
        .with_upgrades();
    tokio::pin!(connection);
    tokio::select! {
        result = &mut connection => {
            if let Err(e) = result {
                tracing::debug!(error = %e, "gateway connection ended");
            }
        }
        () = close.cancelled() => {
            connection.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(Duration::from_secs(5), connection).await;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::{DashboardLogin, Delivery, HookAnswer, Principal};
    use axum::body::Body;
    use http_body_util::BodyExt;
    use zeroclaw_rpc::BoxFuture;

    /// No daemon behind the gateway: every check fails, every lookup finds nothing. Enough
    /// for routing, which is all these tests look at (the daemon's side is tested end to
    /// end in `apps/zeroclaw/tests/gateway`).
    struct NoDaemon;

    impl Backend for NoDaemon {
        fn authenticate(&self, _: &str) -> Option<Principal> {
            None
        }
        fn authenticate_dashboard(&self, _: &str, _: &str) -> Option<Principal> {
            None
        }
        fn streaming(
            &self,
            _: &Principal,
            _: String,
        ) -> Result<(Box<dyn crate::Caller>, zeroclaw_rpc::Outbound), String> {
            Err("no daemon".into())
        }
        fn caller(&self, _: &Principal, _: String) -> Result<Box<dyn crate::Caller>, String> {
            Err("no daemon".into())
        }
        fn exchange_code(&self, _: String, _: Option<String>) -> BoxFuture<Option<DashboardLogin>> {
            Box::pin(std::future::ready(None))
        }
        fn hook_body_limit(&self, _: &str) -> Option<usize> {
            None
        }
        fn deliver(&self, _: Delivery) -> BoxFuture<HookAnswer> {
            unreachable!("no hook exists, so none is delivered")
        }
        fn metrics(&self) -> Result<String, String> {
            Err("no daemon".into())
        }
        fn readiness(&self) -> BoxFuture<Vec<crate::Check>> {
            Box::pin(std::future::ready(Vec::new()))
        }
    }

    fn app() -> Shared {
        let addr: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        Arc::new(App {
            backend: Arc::new(NoDaemon),
            origins: Origins::new(addr, false, &[]),
            limiter: Limiter::default(),
            tls: false,
            cookie: crate::auth::cookie_name(addr.port()),
            max_body_bytes: 1024,
            body_timeout: Duration::from_secs(1),
            sse_heartbeat: Duration::from_secs(1),
            max_frame_bytes: 1024,
            ws: WsOptions {
                max_frame_bytes: 1024,
                ping_every: None,
                idle_timeout: None,
            },
            accepted: mpsc::channel(1).0,
            close: CancellationToken::new(),
            metrics_public: false,
        })
    }

    /// The status and the JSON-RPC error code (if any) of `method path` on the router.
    async fn answer(router: &Router, method: &Method, path: &str) -> (u16, Option<i64>) {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .body(Body::empty())
            .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        let status = response.status().as_u16();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let code = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v["error"]["code"].as_i64());
        (status, code)
    }

    #[tokio::test]
    async fn the_router_serves_exactly_the_documents_methods_on_every_documented_path() {
        let router = router(app());
        let doc = serde_json::to_value(crate::openapi::document()).unwrap();
        let paths = doc["paths"].as_object().unwrap();
        assert!(paths.len() >= 12, "{paths:?}");
        for (path, item) in paths {
            let concrete = path
                .replace("{id}", "x")
                .replace("{requestId}", "y")
                .replace("{name}", "z");
            for method in [
                Method::GET,
                Method::POST,
                Method::DELETE,
                Method::PUT,
                Method::PATCH,
            ] {
                let documented = item.get(method.as_str().to_lowercase()).is_some();
                let (status, code) = answer(&router, &method, &concrete).await;
                if documented {
                    // A handler answered: not the fallback's "no such route", not 405.
                    assert_ne!(status, 405, "{method} {path}");
                    assert_ne!(
                        code,
                        Some(zeroclaw_protocol::codes::METHOD_NOT_FOUND),
                        "{method} {path}"
                    );
                } else {
                    assert_eq!(status, 405, "{method} {path} is served but not documented");
                }
            }
        }
        // And a path the document does not have is the fallback's.
        let (status, code) = answer(&router, &Method::GET, "/api/v1/nothing").await;
        assert_eq!(
            (status, code),
            (404, Some(zeroclaw_protocol::codes::METHOD_NOT_FOUND))
        );
    }
}

//! Who is calling: a bearer token, or the dashboard's cookie (with its CSRF rule), checked
//! on every request that touches data; and the origins a browser may call from.

use crate::errors::ApiError;
use crate::limiter::Limiter;
use crate::{Accepted, Backend, Principal};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, Method, header};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use zeroclaw_rpc::websocket::WsOptions;

/// The dashboard's session cookie.
pub const COOKIE: &str = "zeroclaw_session";
/// The cookie's lifetime, renewed on every use.
pub const COOKIE_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);

/// What every request of one gateway shares.
pub struct App {
    pub backend: Arc<dyn Backend>,
    pub origins: Origins,
    pub limiter: Limiter,
    pub tls: bool,
    pub max_body_bytes: usize,
    pub body_timeout: Duration,
    /// How often an open SSE stream sends a heartbeat comment.
    pub sse_heartbeat: Duration,
    pub max_frame_bytes: usize,
    pub ws: WsOptions,
    /// Upgraded `/rpc` connections, for the daemon to serve. Bounded: a full queue makes
    /// the upgrading request wait (the daemon's accept loop drains it at once).
    pub accepted: mpsc::Sender<Accepted>,
    /// Cancelled when the daemon closes its connections: streams send their last event.
    pub close: CancellationToken,
}

pub type Shared = Arc<App>;

/// Per-connection facts the server puts in every request's extensions.
#[derive(Clone)]
pub struct ConnInfo {
    pub remote: SocketAddr,
    /// The connection's place under `gateway.max_connections`; an upgraded WebSocket
    /// keeps it until it closes.
    pub permit: Arc<crate::slots::Slot>,
}

/// What the request log says about the caller, and a cookie to renew. Filled by the
/// authentication; the secret in `renew` goes into `Set-Cookie` only, never a log.
#[derive(Clone, Default)]
pub struct LogSlot(pub Arc<Mutex<LogInfo>>);

#[derive(Default)]
pub struct LogInfo {
    pub token: Option<Arc<str>>,
    pub renew: Option<String>,
}

impl LogSlot {
    fn record(&self, name: &Arc<str>, renew: Option<String>) {
        let mut info = self.0.lock().unwrap_or_else(|e| e.into_inner());
        info.token = Some(name.clone());
        info.renew = renew;
    }
}

/// How the caller proved who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Bearer,
    Cookie,
}

/// An authenticated request.
pub struct Authed {
    pub principal: Principal,
    pub via: Via,
    pub remote: SocketAddr,
}

/// The secret a request presents: the `Authorization: Bearer` header, else the cookie.
/// Tokens in the query string are never read.
pub fn credentials(headers: &HeaderMap) -> Option<(String, Via)> {
    if let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    {
        let token = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
            .unwrap_or("")
            .trim();
        return Some((token.to_owned(), Via::Bearer));
    }
    cookie(headers).map(|secret| (secret, Via::Cookie))
}

fn cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_owned())
}

pub fn remote(parts: &Parts) -> SocketAddr {
    parts
        .extensions
        .get::<ConnInfo>()
        .map(|c| c.remote)
        .unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)))
}

/// Checks a presented secret: 401 (counted as a failure) for none or a wrong one, 429 for
/// an address that failed too often, never a slow-down for a valid one.
pub fn check(
    app: &App,
    remote: SocketAddr,
    presented: Option<(String, Via)>,
    slot: Option<&LogSlot>,
) -> Result<Authed, ApiError> {
    let found = presented
        .as_ref()
        .filter(|(secret, _)| !secret.is_empty())
        .and_then(|(secret, via)| Some((app.backend.authenticate(secret)?, *via)));
    let Some((principal, via)) = found else {
        if let Some(wait) = app.limiter.blocked(remote.ip()) {
            return Err(ApiError::too_many(wait));
        }
        if let Some(wait) = app.limiter.failed(remote.ip()) {
            tracing::warn!(remote = %remote, "too many failed authentications; slowing this address down");
            return Err(ApiError::too_many(wait));
        }
        return Err(match presented {
            None => ApiError::unauthorized(
                "authentication required: send `Authorization: Bearer <token>` (`zeroclaw token create NAME` mints one)",
            ),
            Some(_) => ApiError::unauthorized("the token is unknown, revoked or expired"),
        });
    };
    if let Some(slot) = slot {
        let renew = (via == Via::Cookie)
            .then(|| presented.map(|(secret, _)| secret))
            .flatten();
        slot.record(&principal.name, renew);
    }
    Ok(Authed {
        principal,
        via,
        remote,
    })
}

impl FromRequestParts<Shared> for Authed {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Shared) -> Result<Self, ApiError> {
        let remote = remote(parts);
        let presented = credentials(&parts.headers);
        let authed = check(app, remote, presented, parts.extensions.get::<LogSlot>())?;
        // CSRF: a cookie rides along on cross-site requests; the Origin does not lie.
        if authed.via == Via::Cookie && !is_safe(&parts.method) {
            let origin = parts
                .headers
                .get(header::ORIGIN)
                .and_then(|v| v.to_str().ok());
            if !origin.is_some_and(|o| app.origins.allows(o)) {
                return Err(ApiError::forbidden(
                    "a cookie-authenticated request that changes state must come from the gateway's own origin (or gateway.allowed_origins)",
                ));
            }
        }
        Ok(authed)
    }
}

fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The origins a browser may call from: the gateway's own (its address in its loopback
/// spellings) and `gateway.allowed_origins`.
#[derive(Debug, Clone)]
pub struct Origins {
    own: Vec<String>,
    extra: Vec<String>,
}

impl Origins {
    pub fn new(addr: SocketAddr, tls: bool, extra: &[String]) -> Self {
        let scheme = if tls { "https" } else { "http" };
        let port = addr.port();
        let mut own = vec![
            format!("{scheme}://127.0.0.1:{port}"),
            format!("{scheme}://localhost:{port}"),
            format!("{scheme}://[::1]:{port}"),
        ];
        if !addr.ip().is_loopback() && !addr.ip().is_unspecified() {
            own.push(format!("{scheme}://{addr}"));
        }
        let extra = extra
            .iter()
            .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
            .collect();
        Self { own, extra }
    }

    pub fn allows(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        self.own.contains(&origin) || self.extra.contains(&origin)
    }

    pub fn extra(&self) -> &[String] {
        &self.extra
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_own_origin_is_the_address_in_its_loopback_spellings() {
        let origins = Origins::new(
            "127.0.0.1:4000".parse().unwrap(),
            false,
            &["https://app.example".into()],
        );
        assert!(origins.allows("http://localhost:4000"));
        assert!(origins.allows("http://[::1]:4000"));
        assert!(origins.allows("https://app.example/"));
        assert!(!origins.allows("http://localhost:4001"));
        assert!(!origins.allows("https://127.0.0.1:4000"));
        assert!(!origins.allows("null"));
    }

    #[test]
    fn the_bearer_header_comes_before_the_cookie_and_the_query_is_never_read() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            "a=b; zeroclaw_session=zc_c".parse().unwrap(),
        );
        assert_eq!(credentials(&headers), Some(("zc_c".into(), Via::Cookie)));
        headers.insert(header::AUTHORIZATION, "Bearer zc_b".parse().unwrap());
        assert_eq!(credentials(&headers), Some(("zc_b".into(), Via::Bearer)));
    }
}

//! Who is calling: a bearer token, or a dashboard session (its cookie *and* its proof, with
//! the CSRF rule), checked on every request that touches data; and the origins a browser
//! may call from.
//!
//! A dashboard session is two secrets. The cookie (`HttpOnly; SameSite=Strict`) is not
//! isolated by port: the browser also sends it to every other server on `127.0.0.1` or
//! `localhost` it visits, so it is never enough on its own and never a bearer token. The
//! proof is held by the page in `sessionStorage`, which only the gateway's own origin
//! (scheme, host *and* port) can read, and sent as the [`PROOF_HEADER`] header or, on the
//! WebSocket upgrade, as the subprotocol `zeroclaw.proof.<proof>`.

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

/// The request header carrying a dashboard session's proof (and the `/auth/exchange`
/// response header that hands it to the page).
pub const PROOF_HEADER: &str = "zeroclaw-proof";

/// The dashboard's session cookie for the gateway on `port`: `zeroclaw_session_<port>`.
/// Cookies are shared by every port of a host, so the port in the name keeps the
/// dashboards of two daemons in one browser from overwriting each other's.
pub fn cookie_name(port: u16) -> String {
    format!("zeroclaw_session_{port}")
}

/// What every request of one gateway shares.
pub struct App {
    pub backend: Arc<dyn Backend>,
    pub origins: Origins,
    pub limiter: Limiter,
    pub tls: bool,
    /// The session cookie's name ([`cookie_name`]).
    pub cookie: String,
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
    /// `/metrics` without a token: `gateway.metrics_public` on a loopback gateway.
    pub metrics_public: bool,
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

/// What the request log says about the caller: the token's or session's name, filled by
/// the authentication.
#[derive(Clone, Default)]
pub struct LogSlot(pub Arc<Mutex<Option<Arc<str>>>>);

impl LogSlot {
    fn record(&self, name: &Arc<str>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(name.clone());
    }

    pub fn name(&self) -> Option<Arc<str>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// How the caller proved who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Bearer,
    /// A dashboard session: the cookie and its proof.
    Dashboard,
}

/// An authenticated request.
pub struct Authed {
    pub principal: Principal,
    pub via: Via,
    pub remote: SocketAddr,
}

/// The secrets a request presents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presented {
    /// Nothing that can be checked: no credential, an empty one, or the dashboard's
    /// cookie without its proof (which any page on another local port can make a browser
    /// send). A plain 401 that counts nothing.
    Nothing {
        cookie_only: bool,
    },
    Bearer(String),
    Dashboard {
        cookie: String,
        proof: String,
    },
}

impl Presented {
    /// The `Authorization: Bearer` header, else the session cookie with its proof (from
    /// the header, or `proof` when the caller found one elsewhere: the WebSocket's
    /// subprotocols). Tokens in the query string are never read.
    pub fn read(headers: &HeaderMap, cookie_name: &str, proof: Option<String>) -> Self {
        if let Some(value) = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
        {
            let token = value
                .strip_prefix("Bearer ")
                .or_else(|| value.strip_prefix("bearer "))
                .unwrap_or("")
                .trim();
            if !token.is_empty() {
                return Self::Bearer(token.to_owned());
            }
        }
        let cookie = cookie(headers, cookie_name).filter(|c| !c.is_empty());
        let proof = headers
            .get(PROOF_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_owned())
            .or(proof)
            .filter(|p| !p.is_empty());
        match (cookie, proof) {
            (Some(cookie), Some(proof)) => Self::Dashboard { cookie, proof },
            (cookie, _) => Self::Nothing {
                cookie_only: cookie.is_some(),
            },
        }
    }
}

/// The value of the cookie `name`, if the request carries it.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, value)| value.to_owned())
}

pub fn remote(parts: &Parts) -> SocketAddr {
    parts
        .extensions
        .get::<ConnInfo>()
        .map(|c| c.remote)
        .unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)))
}

/// Checks what a request presents. Nothing to check: 401, counted nowhere. A valid secret:
/// served, whatever the address did before. A wrong one: 401, counted, and 429 once the
/// address has failed too often.
pub fn check(
    app: &App,
    remote: SocketAddr,
    presented: Presented,
    slot: Option<&LogSlot>,
) -> Result<Authed, ApiError> {
    let (found, via) = match &presented {
        Presented::Nothing { cookie_only: false } => {
            return Err(ApiError::unauthorized(
                "authentication required: send `Authorization: Bearer <token>` (`zeroclaw token create NAME` mints one)",
            ));
        }
        Presented::Nothing { cookie_only: true } => {
            return Err(ApiError::unauthorized(
                "the dashboard's session cookie alone is not a credential: the dashboard page sends its proof with it (run `zeroclaw dashboard` to sign in); programs send `Authorization: Bearer <token>`",
            ));
        }
        Presented::Bearer(token) => (app.backend.authenticate(token), Via::Bearer),
        Presented::Dashboard { cookie, proof } => (
            app.backend.authenticate_dashboard(cookie, proof),
            Via::Dashboard,
        ),
    };
    let Some(principal) = found else {
        if let Some(wait) = app.limiter.failed(remote.ip()) {
            tracing::warn!(remote = %remote, "too many failed authentications; slowing this address down");
            return Err(ApiError::too_many(wait));
        }
        return Err(ApiError::unauthorized(match via {
            Via::Bearer => "the token is unknown, revoked or expired",
            Via::Dashboard => {
                "the dashboard session is unknown, ended or expired: run `zeroclaw dashboard` to sign in again"
            }
        }));
    };
    if let Some(slot) = slot {
        slot.record(&principal.name);
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
        let presented = Presented::read(&parts.headers, &app.cookie, None);
        let authed = check(app, remote, presented, parts.extensions.get::<LogSlot>())?;
        // CSRF, besides the proof (which no other origin can read): a state change from a
        // dashboard session must come from an origin allowed to make it.
        if authed.via == Via::Dashboard && !is_safe(&parts.method) {
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
    fn the_bearer_header_comes_first_and_the_cookie_needs_its_proof() {
        let name = cookie_name(4000);
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            "a=b; zeroclaw_session_4001=zcd_other; zeroclaw_session_4000=zcd_c"
                .parse()
                .unwrap(),
        );
        assert_eq!(
            Presented::read(&headers, &name, None),
            Presented::Nothing { cookie_only: true }
        );
        assert_eq!(
            Presented::read(&headers, &name, Some("p".into())),
            Presented::Dashboard {
                cookie: "zcd_c".into(),
                proof: "p".into()
            }
        );
        headers.insert(PROOF_HEADER, "q".parse().unwrap());
        assert_eq!(
            Presented::read(&headers, &name, None),
            Presented::Dashboard {
                cookie: "zcd_c".into(),
                proof: "q".into()
            }
        );
        headers.insert(header::AUTHORIZATION, "Bearer zc_b".parse().unwrap());
        assert_eq!(
            Presented::read(&headers, &name, None),
            Presented::Bearer("zc_b".into())
        );
        // A proof without its cookie, or an empty bearer: nothing to check.
        let mut bare = HeaderMap::new();
        bare.insert(PROOF_HEADER, "q".parse().unwrap());
        bare.insert(header::AUTHORIZATION, "Bearer ".parse().unwrap());
        assert_eq!(
            Presented::read(&bare, &name, None),
            Presented::Nothing { cookie_only: false }
        );
    }
}

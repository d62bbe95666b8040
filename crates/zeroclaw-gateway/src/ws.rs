//! `GET /rpc`: the handshake gate of a WebSocket (credentials, `Origin`, subprotocols),
//! then the upgrade, then the connection is the daemon's to serve like a socket's.

use crate::auth::{App, ConnInfo, LogSlot, Presented, Shared, Via, check};
use crate::errors::ApiError;
use crate::{Accepted, Principal};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;
use zeroclaw_rpc::websocket::WsTransport;

/// The subprotocol the server selects.
pub const PROTOCOL: &str = "zeroclaw.v1";
/// A browser (which cannot set headers on a WebSocket) sends its token as a subprotocol.
pub const BEARER_PREFIX: &str = "zeroclaw.bearer.";
/// ...and the dashboard its session's proof (the cookie comes by itself).
pub const PROOF_PREFIX: &str = "zeroclaw.proof.";

/// What `Sec-WebSocket-Protocol` offers: whether `zeroclaw.v1` is among them, a token, a
/// dashboard session's proof.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Offered {
    pub v1: bool,
    pub bearer: Option<String>,
    pub proof: Option<String>,
}

pub fn offered(header: &str) -> Offered {
    let mut offered = Offered::default();
    for protocol in header.split(',').map(str::trim) {
        if protocol == PROTOCOL {
            offered.v1 = true;
        } else if let Some(token) = protocol.strip_prefix(BEARER_PREFIX) {
            offered.bearer = Some(token.to_owned());
        } else if let Some(proof) = protocol.strip_prefix(PROOF_PREFIX) {
            offered.proof = Some(proof.to_owned());
        }
    }
    offered
}

fn offered_in(headers: &HeaderMap) -> Offered {
    let joined: Vec<&str> = headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    offered(&joined.join(","))
}

fn is_upgrade(headers: &HeaderMap) -> bool {
    let has = |name: header::HeaderName, token: &str| {
        headers.get_all(name).iter().any(|v| {
            v.to_str()
                .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
        })
    };
    has(header::CONNECTION, "upgrade")
        && has(header::UPGRADE, "websocket")
        && headers
            .get(header::SEC_WEBSOCKET_VERSION)
            .is_some_and(|v| v == "13")
}

pub async fn rpc(State(app): State<Shared>, mut request: Request) -> Response {
    match gate(&app, &mut request) {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

fn gate(app: &Arc<App>, request: &mut Request) -> Result<Response, ApiError> {
    let headers = request.headers();
    if !is_upgrade(headers) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            zeroclaw_protocol::codes::INVALID_REQUEST,
            "GET /rpc is a WebSocket: send `Connection: Upgrade`, `Upgrade: websocket` and `Sec-WebSocket-Version: 13`",
        ));
    }
    let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY).cloned() else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            zeroclaw_protocol::codes::INVALID_REQUEST,
            "missing Sec-WebSocket-Key",
        ));
    };
    let offered = offered_in(headers);
    if (offered.bearer.is_some() || offered.proof.is_some()) && !offered.v1 {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            zeroclaw_protocol::codes::INVALID_REQUEST,
            format!("a subprotocol bearer or proof needs {PROTOCOL:?} in the same list"),
        ));
    }
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    if let Some(origin) = origin
        && !app.origins.allows(origin)
    {
        return Err(ApiError::forbidden(format!(
            "WebSocket upgrades from origin {origin:?} are refused: add it to gateway.allowed_origins"
        )));
    }
    let presented = match Presented::read(headers, &app.cookie, offered.proof.clone()) {
        Presented::Bearer(token) => Presented::Bearer(token),
        other => match offered.bearer.clone().filter(|t| !t.is_empty()) {
            Some(token) => Presented::Bearer(token),
            None => other,
        },
    };
    let slot = request.extensions().get::<LogSlot>().cloned();
    let info = request.extensions().get::<ConnInfo>().cloned();
    let remote = info
        .as_ref()
        .map_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)), |c| c.remote);
    let authed = check(app, remote, presented, slot.as_ref())?;
    if authed.via == Via::Dashboard && origin.is_none() {
        return Err(ApiError::forbidden(
            "a dashboard session's WebSocket upgrade must send its Origin",
        ));
    }
    let on_upgrade = hyper::upgrade::on(&mut *request);
    let label = format!("ws:{remote},token={}", authed.principal.name);
    spawn_upgraded(app.clone(), on_upgrade, authed.principal, label, info);

    let mut response = StatusCode::SWITCHING_PROTOCOLS.into_response();
    let h = response.headers_mut();
    h.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    let accept = derive_accept_key(key.as_bytes());
    if let Ok(accept) = HeaderValue::from_str(&accept) {
        h.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    }
    if offered.v1 {
        h.insert(
            header::SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::from_static(PROTOCOL),
        );
    }
    Ok(response)
}

fn spawn_upgraded(
    app: Arc<App>,
    on_upgrade: hyper::upgrade::OnUpgrade,
    principal: Principal,
    label: String,
    info: Option<ConnInfo>,
) {
    tokio::spawn(async move {
        let upgraded = match on_upgrade.await {
            Ok(upgraded) => upgraded,
            Err(e) => {
                tracing::debug!(peer = %label, error = %e, "WebSocket upgrade failed");
                return;
            }
        };
        let ws = WebSocketStream::from_raw_socket(
            TokioIo::new(upgraded),
            Role::Server,
            Some(app.ws.config()),
        )
        .await;
        let mut transport = WsTransport::new(ws, label.clone(), app.ws.clone());
        if let Some(info) = info {
            transport = transport.with_guard(Box::new(info.permit));
        }
        let accepted = Accepted {
            transport,
            principal,
            label,
        };
        if app.accepted.send(accepted).await.is_err() {
            tracing::debug!("the daemon stopped taking WebSocket connections");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subprotocol_list_carries_the_version_and_a_token() {
        assert_eq!(
            offered("zeroclaw.v1, zeroclaw.bearer.zc_abc"),
            Offered {
                v1: true,
                bearer: Some("zc_abc".into()),
                proof: None,
            }
        );
        assert_eq!(offered("chat").bearer, None);
        assert_eq!(
            offered("zeroclaw.v1,zeroclaw.proof.p1").proof.as_deref(),
            Some("p1")
        );
    }
}

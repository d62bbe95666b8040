//! Dashboard login: `zeroclaw dashboard` prints `/login#code=…` (a fragment, never sent in
//! a request line); the page posts the code to `/auth/exchange`, which answers 204 with an
//! `HttpOnly; SameSite=Strict` cookie holding a new dashboard token (`Secure` under TLS).

use crate::auth::{COOKIE, COOKIE_MAX_AGE, ConnInfo, Shared};
use crate::errors::ApiError;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use serde::Deserialize;
use std::net::SocketAddr;

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExchangeBody {
    pub code: String,
}

pub fn decode_exchange(bytes: &[u8]) -> Result<ExchangeBody, ApiError> {
    crate::rest::decode(bytes)
}

/// The `Set-Cookie` value for a dashboard token's secret.
pub fn cookie(secret: &str, tls: bool) -> Option<HeaderValue> {
    let secure = if tls { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{COOKIE}={secret}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}{secure}",
        COOKIE_MAX_AGE.as_secs()
    ))
    .ok()
}

#[utoipa::path(post, path = "/auth/exchange", tag = "gateway", request_body = ExchangeBody,
    responses((status = 204, description = "The session cookie is set"), (status = 401, body = serde_json::Value)))]
pub async fn exchange(
    State(app): State<Shared>,
    headers: HeaderMap,
    info: Option<axum::Extension<ConnInfo>>,
    request: Body,
) -> Result<Response, ApiError> {
    let remote = info.map_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)), |i| i.remote);
    if let Some(wait) = app.limiter.blocked(remote.ip()) {
        return Err(ApiError::too_many(wait));
    }
    // A login from another site could plant its own session: the Origin must be ours.
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok())
        && !app.origins.allows(origin)
    {
        return Err(ApiError::forbidden(
            "a login must come from the gateway's own origin",
        ));
    }
    let limited = http_body_util::Limited::new(request, 4096);
    let bytes = match tokio::time::timeout(app.body_timeout, limited.collect()).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        _ => return Err(ApiError::too_large(4096)),
    };
    let ExchangeBody { code } = decode_exchange(&bytes)?;
    let Some(secret) = app.backend.exchange_code(code).await else {
        if let Some(wait) = app.limiter.failed(remote.ip()) {
            return Err(ApiError::too_many(wait));
        }
        return Err(ApiError::unauthorized(
            "the login code is unknown, used or expired: run `zeroclaw dashboard` again",
        ));
    };
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Some(value) = cookie(&secret, app.tls) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    Ok(response)
}

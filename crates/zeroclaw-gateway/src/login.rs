//! Dashboard login: `zeroclaw dashboard` prints `/login#code=…` (a fragment, never sent in
//! a request line); the page posts the code to `/auth/exchange`, which answers 204 with a
//! new dashboard session: its cookie in `Set-Cookie` (`HttpOnly; SameSite=Strict`, `Secure`
//! under TLS) and its proof in the `Zeroclaw-Proof` header, for the page to keep in
//! `sessionStorage` (see `auth`).

use crate::auth::{ConnInfo, PROOF_HEADER, Shared, cookie};
use crate::errors::ApiError;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use serde::Deserialize;
use std::net::SocketAddr;
use std::time::Duration;

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExchangeBody {
    pub code: String,
}

pub fn decode_exchange(bytes: &[u8]) -> Result<ExchangeBody, ApiError> {
    crate::rest::decode(bytes)
}

/// The `Set-Cookie` value for a dashboard session's cookie.
pub fn set_cookie(name: &str, secret: &str, max_age: Duration, tls: bool) -> Option<HeaderValue> {
    let secure = if tls { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{name}={secret}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}{secure}",
        max_age.as_secs()
    ))
    .ok()
}

#[utoipa::path(post, path = "/auth/exchange", tag = "gateway", request_body = ExchangeBody,
    responses((status = 204, description = "A new dashboard session: its cookie in `Set-Cookie`, its proof in the `Zeroclaw-Proof` header"),
              (status = 401, body = serde_json::Value),
              (status = 403, description = "From another origin", body = serde_json::Value),
              (status = 429, description = "Too many wrong codes or tokens from this address", body = serde_json::Value)))]
pub async fn exchange(
    State(app): State<Shared>,
    headers: HeaderMap,
    info: Option<axum::Extension<ConnInfo>>,
    request: Body,
) -> Result<Response, ApiError> {
    let remote = info.map_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)), |i| i.remote);
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
    if code.is_empty() {
        // Nothing to check: a plain 401 that counts nothing.
        return Err(ApiError::unauthorized(
            "no login code: run `zeroclaw dashboard` for a link",
        ));
    }
    // The code is tried first: a valid one is never refused for others' failures.
    let replacing = cookie(&headers, &app.cookie).filter(|c| !c.is_empty());
    let Some(login) = app.backend.exchange_code(code, replacing).await else {
        if let Some(wait) = app.limiter.failed(remote.ip()) {
            tracing::warn!(remote = %remote, "too many failed authentications; slowing this address down");
            return Err(ApiError::too_many(wait));
        }
        return Err(ApiError::unauthorized(
            "the login code is unknown, used or expired: run `zeroclaw dashboard` again",
        ));
    };
    let mut response = StatusCode::NO_CONTENT.into_response();
    let h = response.headers_mut();
    if let Some(value) = set_cookie(&app.cookie, &login.cookie, login.max_age, app.tls) {
        h.insert(header::SET_COOKIE, value);
    }
    if let Ok(value) = HeaderValue::from_str(&login.proof) {
        h.insert(HeaderName::from_static(PROOF_HEADER), value);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

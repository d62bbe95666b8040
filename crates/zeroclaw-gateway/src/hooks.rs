//! `POST /hooks/{name}`: a webhook delivery (docs/unattended.md). No token: the request
//! proves itself with its signature (GitHub's `X-Hub-Signature-256` or Standard Webhooks'),
//! which the daemon checks. This side reads the body within the hook's `max_body_bytes` and
//! hands it over whole: a `Content-Length` over the cap is answered 413 before any of the
//! body is read, a body that grows past it (chunked) 413 as soon as it does. The log line
//! (server.rs) has the path and status, never a header value or the body.

use crate::auth::{ConnInfo, Shared};
use crate::errors::ApiError;
use crate::{Delivery, HookAnswer};
use axum::Extension;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use zeroclaw_protocol::codes;

#[utoipa::path(post, path = "/hooks/{name}", tag = "webhooks",
    params(("name" = String, Path, description = "The webhook's name (`[[webhooks]] name`)")),
    request_body(content = String, description = "The sender's payload, signed with `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>` (`signature = \"github\"`) or with Standard Webhooks' `webhook-id`, `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>` (`signature = \"standard\"`)"),
    responses(
        (status = 202, description = "Recorded and queued: `{runId, sessionId, deliveryId}`", body = Value),
        (status = 200, description = "A repeated delivery (the same delivery id, or under the GitHub scheme the same signed body within the replay window): the first run's `{runId, sessionId, deliveryId, status}`", body = Value),
        (status = 400, description = "A header the prompt inserts is not a plain token, or the delivery id is too long", body = Value),
        (status = 401, description = "A missing or wrong signature, or (Standard Webhooks) a timestamp more than 5 minutes from the daemon's clock", body = Value),
        (status = 404, description = "No such webhook", body = Value),
        (status = 413, description = "The body is larger than the hook's `max_body_bytes`", body = Value),
        (status = 429, description = "The hook's queue is full, or this address sent too many wrong signatures (`Retry-After`)", body = Value),
        (status = 503, description = "The hook is inactive (its `secret_env` is unset) or the daemon is stopping", body = Value)))]
pub async fn deliver(
    State(app): State<Shared>,
    Path(name): Path<String>,
    info: Option<Extension<ConnInfo>>,
    headers: HeaderMap,
    request: Body,
) -> Response {
    let Some(limit) = app.backend.hook_body_limit(&name) else {
        return ApiError::new(
            StatusCode::NOT_FOUND,
            codes::INVALID_PARAMS,
            "no such webhook; the daemon's config.toml lists them as [[webhooks]]",
        )
        .into_response();
    };
    // Refused on its word, before a byte of the body is read or waited for.
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(length) = declared
        && length > u64::try_from(limit).unwrap_or(u64::MAX)
    {
        return too_large(limit, &format!("Content-Length {length}"));
    }
    let limited = http_body_util::Limited::new(request, limit);
    let body = match tokio::time::timeout(app.body_timeout, limited.collect()).await {
        Err(_) => {
            return ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                codes::INVALID_REQUEST,
                format!("the body did not arrive within {:?}", app.body_timeout),
            )
            .into_response();
        }
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return too_large(limit, "the body");
        }
        Ok(Err(e)) => {
            return ApiError::new(
                StatusCode::BAD_REQUEST,
                codes::INVALID_REQUEST,
                format!("the body could not be read: {e}"),
            )
            .into_response();
        }
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    let remote = info.map_or_else(
        || std::net::SocketAddr::from(([0, 0, 0, 0], 0)),
        |Extension(info)| info.remote,
    );
    // A signature is a secret like a token: a wrong one counts toward the failed-auth
    // slow-down (a delivery without one counts nothing; a valid one is never slowed).
    let signed = SIGNATURE_HEADERS.iter().any(|h| headers.contains_key(*h));
    let delivery = Delivery {
        name,
        headers: headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
        remote,
    };
    let hook = app.backend.deliver(delivery).await;
    if hook.status == StatusCode::UNAUTHORIZED.as_u16()
        && signed
        && let Some(wait) = app.limiter.failed(remote.ip())
    {
        tracing::warn!(remote = %remote, "too many failed authentications; slowing this address down");
        return ApiError::too_many(wait).into_response();
    }
    answer(hook)
}

/// The headers that carry a delivery's signature, under either scheme.
const SIGNATURE_HEADERS: &[&str] = &["x-hub-signature-256", "webhook-signature"];

/// 413 with the gateway's `data: {limit}` (docs/gateway.md). The connection is closed
/// after the answer: the rest of the body is not read.
fn too_large(limit: usize, what: &str) -> Response {
    let mut response = ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        codes::INVALID_REQUEST,
        format!("{what} is larger than this webhook's max_body_bytes ({limit} bytes)"),
    )
    .with_data(serde_json::json!({ "limit": limit }))
    .into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

fn answer(mut hook: HookAnswer) -> Response {
    let status = StatusCode::from_u16(hook.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if status == StatusCode::TOO_MANY_REQUESTS {
        let secs = *hook.retry_after.get_or_insert(1);
        crate::errors::stamp_retry(&mut hook.body, secs);
    }
    let mut response = (status, axum::Json(hook.body)).into_response();
    if let Some(secs) = hook.retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

//! `POST /hooks/{name}`: a webhook delivery (docs/unattended.md). No token: the request
//! proves itself with its `X-Hub-Signature-256`, which the daemon checks. This side reads
//! the body within the hook's `max_body_bytes` (413 past it) and hands it over whole; the
//! log line (server.rs) has the path and status, never a header value or the body.

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
    request_body(content = String, description = "The sender's payload, signed with `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`"),
    responses(
        (status = 202, description = "Recorded and queued: `{runId, sessionId, deliveryId}`", body = Value),
        (status = 200, description = "A repeated delivery: the first run's `{runId, sessionId, deliveryId, status}`", body = Value),
        (status = 401, description = "A missing or wrong signature", body = Value),
        (status = 404, description = "No such webhook", body = Value),
        (status = 413, description = "The body is larger than the hook's `max_body_bytes`", body = Value),
        (status = 429, description = "The hook's queue is full (`Retry-After`)", body = Value),
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
            return ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                codes::INVALID_REQUEST,
                format!("the body is larger than this webhook's max_body_bytes ({limit} bytes)"),
            )
            .into_response();
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
        remote: info.map_or_else(
            || std::net::SocketAddr::from(([0, 0, 0, 0], 0)),
            |Extension(info)| info.remote,
        ),
    };
    answer(app.backend.deliver(delivery).await)
}

fn answer(hook: HookAnswer) -> Response {
    let status = StatusCode::from_u16(hook.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, axum::Json(hook.body)).into_response();
    if let Some(secs) = hook.retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

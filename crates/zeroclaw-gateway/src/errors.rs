//! Errors as HTTP answers: `{"error": {"code", "message", "data"?}}` with the code of the
//! RPC error and the HTTP status that fits it.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use zeroclaw_protocol::codes;
use zeroclaw_rpc::{CallError, RpcError};

/// The HTTP status of an RPC error code.
pub fn http_status(code: i64, data: Option<&Value>) -> StatusCode {
    match code {
        codes::PARSE_ERROR | codes::INVALID_REQUEST | codes::INVALID_PARAMS => {
            StatusCode::BAD_REQUEST
        }
        codes::METHOD_NOT_FOUND | codes::SESSION_NOT_FOUND => StatusCode::NOT_FOUND,
        codes::AUTH_REQUIRED => StatusCode::UNAUTHORIZED,
        codes::NOT_ALLOWED => StatusCode::FORBIDDEN,
        codes::SESSION_BUSY | codes::REWIND_CONFLICT | codes::NO_TURN_RUNNING => {
            StatusCode::CONFLICT
        }
        codes::CHECKPOINT_UNAVAILABLE => StatusCode::UNPROCESSABLE_ENTITY,
        codes::LIMIT_REACHED => StatusCode::TOO_MANY_REQUESTS,
        codes::PROVIDER_ERROR => {
            // No provider configured, or one that cannot be reached, is "unavailable";
            // a provider that answered with an error is a bad gateway.
            let kind = data.and_then(|d| d.get("kind")).and_then(Value::as_str);
            match kind {
                Some("unreachable" | "missing_api_key" | "timeout" | "rate_limited") => {
                    StatusCode::SERVICE_UNAVAILABLE
                }
                _ => StatusCode::BAD_GATEWAY,
            }
        }
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    /// Boxed: an error travels through every handler's `Result`.
    pub error: Box<RpcError>,
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: i64, message: impl Into<String>) -> Self {
        Self {
            status,
            error: Box::new(RpcError::new(code, message.into())),
            retry_after: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.error.data = Some(data);
        self
    }

    pub fn unauthorized(message: &str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, codes::AUTH_REQUIRED, message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, codes::NOT_ALLOWED, message)
    }

    pub fn too_many(retry_after: u64) -> Self {
        let mut e = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            codes::LIMIT_REACHED,
            "too many failed authentications from this address; wait and retry with a valid token",
        )
        .with_data(json!({ "retryAfterSecs": retry_after }));
        e.retry_after = Some(retry_after);
        e
    }

    pub fn too_large(limit: usize) -> Self {
        Self::too_large_as(limit, "gateway.max_body_bytes")
    }

    /// 413 for a body over `limit`, which `what` names.
    pub fn too_large_as(limit: usize, what: &str) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            codes::INVALID_REQUEST,
            format!("the request body is larger than {what} ({limit} bytes)"),
        )
        .with_data(json!({ "limit": limit }))
    }

    pub fn unavailable(message: impl Into<String>) -> Self {
        let mut e = Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            codes::INTERNAL_ERROR,
            message,
        );
        e.retry_after = Some(1);
        e
    }
}

impl From<RpcError> for ApiError {
    fn from(error: RpcError) -> Self {
        let status = http_status(error.code, error.data.as_ref());
        let retry_after = (status == StatusCode::TOO_MANY_REQUESTS).then_some(1);
        Self {
            status,
            error: Box::new(error),
            retry_after,
        }
    }
}

impl From<CallError> for ApiError {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Rpc(error) => error.into(),
            CallError::Timeout(t) => Self::new(
                StatusCode::GATEWAY_TIMEOUT,
                codes::INTERNAL_ERROR,
                format!("the daemon did not answer within {t:?}"),
            ),
            CallError::Closed => Self::unavailable("the daemon closed the connection (stopping?)"),
        }
    }
}

/// Every 429, whatever refused (failed authentications, a full webhook queue, the turn
/// limit), tells the wait the same two ways: `Retry-After: N` and `data.retryAfterSecs: N` in
/// its `{"error": {code, message, data}}` body. `body` is that body; `secs` the wait.
pub fn stamp_retry(body: &mut Value, secs: u64) {
    let error = &mut body["error"];
    if !error["data"].is_object() {
        error["data"] = json!({});
    }
    error["data"]["retryAfterSecs"] = json!(secs);
}

impl IntoResponse for ApiError {
    fn into_response(mut self) -> Response {
        if self.status == StatusCode::TOO_MANY_REQUESTS {
            self.retry_after = Some(self.retry_after.unwrap_or(1));
        }
        let mut body = json!({ "code": self.error.code, "message": self.error.message });
        if let Some(data) = self.error.data {
            body["data"] = data;
        }
        let mut body = json!({ "error": body });
        if let (StatusCode::TOO_MANY_REQUESTS, Some(secs)) = (self.status, self.retry_after) {
            stamp_retry(&mut body, secs);
        }
        let mut response = (self.status, axum::Json(body)).into_response();
        let headers = response.headers_mut();
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"zeroclaw\""),
            );
        }
        if let Some(secs) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 429 from the daemon's turn limit (`-32001` with its own data) reads like the
    /// others: `Retry-After` and `data.retryAfterSecs`, the data it had kept.
    #[test]
    fn every_429_carries_retry_after_in_its_header_and_body() {
        let limit = RpcError::new(codes::LIMIT_REACHED, "4 turns are running")
            .with_data(json!({ "limit": 4 }));
        for error in [ApiError::from(limit), ApiError::too_many(7)] {
            let response = error.into_response();
            assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
            let secs: u64 = response.headers()[header::RETRY_AFTER]
                .to_str()
                .map(|v| v.parse().unwrap_or(0))
                .unwrap_or(0);
            assert!(secs >= 1);
            let body = body_of(response);
            assert_eq!(body["error"]["code"], codes::LIMIT_REACHED);
            assert_eq!(body["error"]["data"]["retryAfterSecs"], secs);
        }
    }

    fn body_of(response: Response) -> Value {
        let bytes = tokio::runtime::Builder::new_current_thread()
            .build()
            .ok()
            .and_then(|rt| {
                rt.block_on(axum::body::to_bytes(response.into_body(), usize::MAX))
                    .ok()
            })
            .unwrap_or_default();
        serde_json::from_slice(&bytes).unwrap_or_default()
    }

    #[test]
    fn every_rpc_error_code_has_its_http_status() {
        let table = [
            (codes::PARSE_ERROR, 400),
            (codes::INVALID_REQUEST, 400),
            (codes::INVALID_PARAMS, 400),
            (codes::METHOD_NOT_FOUND, 404),
            (codes::SESSION_NOT_FOUND, 404),
            (codes::AUTH_REQUIRED, 401),
            (codes::NOT_ALLOWED, 403),
            (codes::SESSION_BUSY, 409),
            (codes::REWIND_CONFLICT, 409),
            (codes::CHECKPOINT_UNAVAILABLE, 422),
            (codes::LIMIT_REACHED, 429),
            (codes::PROVIDER_ERROR, 502),
            (codes::NOT_INITIALIZED, 500),
            (codes::VERSION_MISMATCH, 500),
            (codes::INTERNAL_ERROR, 500),
        ];
        for (code, status) in table {
            assert_eq!(http_status(code, None).as_u16(), status, "{code}");
        }
        let unreachable = json!({"kind": "unreachable"});
        assert_eq!(
            http_status(codes::PROVIDER_ERROR, Some(&unreachable)).as_u16(),
            503
        );
    }
}

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
        codes::SESSION_BUSY => StatusCode::CONFLICT,
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
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            codes::INVALID_REQUEST,
            format!("the request body is larger than gateway.max_body_bytes ({limit} bytes)"),
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

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = json!({ "code": self.error.code, "message": self.error.message });
        if let Some(data) = self.error.data {
            body["data"] = data;
        }
        let mut response = (self.status, axum::Json(json!({ "error": body }))).into_response();
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

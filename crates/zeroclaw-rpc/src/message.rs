//! Wire types: plain data, serialised exactly as JSON-RPC 2.0 frames.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// JSON-RPC and zeroclaw error codes (see `docs/protocol.md`).
pub mod codes {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// The first request on a connection must be `initialize`.
    pub const NOT_INITIALIZED: i64 = -32010;
    /// `initialize` asked for a protocol version this daemon does not speak.
    pub const VERSION_MISMATCH: i64 = -32011;
    pub const SESSION_NOT_FOUND: i64 = -32000;
    /// A configured limit (connections, sessions, requests in flight) was reached.
    pub const LIMIT_REACHED: i64 = -32001;
    pub const SESSION_BUSY: i64 = -32002;
    pub const NOT_ALLOWED: i64 = -32003;
    pub const PROVIDER_ERROR: i64 = -32004;
}

/// The `error` member of a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(codes::PARSE_ERROR, format!("parse error: {detail}"))
    }

    pub fn invalid_request(why: impl fmt::Display) -> Self {
        Self::new(codes::INVALID_REQUEST, format!("invalid request: {why}"))
    }

    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            codes::METHOD_NOT_FOUND,
            format!("method not found: {method:?}; `initialize` lists the methods this daemon has"),
        )
        .with_data(serde_json::json!({ "method": method }))
    }

    pub fn invalid_params(why: impl fmt::Display) -> Self {
        Self::new(codes::INVALID_PARAMS, format!("invalid params: {why}"))
    }

    pub fn internal(why: impl fmt::Display) -> Self {
        Self::new(codes::INTERNAL_ERROR, format!("internal error: {why}"))
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

const VERSION: &str = "2.0";

#[derive(Serialize)]
struct RequestFrame<'a> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Value>,
}

#[derive(Serialize)]
struct ResultFrame<'a> {
    jsonrpc: &'static str,
    result: &'a Value,
    id: &'a Value,
}

#[derive(Serialize)]
struct ErrorFrame<'a> {
    jsonrpc: &'static str,
    error: &'a RpcError,
    id: &'a Value,
}

/// Serialises a request (`id` present) or notification (`id` absent) as one compact line.
pub fn encode_request(method: &str, params: Option<&Value>, id: Option<&Value>) -> Vec<u8> {
    to_line(&RequestFrame {
        jsonrpc: VERSION,
        method,
        params,
        id,
    })
}

/// Serialises a response; `id` is echoed verbatim (`null` when none could be recovered).
pub fn encode_response(id: &Value, outcome: &Result<Value, RpcError>) -> Vec<u8> {
    match outcome {
        Ok(result) => to_line(&ResultFrame {
            jsonrpc: VERSION,
            result,
            id,
        }),
        Err(error) => to_line(&ErrorFrame {
            jsonrpc: VERSION,
            error,
            id,
        }),
    }
}

fn to_line(frame: &impl Serialize) -> Vec<u8> {
    // Serialising these types cannot fail: every map key is a string and no type has a
    // fallible Serialize impl. Fall back to a fixed internal error rather than panic.
    serde_json::to_vec(frame).unwrap_or_else(|_| {
        br#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"internal error: unserialisable frame"},"id":null}"#.to_vec()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frames_are_compact_single_lines() {
        let req = encode_request("status", Some(&json!({})), Some(&json!(1)));
        assert_eq!(
            req,
            br#"{"jsonrpc":"2.0","method":"status","params":{},"id":1}"#
        );
        let note = encode_request("session/update", Some(&json!({"text":"a\nb"})), None);
        assert!(!note.contains(&b'\n'));
        let ok = encode_response(&json!("zc-out-0"), &Ok(Value::Null));
        assert_eq!(ok, br#"{"jsonrpc":"2.0","result":null,"id":"zc-out-0"}"#);
        let err = encode_response(&Value::Null, &Err(RpcError::new(-32700, "bad")));
        assert_eq!(
            err,
            br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"bad"},"id":null}"#
        );
    }
}

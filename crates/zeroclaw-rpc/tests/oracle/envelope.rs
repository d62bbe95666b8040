//! The envelope table of `docs/protocol.md`, read independently of `src/envelope.rs`: what
//! a frame gets, leaving out the human messages. Included by
//! `fuzz/fuzz_targets/envelope_classify.rs` as well as by the property tests.

use serde_json::{Map, Value};
use zeroclaw_rpc::codes;
use zeroclaw_rpc::envelope::Envelope;

/// What the table says a frame gets.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// An error answer with this code, to this id.
    Reply(i64, Value),
    Request,
    Notification,
    Response,
    Drop,
}

/// An id the protocol allows: a string, a number or null.
pub fn valid_id(id: &Value) -> bool {
    matches!(id, Value::String(_) | Value::Number(_) | Value::Null)
}

/// What the table says `frame` gets.
pub fn expected(frame: &[u8]) -> Expected {
    let Ok(value) = serde_json::from_slice::<Value>(frame) else {
        return Expected::Reply(codes::PARSE_ERROR, Value::Null);
    };
    let Value::Object(map) = value else {
        return Expected::Reply(codes::INVALID_REQUEST, Value::Null);
    };
    let method = map.contains_key("method");
    let result = map.contains_key("result");
    let error = map.contains_key("error");
    match (method, result || error) {
        (true, false) => request_shaped(&map),
        (false, true) => response_shaped(&map, result, error),
        _ => Expected::Reply(codes::INVALID_REQUEST, Value::Null),
    }
}

/// What `classify` decided, in the table's terms.
pub fn verdict(envelope: &Envelope) -> Expected {
    match envelope {
        Envelope::Reply { id, error } => Expected::Reply(error.code, id.to_value()),
        Envelope::Request { .. } => Expected::Request,
        Envelope::Notification { .. } => Expected::Notification,
        Envelope::Response { .. } => Expected::Response,
        Envelope::Drop { .. } => Expected::Drop,
    }
}

fn version_ok(map: &Map<String, Value>) -> bool {
    map.get("jsonrpc") == Some(&Value::String("2.0".into()))
}

fn request_shaped(map: &Map<String, Value>) -> Expected {
    let valid = version_ok(map)
        && map.get("method").is_some_and(Value::is_string)
        && map
            .get("params")
            .is_none_or(|p| p.is_object() || p.is_array())
        && map.get("id").is_none_or(valid_id);
    match (valid, map.get("id")) {
        (true, Some(_)) => Expected::Request,
        (true, None) => Expected::Notification,
        (false, None) => Expected::Drop,
        (false, Some(id)) if valid_id(id) => Expected::Reply(codes::INVALID_REQUEST, id.clone()),
        (false, Some(_)) => Expected::Reply(codes::INVALID_REQUEST, Value::Null),
    }
}

fn response_shaped(map: &Map<String, Value>, result: bool, error: bool) -> Expected {
    if result && error || !version_ok(map) || !map.get("id").is_some_and(valid_id) {
        return Expected::Drop;
    }
    if error {
        let Some(Value::Object(e)) = map.get("error") else {
            return Expected::Drop;
        };
        let code_ok = e.get("code").is_some_and(|c| c.as_i64().is_some());
        let message_ok = e.get("message").is_some_and(Value::is_string);
        if !(code_ok && message_ok) {
            return Expected::Drop;
        }
    }
    Expected::Response
}

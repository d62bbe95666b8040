//! Envelope classification: what one frame is, and what (if anything) it is owed.
//!
//! The rules, from `docs/protocol.md`:
//!
//! | frame | outcome |
//! |---|---|
//! | not JSON (incl. invalid UTF-8, nesting past serde_json's limit) | answer `-32700`, id null |
//! | JSON but not an object (arrays too: no batches) | answer `-32600`, id null |
//! | `method` and no `result`/`error`, valid | [`Envelope::Request`] / [`Envelope::Notification`] |
//! | `method` and no `result`/`error`, invalid | answer `-32600` with the id if it is itself valid; an invalid notification is dropped |
//! | `result` or `error` and no `method`, valid | [`Envelope::Response`] |
//! | `result` or `error` and no `method`, invalid | dropped, never answered: echoing its id could complete an unrelated request in the other direction |
//! | neither shape, or both | answer `-32600`, id null |

use crate::message::RpcError;
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;

/// One classified inbound frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Envelope {
    Request {
        id: Value,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    Response {
        id: Value,
        outcome: Result<Value, RpcError>,
    },
    /// Answer with this error and id, nothing else.
    Reply { id: Value, error: RpcError },
    /// Log the reason (never the contents) and drop the frame.
    Drop { reason: &'static str },
}

pub fn classify(frame: &[u8]) -> Envelope {
    // The fast path reads the object's members straight from the bytes into six slots (no
    // map of every key). Anything it cannot read (not JSON, not an object) goes to the slow
    // path, which parses the frame as a `Value` to find the exact error.
    match serde_json::from_slice::<Classified>(frame) {
        Ok(Classified(envelope)) => envelope,
        Err(_) => classify_slowly(frame),
    }
}

/// An envelope classified as its frame is read (the rules run inside the visitor, so the
/// members are never moved around as a whole).
struct Classified(Envelope);

/// What the rules look at. Each member is `Some` when present, a present `null` included.
#[derive(Default)]
struct Members {
    version_ok: bool,
    method: Option<Value>,
    id: Option<Value>,
    params: Option<Value>,
    result: Option<Value>,
    error: Option<Value>,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Key {
    Jsonrpc,
    Method,
    Id,
    Params,
    Result,
    Error,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for Classified {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(MembersVisitor)
    }
}

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Classified;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Classified, A::Error> {
        let mut members = Members::default();
        // Every value is read in full, unknown members too (as a `Value`): skipping them
        // would skip checks (UTF-8, escapes) the slow path makes. A repeated member keeps
        // its last value, as a `Value` object would.
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Jsonrpc => members.version_ok = map.next_value::<IsVersion>()?.0,
                Key::Method => members.method = Some(map.next_value()?),
                Key::Id => members.id = Some(map.next_value()?),
                Key::Params => members.params = Some(map.next_value()?),
                Key::Result => members.result = Some(map.next_value()?),
                Key::Error => members.error = Some(map.next_value()?),
                Key::Other => {
                    map.next_value::<Value>()?;
                }
            }
        }
        Ok(Classified(decide(members)))
    }
}

/// Whether `jsonrpc` is `"2.0"`, read without allocating. An array or object there fails
/// the fast path, and the slow path decides.
struct IsVersion(bool);

impl<'de> Deserialize<'de> for IsVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IsVersion;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or a scalar")
            }

            fn visit_str<E>(self, v: &str) -> Result<IsVersion, E> {
                Ok(IsVersion(v == "2.0"))
            }

            fn visit_bool<E>(self, _: bool) -> Result<IsVersion, E> {
                Ok(IsVersion(false))
            }

            fn visit_i64<E>(self, _: i64) -> Result<IsVersion, E> {
                Ok(IsVersion(false))
            }

            fn visit_u64<E>(self, _: u64) -> Result<IsVersion, E> {
                Ok(IsVersion(false))
            }

            fn visit_f64<E>(self, _: f64) -> Result<IsVersion, E> {
                Ok(IsVersion(false))
            }

            fn visit_unit<E>(self) -> Result<IsVersion, E> {
                Ok(IsVersion(false))
            }
        }
        d.deserialize_any(V)
    }
}

fn classify_slowly(frame: &[u8]) -> Envelope {
    let value: Value = match serde_json::from_slice(frame) {
        Ok(v) => v,
        Err(e) => {
            return Envelope::Reply {
                id: Value::Null,
                error: RpcError::parse_error(e),
            };
        }
    };
    let Value::Object(mut map) = value else {
        let why = if value.is_array() {
            "batches are not supported; send one JSON object per line"
        } else {
            "a frame must be a JSON object"
        };
        return Envelope::Reply {
            id: Value::Null,
            error: RpcError::invalid_request(why),
        };
    };
    decide(Members {
        version_ok: map.get("jsonrpc").is_some_and(|v| v == "2.0"),
        method: map.remove("method"),
        id: map.remove("id"),
        params: map.remove("params"),
        result: map.remove("result"),
        error: map.remove("error"),
    })
}

fn decide(members: Members) -> Envelope {
    let has_method = members.method.is_some();
    let has_result = members.result.is_some();
    let has_error = members.error.is_some();
    match (has_method, has_result || has_error) {
        (true, false) => request_shaped(members),
        (false, true) => response_shaped(members),
        (true, true) => Envelope::Reply {
            id: Value::Null,
            error: RpcError::invalid_request(
                "a frame cannot carry both `method` and `result`/`error`",
            ),
        },
        (false, false) => Envelope::Reply {
            id: Value::Null,
            error: RpcError::invalid_request(
                "a frame needs `method` (request) or `result`/`error` (response)",
            ),
        },
    }
}

fn valid_id(id: &Value) -> bool {
    matches!(id, Value::String(_) | Value::Number(_) | Value::Null)
}

fn request_shaped(members: Members) -> Envelope {
    let Members {
        version_ok,
        method,
        id,
        params,
        ..
    } = members;
    let problem = if !version_ok {
        Some("`jsonrpc` must be \"2.0\"")
    } else if !method.as_ref().is_some_and(Value::is_string) {
        Some("`method` must be a string")
    } else if !matches!(params, None | Some(Value::Object(_) | Value::Array(_))) {
        Some("`params` must be an object or an array")
    } else if id.as_ref().is_some_and(|id| !valid_id(id)) {
        Some("`id` must be a string, a number or null")
    } else {
        None
    };
    if let Some(why) = problem {
        return match id {
            None => Envelope::Drop {
                reason: "invalid notification",
            },
            Some(id) => Envelope::Reply {
                id: if valid_id(&id) { id } else { Value::Null },
                error: RpcError::invalid_request(why),
            },
        };
    }
    let Some(Value::String(method)) = method else {
        // Checked above; unreachable, but never panic on input.
        return Envelope::Drop {
            reason: "invalid method",
        };
    };
    match id {
        Some(id) => Envelope::Request { id, method, params },
        None => Envelope::Notification { method, params },
    }
}

fn response_shaped(members: Members) -> Envelope {
    let drop = |reason| Envelope::Drop { reason };
    let Members {
        version_ok,
        id,
        result,
        error,
        ..
    } = members;
    if result.is_some() && error.is_some() {
        return drop("malformed response: both `result` and `error`");
    }
    if !version_ok {
        return drop("malformed response: `jsonrpc` is not \"2.0\"");
    }
    let id = match id {
        Some(id) if valid_id(&id) => id,
        Some(_) => return drop("malformed response: bad `id` type"),
        None => return drop("malformed response: no `id`"),
    };
    let outcome = match (result, error.map(parse_error_object)) {
        (Some(result), _) => Ok(result),
        (None, Some(Some(error))) => Err(error),
        (None, _) => return drop("malformed response: `error` is not {code, message, data?}"),
    };
    Envelope::Response { id, outcome }
}

fn parse_error_object(error: Value) -> Option<RpcError> {
    let Value::Object(mut obj) = error else {
        return None;
    };
    let code = obj.get("code")?.as_i64()?;
    let Some(Value::String(message)) = obj.remove("message") else {
        return None;
    };
    Some(RpcError {
        code,
        message,
        data: obj.remove("data"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::codes;
    use serde_json::json;

    fn reply(frame: &str) -> (i64, Value) {
        reply_bytes(frame.as_bytes())
    }

    fn reply_bytes(frame: &[u8]) -> (i64, Value) {
        match classify(frame) {
            Envelope::Reply { id, error } => (error.code, id),
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    fn dropped(frame: &str) -> bool {
        matches!(classify(frame.as_bytes()), Envelope::Drop { .. })
    }

    #[test]
    fn members_are_read_like_a_value_object() {
        // The last of a repeated member wins, an escaped key is its unescaped name.
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","method":"a","m\u0065thod":"b","id":1,"id":2}"#),
            Envelope::Request {
                id: json!(2),
                method: "b".into(),
                params: None
            }
        );
        // Unknown members are checked as strictly as known ones.
        assert_eq!(
            reply_bytes(b"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"x\":\"\xff\",\"id\":1}").0,
            codes::PARSE_ERROR
        );
        assert_eq!(
            reply(r#"{"jsonrpc":"2.0","method":"m","x":"\ud800","id":1}"#).0,
            codes::PARSE_ERROR
        );
    }

    proptest::proptest! {
        /// The fast path and the `Value` path classify any object made of envelope-ish
        /// members alike: repeated keys, escapes, bad bytes, nulls.
        #[test]
        fn fast_and_slow_paths_agree(members in proptest::collection::vec((0..9usize, 0..15usize), 0..8)) {
            const KEYS: [&[u8]; 9] = [
                b"jsonrpc", b"method", b"id", b"params", b"result", b"error", b"x",
                b"m\\u0065thod", b"i\\u0064",
            ];
            const VALUES: [&[u8]; 15] = [
                b"\"2.0\"", b"null", b"1", b"\"s\"", b"{}", b"[1]", b"1.5", b"true",
                b"{\"code\":1,\"message\":\"m\"}", b"\"\\ud800\"", b"\"\xff\"",
                b"\"2\\u002e0\"", b"{\"a\":[{}]}", b"-0", b"\"\\n\"",
            ];
            let mut frame = b"{".to_vec();
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    frame.push(b',');
                }
                frame.push(b'"');
                frame.extend_from_slice(KEYS[*k]);
                frame.extend_from_slice(b"\":");
                frame.extend_from_slice(VALUES[*v]);
            }
            frame.push(b'}');
            proptest::prop_assert_eq!(classify(&frame), classify_slowly(&frame));
        }
    }

    #[test]
    fn not_json_is_a_parse_error_with_null_id() {
        assert_eq!(reply("{nope"), (codes::PARSE_ERROR, Value::Null));
        assert_eq!(
            reply_bytes(b"{\"a\":\"\xff\"}"),
            (codes::PARSE_ERROR, Value::Null)
        );
        assert_eq!(reply_bytes(b"\xfe\xff"), (codes::PARSE_ERROR, Value::Null));
        assert_eq!(reply("{\"a\":\"\u{0}\"").0, codes::PARSE_ERROR);
    }

    #[test]
    fn deep_nesting_is_a_parse_error() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert_eq!(reply(&deep), (codes::PARSE_ERROR, Value::Null));
    }

    #[test]
    fn non_objects_are_invalid_requests_with_null_id() {
        for frame in [
            "[]",
            "[{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"id\":1}]",
            "1",
            "\"s\"",
            "null",
        ] {
            assert_eq!(
                reply(frame),
                (codes::INVALID_REQUEST, Value::Null),
                "{frame}"
            );
        }
    }

    #[test]
    fn valid_requests_and_notifications() {
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","method":"m","params":[1],"id":"a"}"#),
            Envelope::Request {
                id: json!("a"),
                method: "m".into(),
                params: Some(json!([1]))
            }
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","method":"m","id":null}"#),
            Envelope::Request {
                id: Value::Null,
                method: "m".into(),
                params: None
            }
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","method":"m"}"#),
            Envelope::Notification {
                method: "m".into(),
                params: None
            }
        );
    }

    #[test]
    fn invalid_requests_echo_a_valid_id_only() {
        let cases = [
            (r#"{"jsonrpc":"1.0","method":"m","id":7}"#, json!(7)),
            (r#"{"method":"m","id":7}"#, json!(7)),
            (r#"{"jsonrpc":"2.0","method":5,"id":"x"}"#, json!("x")),
            (
                r#"{"jsonrpc":"2.0","method":"m","params":3,"id":1.5}"#,
                json!(1.5),
            ),
            (
                r#"{"jsonrpc":"2.0","method":"m","params":"s","id":null}"#,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"2.0","method":"m","id":{"a":1}}"#,
                Value::Null,
            ),
            (r#"{"jsonrpc":"2.0","method":"m","id":[1]}"#, Value::Null),
            (r#"{"jsonrpc":"2.0","method":"m","id":true}"#, Value::Null),
            (r#"{"jsonrpc":"1.0","method":"m","id":true}"#, Value::Null),
        ];
        for (frame, id) in cases {
            assert_eq!(reply(frame), (codes::INVALID_REQUEST, id), "{frame}");
        }
    }

    #[test]
    fn invalid_notifications_are_dropped() {
        assert!(dropped(r#"{"jsonrpc":"1.0","method":"m"}"#));
        assert!(dropped(r#"{"jsonrpc":"2.0","method":1}"#));
        assert!(dropped(r#"{"jsonrpc":"2.0","method":"m","params":1}"#));
    }

    #[test]
    fn valid_responses() {
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","result":null,"id":"zc-out-0"}"#),
            Envelope::Response {
                id: json!("zc-out-0"),
                outcome: Ok(Value::Null)
            }
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","error":{"code":-1,"message":"m","data":[1]},"id":3}"#),
            Envelope::Response {
                id: json!(3),
                outcome: Err(RpcError::new(-1, "m").with_data(json!([1])))
            }
        );
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","result":1,"id":null}"#),
            Envelope::Response { .. }
        ));
    }

    #[test]
    fn malformed_responses_are_dropped_never_answered() {
        for frame in [
            r#"{"jsonrpc":"2.0","result":1}"#,
            r#"{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"m"},"id":1}"#,
            r#"{"jsonrpc":"2.0","error":{"code":1.5,"message":"m"},"id":1}"#,
            r#"{"jsonrpc":"2.0","error":{"code":1},"id":1}"#,
            r#"{"jsonrpc":"2.0","error":{"message":"m"},"id":1}"#,
            r#"{"jsonrpc":"2.0","error":"boom","id":1}"#,
            r#"{"jsonrpc":"2.0","error":{"code":1,"message":2},"id":1}"#,
            r#"{"result":1,"id":1}"#,
            r#"{"jsonrpc":"2.1","result":1,"id":1}"#,
            r#"{"jsonrpc":"2.0","result":1,"id":[1]}"#,
            r#"{"jsonrpc":"2.0","result":1,"id":{}}"#,
        ] {
            assert!(dropped(frame), "{frame}");
        }
    }

    #[test]
    fn neither_or_both_shapes_are_invalid_with_null_id() {
        for frame in [
            r#"{"jsonrpc":"2.0","id":3}"#,
            r#"{}"#,
            r#"{"jsonrpc":"2.0","method":"m","result":1,"id":3}"#,
            r#"{"jsonrpc":"2.0","method":"m","error":{"code":1,"message":"m"},"id":3}"#,
        ] {
            assert_eq!(
                reply(frame),
                (codes::INVALID_REQUEST, Value::Null),
                "{frame}"
            );
        }
    }
}

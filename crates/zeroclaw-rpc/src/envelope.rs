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

use crate::message::{Id, NumberText, RpcError};
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// One classified inbound frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Envelope {
    Request {
        id: Id,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    Response {
        id: Id,
        outcome: Result<Value, RpcError>,
    },
    /// Answer with this error and id, nothing else.
    Reply { id: Id, error: RpcError },
    /// Log the reason (never the contents) and drop the frame.
    Drop { reason: &'static str },
}

pub fn classify(frame: &[u8]) -> Envelope {
    // The members are read straight from the bytes into six slots (no map of every key),
    // the id as its raw text so a number is echoed exactly. Anything this cannot read is
    // not JSON or not an object (it reads every object a `Value` can hold: a property test
    // holds it to that), and is parsed as a `Value` to find the exact error.
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
    id: Option<IdSlot>,
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
                Key::Id => members.id = Some(read_id(map.next_value::<&RawValue>()?)?),
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

            // An array or object is read in full like any other member, so that every
            // object reaches the rules here.
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<IsVersion, A::Error> {
                while seq.next_element::<Value>()?.is_some() {}
                Ok(IsVersion(false))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<IsVersion, A::Error> {
                while map.next_entry::<String, Value>()?.is_some() {}
                Ok(IsVersion(false))
            }
        }
        d.deserialize_any(V)
    }
}

/// A member `id`: a valid id, or something else (the frame then gets `-32600`, id null).
enum IdSlot {
    Valid(Id),
    Invalid,
}

/// Reads `id` from its raw text, held to what parsing the frame as a `Value` accepts (so a
/// frame gets the same answer either way): a string's escapes, a number's range (`1e400`
/// is a parse error), the nesting limit inside an array or object.
fn read_id<E: serde::de::Error>(raw: &RawValue) -> Result<IdSlot, E> {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'"') => serde_json::from_str(text)
            .map(|s| IdSlot::Valid(Id::String(s)))
            .map_err(E::custom),
        Some(b'n') => Ok(IdSlot::Valid(Id::Null)),
        Some(b'-' | b'0'..=b'9') => match serde_json::from_str::<f64>(text) {
            Ok(_) => Ok(IdSlot::Valid(Id::Number(NumberText::new(text)))),
            Err(e) => Err(E::custom(e)),
        },
        Some(b'[' | b'{') => {
            // `RawValue` skips a nested value without the parser's depth limit; read inside
            // one array it sits as deep as it did inside the frame's object.
            let nested = format!("[{text}]");
            match serde_json::from_str::<Value>(&nested) {
                Ok(_) => Ok(IdSlot::Invalid),
                Err(e) => Err(E::custom(e)),
            }
        }
        _ => Ok(IdSlot::Invalid),
    }
}

fn classify_slowly(frame: &[u8]) -> Envelope {
    let why = match serde_json::from_slice::<Value>(frame) {
        Err(e) => {
            return Envelope::Reply {
                id: Id::Null,
                error: RpcError::parse_error(e),
            };
        }
        Ok(Value::Array(_)) => "batches are not supported; send one JSON object per line",
        // Not reached: every object is read by `classify` (see its property test).
        Ok(Value::Object(_)) => "the frame's members could not be read",
        Ok(_) => "a frame must be a JSON object",
    };
    Envelope::Reply {
        id: Id::Null,
        error: RpcError::invalid_request(why),
    }
}

fn decide(members: Members) -> Envelope {
    let has_method = members.method.is_some();
    let has_result = members.result.is_some();
    let has_error = members.error.is_some();
    match (has_method, has_result || has_error) {
        (true, false) => request_shaped(members),
        (false, true) => response_shaped(members),
        (true, true) => Envelope::Reply {
            id: Id::Null,
            error: RpcError::invalid_request(
                "a frame cannot carry both `method` and `result`/`error`",
            ),
        },
        (false, false) => Envelope::Reply {
            id: Id::Null,
            error: RpcError::invalid_request(
                "a frame needs `method` (request) or `result`/`error` (response)",
            ),
        },
    }
}

fn request_shaped(members: Members) -> Envelope {
    let Members {
        version_ok,
        method,
        id,
        params,
        ..
    } = members;
    // An invalid id is answered as null.
    let (id, id_ok) = match id {
        None => (None, true),
        Some(IdSlot::Valid(id)) => (Some(id), true),
        Some(IdSlot::Invalid) => (Some(Id::Null), false),
    };
    let problem = if !version_ok {
        Some("`jsonrpc` must be \"2.0\"")
    } else if !method.as_ref().is_some_and(Value::is_string) {
        Some("`method` must be a string")
    } else if !matches!(params, None | Some(Value::Object(_) | Value::Array(_))) {
        Some("`params` must be an object or an array")
    } else if !id_ok {
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
                id,
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
        Some(IdSlot::Valid(id)) => id,
        Some(IdSlot::Invalid) => return drop("malformed response: bad `id` type"),
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
    use crate::message::{codes, encode_request, encode_response};
    use serde_json::json;

    fn reply(frame: &str) -> (i64, Value) {
        reply_bytes(frame.as_bytes())
    }

    fn reply_bytes(frame: &[u8]) -> (i64, Value) {
        match classify(frame) {
            Envelope::Reply { id, error } => (error.code, id.to_value()),
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
                id: Id::from(2),
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
        /// `classify` reads every object a `Value` can hold and no other (so the slow path
        /// only ever explains why a frame is not an object), with repeated keys, escapes, bad
        /// bytes, nulls, numbers out of range and ids nested up to the parser's depth limit.
        #[test]
        fn every_object_a_value_holds_is_read(members in proptest::collection::vec((0..9usize, 0..19usize), 0..8)) {
            const KEYS: [&[u8]; 9] = [
                b"jsonrpc", b"method", b"id", b"params", b"result", b"error", b"x",
                b"m\\u0065thod", b"i\\u0064",
            ];
            let deep = |n: usize| ["[".repeat(n), "]".repeat(n)].concat().into_bytes();
            let values: [Vec<u8>; 19] = [
                b"\"2.0\"".to_vec(), b"null".to_vec(), b"1".to_vec(), b"\"s\"".to_vec(),
                b"{}".to_vec(), b"[1]".to_vec(), b"1.5".to_vec(), b"true".to_vec(),
                b"{\"code\":1,\"message\":\"m\"}".to_vec(), b"\"\\ud800\"".to_vec(),
                b"\"\xff\"".to_vec(), b"\"2\\u002e0\"".to_vec(), b"{\"a\":[{}]}".to_vec(),
                b"-0".to_vec(), b"\"\\n\"".to_vec(), b"1e400".to_vec(), deep(126), deep(127),
                b"[\"\\ud800\"]".to_vec(),
            ];
            let mut frame = b"{".to_vec();
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    frame.push(b',');
                }
                frame.push(b'"');
                frame.extend_from_slice(KEYS[*k]);
                frame.extend_from_slice(b"\":");
                frame.extend_from_slice(&values[*v]);
            }
            frame.push(b'}');
            let as_value = serde_json::from_slice::<Value>(&frame).is_ok();
            let read = serde_json::from_slice::<Classified>(&frame).is_ok();
            proptest::prop_assert_eq!(read, as_value, "{}", String::from_utf8_lossy(&frame));
        }
    }

    #[test]
    fn numeric_ids_keep_their_exact_text() {
        for text in [
            "18446744073709551617",
            "-9223372036854775809",
            "1.2345e29",
            "-0",
            "1e2",
            "1E+02",
            "0.10",
            "123456789012345678901234567890",
        ] {
            let frame = format!(r#"{{"jsonrpc":"2.0","method":"m","id":{text}}}"#);
            let Envelope::Request { id, .. } = classify(frame.as_bytes()) else {
                panic!("{frame} is a request");
            };
            let answer = encode_response(&id, &Ok(Value::Null.into()));
            let want = format!(r#"{{"jsonrpc":"2.0","result":null,"id":{text}}}"#);
            assert_eq!(String::from_utf8_lossy(&answer), want);
            let echoed = encode_request("m", None, Some(&id));
            assert!(String::from_utf8_lossy(&echoed).ends_with(&format!(r#""id":{text}}}"#)));
        }
        // An invalid request's id is echoed exactly too.
        let Envelope::Reply { id, .. } = classify(br#"{"jsonrpc":"1.0","method":"m","id":1e2}"#)
        else {
            panic!("an invalid request gets a reply");
        };
        assert_eq!(id, Id::Number(NumberText::new("1e2")));
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
                id: Id::from("a"),
                method: "m".into(),
                params: Some(json!([1]))
            }
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","method":"m","id":null}"#),
            Envelope::Request {
                id: Id::Null,
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
                id: Id::from("zc-out-0"),
                outcome: Ok(Value::Null)
            }
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","error":{"code":-1,"message":"m","data":[1]},"id":3}"#),
            Envelope::Response {
                id: Id::from(3),
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

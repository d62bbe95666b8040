//! Wire types: plain data, serialised exactly as JSON-RPC 2.0 frames.

use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;

/// JSON-RPC's error codes, and the one this crate's peer answers by itself. They are
/// written once, in `zeroclaw-protocol` beside zeroclaw's own codes.
pub mod codes {
    /// The peer's answer to a request over its limit of requests in flight (zeroclaw's
    /// `LIMIT_REACHED`).
    pub use zeroclaw_protocol::codes::LIMIT_REACHED as OVERLOADED;
    pub use zeroclaw_protocol::codes::{
        INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR,
    };
}

/// A request's id as the other side sent it. JSON-RPC wants it echoed as sent, so a number
/// keeps its exact text: read into an `f64`, `18446744073709551617` would come back as
/// `1.8446744073709552e19` and `1e2` as `100.0`. A string is kept decoded (its escapes are
/// not part of its value), which is also how the peer matches answers to its own requests.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Id {
    Null,
    String(String),
    Number(NumberText),
}

impl Id {
    /// The id as a `Value`; a number `f64` cannot hold exactly is rounded (for logs and
    /// tests, never for the answer).
    pub fn to_value(&self) -> Value {
        match self {
            Id::Null => Value::Null,
            Id::String(s) => Value::String(s.clone()),
            Id::Number(n) => serde_json::from_str(n.as_str()).unwrap_or(Value::Null),
        }
    }

    /// Appends the id's JSON text to `out`, a number byte for byte as it arrived.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Id::Null => out.extend_from_slice(b"null"),
            // Serialising a `str` into a `Vec` cannot fail.
            Id::String(s) => {
                let _ = serde_json::to_writer(&mut *out, s);
            }
            Id::Number(n) => out.extend_from_slice(n.as_str().as_bytes()),
        }
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id::String(s.to_owned())
    }
}

impl From<String> for Id {
    fn from(s: String) -> Self {
        Id::String(s)
    }
}

impl From<u64> for Id {
    fn from(n: u64) -> Self {
        Id::Number(NumberText::new(&n.to_string()))
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Id::Null => s.serialize_unit(),
            Id::String(text) => s.serialize_str(text),
            // A borrowed `RawValue` writes the text unchanged (serde_json serialisers only,
            // which is what frames are written with).
            Id::Number(n) => serde_json::from_str::<&RawValue>(n.as_str())
                .map_err(serde::ser::Error::custom)?
                .serialize(s),
        }
    }
}

/// The exact text of a JSON number. Ids are short, so most fit inline: reading a numeric id
/// allocates nothing, which keeps the pipelined path as cheap as a `Value` number was.
#[derive(Clone)]
pub struct NumberText(NumberRepr);

const INLINE_NUMBER: usize = 22;

#[derive(Clone)]
enum NumberRepr {
    Inline { len: u8, bytes: [u8; INLINE_NUMBER] },
    Heap(Box<str>),
}

impl NumberText {
    /// Wraps text the caller has checked is one JSON number token.
    pub(crate) fn new(text: &str) -> Self {
        let mut bytes = [0u8; INLINE_NUMBER];
        match bytes.get_mut(..text.len()) {
            Some(head) => {
                head.copy_from_slice(text.as_bytes());
                // `text.len() <= INLINE_NUMBER`, which fits a `u8`.
                Self(NumberRepr::Inline {
                    len: text.len() as u8,
                    bytes,
                })
            }
            None => Self(NumberRepr::Heap(text.into())),
        }
    }

    pub fn as_str(&self) -> &str {
        match &self.0 {
            // The bytes were copied from a `str` whole, so they are UTF-8.
            NumberRepr::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or("0")
            }
            NumberRepr::Heap(text) => text,
        }
    }
}

impl PartialEq for NumberText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for NumberText {}

impl std::hash::Hash for NumberText {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_str().hash(h);
    }
}

impl fmt::Debug for NumberText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
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

    /// An answer that would not fit in one frame: the writer sends this instead, so the
    /// caller is answered rather than left to a reader that drops the line.
    pub fn answer_too_large(size: usize, limit: usize) -> Self {
        Self::internal(format!(
            "the answer is {size} bytes, over the frame cap of {limit} bytes, and was not sent; ask for less (a smaller page)"
        ))
        .with_data(serde_json::json!({ "limit": limit, "size": size }))
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

/// A successful result, already serialised. A handler on a hot path builds it straight from
/// a struct of borrowed fields (or from text prepared once), which skips a `Value` tree (an
/// allocation, a map insert and a hash per member) that would only be serialised again.
#[derive(Debug, Clone)]
pub struct Answer(String);

impl Answer {
    pub fn new<T: Serialize + ?Sized>(value: &T) -> Result<Self, RpcError> {
        serde_json::to_string(value)
            .map(Self)
            .map_err(RpcError::internal)
    }

    /// Wraps text that is already one compact JSON value, as serde_json writes it (so no
    /// raw newline). Not checked in release builds: it is for text this process built.
    pub fn from_serialized(json: String) -> Self {
        debug_assert!(serde_json::from_str::<serde::de::IgnoredAny>(&json).is_ok());
        debug_assert!(!json.contains('\n'));
        Self(json)
    }

    /// The result as compact JSON text.
    pub fn json(&self) -> &str {
        &self.0
    }

    /// The result as compact JSON text, without a copy (a REST body).
    pub fn into_json(self) -> String {
        self.0
    }

    pub fn to_value(&self) -> Value {
        // The text came from serde_json, so it parses.
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }
}

impl From<Value> for Answer {
    fn from(value: Value) -> Self {
        // Serialising a `Value` cannot fail: its map keys are strings.
        Self::new(&value).unwrap_or_else(|_| Self("null".to_owned()))
    }
}

impl PartialEq for Answer {
    fn eq(&self, other: &Self) -> bool {
        self.to_value() == other.to_value()
    }
}

/// A notification serialised once, to be queued on many connections (a session's event to
/// every attached client) without serialising it again for each.
#[derive(Debug, Clone)]
pub struct Notification(pub(crate) bytes::Bytes);

impl Notification {
    pub fn new<T: Serialize + ?Sized>(method: &str, params: &T) -> serde_json::Result<Self> {
        #[derive(Serialize)]
        struct Frame<'a, T: ?Sized> {
            jsonrpc: &'static str,
            method: &'a str,
            params: &'a T,
        }
        // Most events are a few hundred bytes: starting there saves the reallocations of
        // growing from empty, on the path every streamed chunk takes.
        let mut line = Vec::with_capacity(FRAME_START_CAPACITY);
        serde_json::to_writer(
            &mut line,
            &Frame {
                jsonrpc: VERSION,
                method,
                params,
            },
        )?;
        Ok(Self(line.into()))
    }

    /// A frame serialised by the caller: one complete JSON-RPC notification object, compact,
    /// without its newline. For hot paths that write a frame's constant part once and
    /// only its variable part per frame (a streamed chunk); their tests check the bytes
    /// against [`Notification::new`]'s.
    pub fn from_serialized(line: Vec<u8>) -> Self {
        debug_assert!(
            serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok(),
            "a frame that is not JSON"
        );
        Self(line.into())
    }

    /// A frame serialised elsewhere and already shared (the agent's session events, each
    /// written once for every attached connection): taken without copying. Like
    /// [`Notification::from_serialized`], one complete, compact JSON-RPC notification
    /// object without its newline.
    pub fn from_bytes(line: bytes::Bytes) -> Self {
        Self(line)
    }

    /// The frame, without its newline.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

const VERSION: &str = "2.0";

/// What [`Notification::new`] reserves before serialising.
const FRAME_START_CAPACITY: usize = 256;

#[derive(Serialize)]
struct RequestFrame<'a> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Id>,
}

#[derive(Serialize)]
struct ErrorFrame<'a> {
    jsonrpc: &'static str,
    error: &'a RpcError,
    id: &'a Id,
}

/// Serialises a request (`id` present) or notification (`id` absent) as one compact line.
pub fn encode_request(method: &str, params: Option<&Value>, id: Option<&Id>) -> Vec<u8> {
    to_line(&RequestFrame {
        jsonrpc: VERSION,
        method,
        params,
        id,
    })
}

/// Serialises a response; `id` is echoed verbatim (`null` when none could be recovered).
pub fn encode_response(id: &Id, outcome: &Result<Answer, RpcError>) -> Vec<u8> {
    let mut line = Vec::new();
    write_response(&mut line, id, outcome);
    line
}

/// [`encode_response`] appending to `out`, so answers can be written straight into a
/// connection's output buffer.
pub fn write_response(out: &mut Vec<u8>, id: &Id, outcome: &Result<Answer, RpcError>) {
    match outcome {
        Ok(result) => {
            // Written by hand: the result is already JSON text.
            const HEAD: &[u8] = br#"{"jsonrpc":"2.0","result":"#;
            const ID: &[u8] = br#","id":"#;
            let result = result.json().as_bytes();
            out.reserve(HEAD.len() + result.len() + ID.len() + 24);
            out.extend_from_slice(HEAD);
            out.extend_from_slice(result);
            out.extend_from_slice(ID);
            id.write_json(out);
            out.push(b'}');
        }
        Err(error) => {
            let frame = ErrorFrame {
                jsonrpc: VERSION,
                error,
                id,
            };
            let start = out.len();
            if serde_json::to_writer(&mut *out, &frame).is_err() {
                // Cannot happen (string keys, infallible impls); never leave half a frame.
                out.truncate(start);
                out.extend_from_slice(UNSERIALISABLE);
            }
        }
    }
}

const UNSERIALISABLE: &[u8] = br#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"internal error: unserialisable frame"},"id":null}"#;

fn to_line(frame: &impl Serialize) -> Vec<u8> {
    // Serialising these types cannot fail: every map key is a string and no type has a
    // fallible Serialize impl. Fall back to a fixed internal error rather than panic.
    serde_json::to_vec(frame).unwrap_or_else(|_| UNSERIALISABLE.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_notification_serialised_once_is_the_frame_encode_request_writes() {
        let params = json!({"sessionId": "s", "text": "a\"b\n"});
        let once = Notification::new("session/update", &params).unwrap();
        assert_eq!(
            once.as_bytes(),
            &encode_request("session/update", Some(&params), None)[..]
        );
    }

    #[test]
    fn frames_are_compact_single_lines() {
        let req = encode_request("status", Some(&json!({})), Some(&Id::from(1)));
        assert_eq!(
            req,
            br#"{"jsonrpc":"2.0","method":"status","params":{},"id":1}"#
        );
        let note = encode_request("session/update", Some(&json!({"text":"a\nb"})), None);
        assert!(!note.contains(&b'\n'));
        let ok = encode_response(&Id::from("zc-out-0"), &Ok(Value::Null.into()));
        assert_eq!(ok, br#"{"jsonrpc":"2.0","result":null,"id":"zc-out-0"}"#);
        let ok = encode_response(&Id::from(7), &Answer::new(&json!({"a":[1, "x\n"]})));
        assert_eq!(ok, br#"{"jsonrpc":"2.0","result":{"a":[1,"x\n"]},"id":7}"#);
        let err = encode_response(&Id::Null, &Err(RpcError::new(-32700, "bad")));
        assert_eq!(
            err,
            br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"bad"},"id":null}"#
        );
    }
}

//! JSON scripts of replies, as read by the `fake-provider` binary (and usable
//! from tests that keep transcripts in files).
//!
//! A script is a JSON array of replies, answered FIFO:
//!
//! ```json
//! [
//!   {"openai": [{"text": "Hello"},
//!               {"tool_call": {"id": "call_1", "name": "bash",
//!                              "arguments": "{\"command\":\"echo hi\"}", "split": 3}},
//!               {"finish": "tool_calls"}]},
//!   {"openai": [{"text": "Done."}, {"finish": "stop"}]},
//!   {"anthropic": [{"thinking": "hmm"}, {"text": "Hi"}, {"stop_reason": "end_turn"}]},
//!   {"status": 429, "headers": {"retry-after": "1"},
//!    "body": {"error": {"message": "slow down", "type": "requests"}}}
//! ]
//! ```
//!
//! or an object `{"replies": [...], "routes": [{"method": "GET", "path":
//! "/v1/models", "reply": {...}}]}` where each route answers every matching
//! request without consuming the queue (see [`crate::FakeProvider::route`]).
//!
//! **A reply** is an object with exactly one of
//!
//! * `"openai": [op, …]` — a stream from [`crate::openai::Builder`];
//! * `"anthropic": [op, …]` — a stream from [`crate::anthropic::Builder`];
//! * `"status": N` with optional `"body": JSON` — a plain JSON reply
//!   ([`crate::Reply::status`]; no body means an empty one);
//!
//! plus optionally `"headers": {"name": "value", …}`, `"status"` (to change a
//! stream's status code), `"fragment": BYTES` ([`crate::Reply::fragmented`])
//! and `"pace_ms": MS` ([`crate::Reply::paced`]).
//!
//! **OpenAI ops** (one key each, applied in order): `{"text": S}`,
//! `{"reasoning": S}` (`reasoning_content`), `{"reasoning_field": S}`
//! (`reasoning`), `{"tool_call": {"index"?: N, "id": S, "name": S,
//! "arguments": S or JSON, "split"?: N}}` (`index` defaults to the count of
//! earlier tool calls, `split` to 1, `0` = arguments in the first delta),
//! `{"usage": {"prompt": N, "completion": N}}`, `{"finish": S or null}`,
//! `{"delta": JSON}`, `{"chunk": JSON}`, `{"raw_line": S}`, `{"raw": S}`,
//! `{"pause_ms": N}`, `{"model": S}`, and the strings `"stall"`, `"reset"`,
//! `"no_done"`.
//!
//! **Anthropic ops**: `{"thinking": S}`, `{"text": S}`, `{"tool_use": {"id":
//! S, "name": S, "arguments": S or JSON, "split"?: N}}`, `{"usage": {"input":
//! N, "output": N}}`, `{"stop_reason": S}`, `{"error": {"type": S, "message":
//! S}}`, `{"raw_line": S}`, `{"raw": S}`, `{"pause_ms": N}`, `{"model": S}`,
//! and the strings `"ping"`, `"end_block"`, `"stall"`, `"reset"`.

use std::fmt;
use std::time::Duration;

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::stream::{Builder, Format};
use crate::{FakeProvider, Reply, anthropic, openai};

/// A parsed script: the FIFO replies and the fixed routes.
#[derive(Clone, Debug, Default)]
pub struct Script {
    /// Replies in answer order.
    pub replies: Vec<Reply>,
    /// `(method, path, reply)` fixed answers.
    pub routes: Vec<(String, String, Reply)>,
}

/// Why a script could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptError(pub String);

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fake-provider script: {}", self.0)
    }
}

impl std::error::Error for ScriptError {}

impl Script {
    /// Parses a script (see the module docs for the format).
    pub fn parse(text: &str) -> Result<Script, ScriptError> {
        let doc: Value =
            serde_json::from_str(text).map_err(|e| ScriptError(format!("not JSON: {e}")))?;
        Script::from_value(doc)
    }

    /// Builds a script from an already parsed JSON document.
    pub fn from_value(doc: Value) -> Result<Script, ScriptError> {
        match doc {
            Value::Array(items) => Ok(Script {
                replies: parse_replies(items)?,
                routes: Vec::new(),
            }),
            Value::Object(mut obj) => {
                let replies = match obj.remove("replies") {
                    Some(Value::Array(items)) => parse_replies(items)?,
                    None => Vec::new(),
                    Some(_) => return Err(ScriptError("\"replies\" must be an array".into())),
                };
                let routes = match obj.remove("routes") {
                    Some(v) => {
                        let specs: Vec<RouteSpec> = serde_json::from_value(v)
                            .map_err(|e| ScriptError(format!("routes: {e}")))?;
                        specs
                            .into_iter()
                            .enumerate()
                            .map(|(i, r)| {
                                let reply = reply_from_value(r.reply)
                                    .map_err(|e| ScriptError(format!("route {i}: {}", e.0)))?;
                                Ok((r.method, r.path, reply))
                            })
                            .collect::<Result<_, ScriptError>>()?
                    }
                    None => Vec::new(),
                };
                if let Some(key) = obj.keys().next() {
                    return Err(ScriptError(format!("unknown top-level key {key:?}")));
                }
                Ok(Script { replies, routes })
            }
            _ => Err(ScriptError(
                "expected an array of replies or {\"replies\": [...], \"routes\": [...]}".into(),
            )),
        }
    }

    /// Installs the routes and queues the replies on `provider`.
    pub fn apply(self, provider: &FakeProvider) {
        for (method, path, reply) in self.routes {
            provider.route(&method, &path, reply);
        }
        provider.push_all(self.replies);
    }
}

/// Parses one reply object (see the module docs).
pub fn reply_from_value(value: Value) -> Result<Reply, ScriptError> {
    let spec: ReplySpec = serde_json::from_value(value).map_err(|e| ScriptError(e.to_string()))?;
    spec.into_reply()
}

fn parse_replies(items: Vec<Value>) -> Result<Vec<Reply>, ScriptError> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| reply_from_value(v).map_err(|e| ScriptError(format!("reply {i}: {}", e.0))))
        .collect()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteSpec {
    method: String,
    path: String,
    reply: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplySpec {
    openai: Option<Vec<Op<OpenAiOp>>>,
    anthropic: Option<Vec<Op<AnthropicOp>>>,
    status: Option<u16>,
    body: Option<Value>,
    headers: Option<Map<String, Value>>,
    fragment: Option<usize>,
    pace_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum OpenAiOp {
    Text(String),
    Reasoning(String),
    ReasoningField(String),
    ToolCall(ToolSpec),
    Usage { prompt: u64, completion: u64 },
    Finish(Option<String>),
    Delta(Value),
    Chunk(Value),
    NoDone,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum AnthropicOp {
    Thinking(String),
    Text(String),
    ToolUse(ToolSpec),
    Usage {
        input: u64,
        output: u64,
    },
    StopReason(String),
    Error {
        #[serde(rename = "type")]
        kind: String,
        message: String,
    },
    Ping,
    EndBlock,
}

/// The ops every stream has, whatever its format.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum CommonOp {
    RawLine(String),
    Raw(String),
    PauseMs(u64),
    Model(String),
    Stall,
    Reset,
}

/// An op of a script's stream: one of its format's own (`O`), or one every stream has.
enum Op<O> {
    Own(O),
    Common(CommonOp),
}

impl<'de, O: DeserializeOwned> Deserialize<'de> for Op<O> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let own = match O::deserialize(&value) {
            Ok(op) => return Ok(Op::Own(op)),
            Err(e) => e,
        };
        CommonOp::deserialize(&value)
            .map(Op::Common)
            .map_err(|common| {
                // The error of the enum that knows the op's name; a name neither knows gets both
                // lists of names.
                let unknown = |e: &serde_json::Error| e.to_string().starts_with("unknown variant");
                match (unknown(&own), unknown(&common)) {
                    (false, _) => D::Error::custom(own),
                    (true, false) => D::Error::custom(common),
                    (true, true) => D::Error::custom(format!(
                        "{own}; nor is it an op every stream has: {common}"
                    )),
                }
            })
    }
}

impl CommonOp {
    fn apply<F: Format>(self, b: Builder<F>) -> Builder<F> {
        match self {
            CommonOp::RawLine(s) => b.raw_line(&s),
            CommonOp::Raw(s) => b.raw(s),
            CommonOp::PauseMs(ms) => b.pause(Duration::from_millis(ms)),
            CommonOp::Model(m) => b.model(&m),
            CommonOp::Stall => b.stall(),
            CommonOp::Reset => b.reset(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolSpec {
    index: Option<usize>,
    id: String,
    name: String,
    arguments: Value,
    split: Option<usize>,
}

impl ToolSpec {
    fn arguments(&self) -> String {
        match &self.arguments {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

impl ReplySpec {
    fn into_reply(self) -> Result<Reply, ScriptError> {
        let streams = usize::from(self.openai.is_some()) + usize::from(self.anthropic.is_some());
        if streams > 1 {
            return Err(ScriptError(
                "a reply has either \"openai\" or \"anthropic\", not both".into(),
            ));
        }
        if streams == 1 && self.body.is_some() {
            return Err(ScriptError(
                "\"body\" is for status replies; a stream has \"openai\"/\"anthropic\" ops".into(),
            ));
        }
        let mut reply = if let Some(ops) = self.openai {
            let mut reply = build_openai(ops);
            if let Some(status) = self.status {
                reply.status = status;
            }
            reply
        } else if let Some(ops) = self.anthropic {
            let mut reply = build_anthropic(ops);
            if let Some(status) = self.status {
                reply.status = status;
            }
            reply
        } else if let Some(status) = self.status {
            match self.body {
                Some(body) => Reply::status(status, body),
                None => Reply::new(status)
                    .with_header("content-type", "application/json")
                    .with_header("content-length", "0"),
            }
        } else {
            return Err(ScriptError(
                "a reply needs \"openai\", \"anthropic\" or \"status\"".into(),
            ));
        };
        for (name, value) in self.headers.unwrap_or_default() {
            let value = match value {
                Value::String(s) => s,
                other => other.to_string(),
            };
            reply = reply.with_header(&name, &value);
        }
        if let Some(bytes) = self.fragment {
            reply = reply.fragmented(bytes);
        }
        if let Some(ms) = self.pace_ms {
            reply = reply.paced(Duration::from_millis(ms));
        }
        Ok(reply)
    }
}

/// The stream of `ops`, each of the format's own added by `own`.
fn build<F: Format, O>(ops: Vec<Op<O>>, mut own: impl FnMut(Builder<F>, O) -> Builder<F>) -> Reply {
    let mut b = Builder::new();
    for op in ops {
        b = match op {
            Op::Own(op) => own(b, op),
            Op::Common(op) => op.apply(b),
        };
    }
    b.build()
}

fn build_openai(ops: Vec<Op<OpenAiOp>>) -> Reply {
    let mut tool_calls = 0;
    build(ops, |b: openai::Builder, op| match op {
        OpenAiOp::Text(s) => b.text(&s),
        OpenAiOp::Reasoning(s) => b.reasoning(&s),
        OpenAiOp::ReasoningField(s) => b.reasoning_field(&s),
        OpenAiOp::ToolCall(t) => {
            let index = t.index.unwrap_or(tool_calls);
            tool_calls += 1;
            let args = t.arguments();
            b.tool_call(index, &t.id, &t.name, &args, t.split.unwrap_or(1))
        }
        OpenAiOp::Usage { prompt, completion } => b.usage(prompt, completion),
        OpenAiOp::Finish(reason) => b.finish(reason.as_deref()),
        OpenAiOp::Delta(v) => b.delta(v),
        OpenAiOp::Chunk(v) => b.raw_chunk(v),
        OpenAiOp::NoDone => b.no_done(),
    })
}

fn build_anthropic(ops: Vec<Op<AnthropicOp>>) -> Reply {
    build(ops, |b: anthropic::Builder, op| match op {
        AnthropicOp::Thinking(s) => b.thinking(&s),
        AnthropicOp::Text(s) => b.text(&s),
        AnthropicOp::ToolUse(t) => {
            let args = t.arguments();
            b.tool_use(&t.id, &t.name, &args, t.split.unwrap_or(1))
        }
        AnthropicOp::Usage { input, output } => b.usage(input, output),
        AnthropicOp::StopReason(s) => b.stop_reason(&s),
        AnthropicOp::Error { kind, message } => b.error(&kind, &message),
        AnthropicOp::Ping => b.ping(),
        AnthropicOp::EndBlock => b.end_block(),
    })
}

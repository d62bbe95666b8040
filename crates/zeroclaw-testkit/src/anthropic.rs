//! Streaming replies in the Anthropic Messages API format.
//!
//! A stream is a series of named events, each `event: NAME\ndata: {json}\n\n`:
//!
//! ```text
//! message_start            {"type":"message_start","message":{…,"usage":{"input_tokens":10,"output_tokens":1}}}
//! ping                     {"type":"ping"}
//! content_block_start      {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}
//! content_block_delta      {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}
//! content_block_stop       {"type":"content_block_stop","index":0}
//! message_delta            {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}
//! message_stop             {"type":"message_stop"}
//! ```
//!
//! Thinking blocks carry `thinking_delta`s and end with a `signature_delta`;
//! tool-use blocks carry `input_json_delta` `partial_json` pieces. Mid-stream
//! failures are `error` events. Every event is its own [`Step::Send`].

use std::time::Duration;

use serde_json::{Value, json};

use crate::{Gate, Reply, Step, split_evenly, sse_event};

/// Model name the builder reports unless [`Builder::model`] is used.
pub const DEFAULT_MODEL: &str = "claude-fake";
/// Message id the builder reports unless [`Builder::id`] is used.
pub const DEFAULT_ID: &str = "msg_fake";
/// Input-token count reported unless [`Builder::usage`] is used.
pub const DEFAULT_INPUT_TOKENS: u64 = 10;
/// The signature sent in the `signature_delta` closing a thinking block.
pub const FAKE_SIGNATURE: &str = "ZmFrZS1zaWduYXR1cmU=";

/// A complete text answer: one text block with one `text_delta` per chunk,
/// stop reason `end_turn`.
pub fn text(chunks: &[&str]) -> Reply {
    let mut b = Builder::new();
    for chunk in chunks {
        b = b.text(chunk);
    }
    b.build()
}

/// A `200` event stream consisting of a single `error` event
/// (`{"type":"error","error":{"type":KIND,"message":MESSAGE}}`), e.g.
/// `error("overloaded_error", "Overloaded")`. For an error in the middle of a
/// message use [`Builder::error`]; for an HTTP-level error use
/// [`error_status`].
pub fn error(kind: &str, message: &str) -> Reply {
    Reply::sse(vec![Step::Send(error_event(kind, message))])
}

/// An HTTP error reply with Anthropic's error body, e.g.
/// `error_status(529, "overloaded_error", "Overloaded")` or
/// `error_status(401, "authentication_error", "invalid x-api-key")`.
pub fn error_status(status: u16, kind: &str, message: &str) -> Reply {
    Reply::status(status, error_body(kind, message))
}

/// Anthropic's error object: `{"type":"error","error":{"type":…,"message":…}}`.
pub fn error_body(kind: &str, message: &str) -> Value {
    json!({ "type": "error", "error": { "type": kind, "message": message } })
}

/// The framed `error` event.
pub fn error_event(kind: &str, message: &str) -> Vec<u8> {
    event("error", &error_body(kind, message))
}

/// Frames one named event: `event: NAME\ndata: {json}\n\n`.
pub fn event(name: &str, data: &Value) -> Vec<u8> {
    sse_event(Some(name), &data.to_string())
}

#[derive(Clone, Debug)]
enum Op {
    Thinking(String),
    Text(String),
    ToolUse {
        id: String,
        name: String,
        pieces: Vec<String>,
    },
    EndBlock,
    Error {
        kind: String,
        message: String,
    },
    Step(Step),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Thinking,
    Text,
    ToolUse,
}

/// Builds an Anthropic-style streaming [`Reply`], in call order.
///
/// The stream starts with `message_start` and a `ping`. Consecutive
/// [`Builder::text`] calls are deltas of one text block, consecutive
/// [`Builder::thinking`] calls of one thinking block; a change of kind (or
/// [`Builder::end_block`]) closes the open block and the next one gets the
/// next index. Each [`Builder::tool_use`] is its own block. Unless cut by
/// [`Builder::stall`], [`Builder::reset`] or [`Builder::error`], the stream
/// ends by closing the open block, then `message_delta` (stop reason:
/// [`Builder::stop_reason`], else `tool_use` when a tool was used, else
/// `end_turn`) and `message_stop`.
#[derive(Clone, Debug)]
pub struct Builder {
    id: String,
    model: String,
    ops: Vec<Op>,
    usage: Option<(u64, u64)>,
    stop_reason: Option<String>,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// An empty message.
    pub fn new() -> Builder {
        Builder {
            id: DEFAULT_ID.to_owned(),
            model: DEFAULT_MODEL.to_owned(),
            ops: Vec::new(),
            usage: None,
            stop_reason: None,
        }
    }

    /// Sets `message.model` in `message_start`.
    pub fn model(mut self, model: &str) -> Self {
        self.model = model.to_owned();
        self
    }

    /// Sets `message.id` in `message_start`.
    pub fn id(mut self, id: &str) -> Self {
        self.id = id.to_owned();
        self
    }

    /// A `thinking_delta` (in the open thinking block, or a new one).
    pub fn thinking(mut self, text: &str) -> Self {
        self.ops.push(Op::Thinking(text.to_owned()));
        self
    }

    /// A `text_delta` (in the open text block, or a new one).
    pub fn text(mut self, text: &str) -> Self {
        self.ops.push(Op::Text(text.to_owned()));
        self
    }

    /// A `tool_use` block (`content_block_start` with `id`, `name`,
    /// `input: {}`) whose input `args` arrives as `split_into`
    /// `input_json_delta` `partial_json` pieces (see [`split_evenly`]; at
    /// least one piece, so an empty `args` gives one empty piece, as the real
    /// API sends for tools without arguments).
    pub fn tool_use(mut self, id: &str, name: &str, args: &str, split_into: usize) -> Self {
        self.ops.push(Op::ToolUse {
            id: id.to_owned(),
            name: name.to_owned(),
            pieces: split_evenly(args, split_into),
        });
        self
    }

    /// Closes the open block (`content_block_stop`) so the next delta opens a
    /// new block even if it is of the same kind.
    pub fn end_block(mut self) -> Self {
        self.ops.push(Op::EndBlock);
        self
    }

    /// A `ping` event.
    pub fn ping(self) -> Self {
        self.raw(event("ping", &json!({ "type": "ping" })))
    }

    /// Token usage: `input` goes in `message_start`, `output` in
    /// `message_delta`. Default: [`DEFAULT_INPUT_TOKENS`] and the number of
    /// content deltas.
    pub fn usage(mut self, input: u64, output: u64) -> Self {
        self.usage = Some((input, output));
        self
    }

    /// The `stop_reason` in `message_delta` (`"end_turn"`, `"tool_use"`,
    /// `"max_tokens"`, `"stop_sequence"`, `"pause_turn"`, `"refusal"`, …).
    pub fn stop_reason(mut self, reason: &str) -> Self {
        self.stop_reason = Some(reason.to_owned());
        self
    }

    /// An `error` event here, after which the stream ends (cleanly, as the
    /// real API closes it). Nothing after this is sent.
    pub fn error(mut self, kind: &str, message: &str) -> Self {
        self.ops.push(Op::Error {
            kind: kind.to_owned(),
            message: message.to_owned(),
        });
        self
    }

    /// An arbitrary line sent as its own event (`line` + `"\n\n"`), e.g. a
    /// malformed `data: {not json`.
    pub fn raw_line(self, line: &str) -> Self {
        self.raw(format!("{line}\n\n"))
    }

    /// Arbitrary bytes sent exactly as given, as one send.
    pub fn raw(self, bytes: impl Into<Vec<u8>>) -> Self {
        self.step(Step::Send(bytes.into()))
    }

    /// Sleep before the next event.
    pub fn pause(self, pause: Duration) -> Self {
        self.step(Step::Delay(pause))
    }

    /// Wait until the test opens `gate` before the next event.
    pub fn wait_for(self, gate: &Gate) -> Self {
        self.step(Step::WaitFor(gate.clone()))
    }

    /// Stop after what was added so far (the open block stays open) and
    /// hang, keeping the socket open. Nothing after this is sent.
    pub fn stall(self) -> Self {
        self.step(Step::Stall)
    }

    /// Reset the connection after what was added so far. Nothing after this
    /// is sent.
    pub fn reset(self) -> Self {
        self.step(Step::Reset)
    }

    /// Any raw [`Step`].
    pub fn step(mut self, step: Step) -> Self {
        self.ops.push(Op::Step(step));
        self
    }

    /// The finished reply: `200`, `text/event-stream`, one send per event.
    pub fn build(self) -> Reply {
        let deltas: u64 = self
            .ops
            .iter()
            .map(|op| match op {
                Op::Thinking(_) | Op::Text(_) => 1,
                Op::ToolUse { pieces, .. } => pieces.len() as u64,
                _ => 0,
            })
            .sum();
        let (input_tokens, output_tokens) =
            self.usage.unwrap_or((DEFAULT_INPUT_TOKENS, deltas.max(1)));
        let used_tool = self.ops.iter().any(|op| matches!(op, Op::ToolUse { .. }));

        let mut w = Writer {
            steps: Vec::new(),
            open: None,
            next_index: 0,
        };
        w.send(event(
            "message_start",
            &json!({
                "type": "message_start",
                "message": {
                    "id": self.id,
                    "type": "message",
                    "role": "assistant",
                    "model": self.model,
                    "content": [],
                    "stop_reason": null,
                    "stop_sequence": null,
                    "usage": { "input_tokens": input_tokens, "output_tokens": 1 }
                }
            }),
        ));
        w.send(event("ping", &json!({ "type": "ping" })));

        for op in self.ops {
            match op {
                Op::Thinking(text) => {
                    let index = w.ensure_open(
                        Kind::Thinking,
                        json!({ "type": "thinking", "thinking": "", "signature": "" }),
                    );
                    w.delta(index, json!({ "type": "thinking_delta", "thinking": text }));
                }
                Op::Text(text) => {
                    let index = w.ensure_open(Kind::Text, json!({ "type": "text", "text": "" }));
                    w.delta(index, json!({ "type": "text_delta", "text": text }));
                }
                Op::ToolUse { id, name, pieces } => {
                    w.close();
                    let index = w.ensure_open(
                        Kind::ToolUse,
                        json!({ "type": "tool_use", "id": id, "name": name, "input": {} }),
                    );
                    for piece in pieces {
                        w.delta(
                            index,
                            json!({ "type": "input_json_delta", "partial_json": piece }),
                        );
                    }
                }
                Op::EndBlock => w.close(),
                Op::Error { kind, message } => {
                    w.send(error_event(&kind, &message));
                    return Reply::sse(w.steps);
                }
                Op::Step(step @ (Step::Stall | Step::Reset)) => {
                    w.steps.push(step);
                    return Reply::sse(w.steps);
                }
                Op::Step(step) => w.steps.push(step),
            }
        }
        w.close();
        let stop_reason = self
            .stop_reason
            .unwrap_or_else(|| if used_tool { "tool_use" } else { "end_turn" }.to_owned());
        w.send(event(
            "message_delta",
            &json!({
                "type": "message_delta",
                "delta": { "stop_reason": stop_reason, "stop_sequence": null },
                "usage": { "output_tokens": output_tokens }
            }),
        ));
        w.send(event("message_stop", &json!({ "type": "message_stop" })));
        Reply::sse(w.steps)
    }
}

/// Block bookkeeping while building.
struct Writer {
    steps: Vec<Step>,
    open: Option<(usize, Kind)>,
    next_index: usize,
}

impl Writer {
    fn send(&mut self, bytes: Vec<u8>) {
        self.steps.push(Step::Send(bytes));
    }

    /// The index of the open block of `kind`, opening one (after closing any
    /// other) if needed.
    fn ensure_open(&mut self, kind: Kind, content_block: Value) -> usize {
        if let Some((index, open_kind)) = self.open
            && open_kind == kind
        {
            return index;
        }
        self.close();
        let index = self.next_index;
        self.next_index += 1;
        self.open = Some((index, kind));
        self.send(event(
            "content_block_start",
            &json!({ "type": "content_block_start", "index": index, "content_block": content_block }),
        ));
        index
    }

    fn delta(&mut self, index: usize, delta: Value) {
        self.send(event(
            "content_block_delta",
            &json!({ "type": "content_block_delta", "index": index, "delta": delta }),
        ));
    }

    fn close(&mut self) {
        if let Some((index, kind)) = self.open.take() {
            if kind == Kind::Thinking {
                self.delta(
                    index,
                    json!({ "type": "signature_delta", "signature": FAKE_SIGNATURE }),
                );
            }
            self.send(event(
                "content_block_stop",
                &json!({ "type": "content_block_stop", "index": index }),
            ));
        }
    }
}

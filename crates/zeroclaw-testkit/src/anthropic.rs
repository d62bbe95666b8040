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

use serde_json::{Value, json};

use crate::sse::sse_event;
use crate::stream::{self, Format, Head, Item};
use crate::{Reply, Step, split_evenly};

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

/// Builds an Anthropic-style streaming [`Reply`], in call order.
///
/// The stream starts with `message_start` and a `ping`. Consecutive
/// [`Builder::text`] calls are deltas of one text block, consecutive
/// [`Builder::thinking`] calls of one thinking block; a change of kind (or
/// [`Builder::end_block`]) closes the open block and the next one gets the
/// next index. Each [`Builder::tool_use`] is its own block. Unless cut by
/// `stall`, `reset` or [`Builder::error`], the stream ends by closing the open
/// block, then `message_delta` (stop reason: [`Builder::stop_reason`], else
/// `tool_use` when a tool was used, else `end_turn`) and `message_stop`.
pub type Builder = stream::Builder<Anthropic>;

/// The Messages API format of a [`Builder`]: its settings, and the blocks while
/// it writes.
#[derive(Clone, Debug, Default)]
pub struct Anthropic {
    usage: Option<(u64, u64)>,
    /// `cache_read_input_tokens`, when set.
    cache_read: Option<u64>,
    stop_reason: Option<String>,
    blocks: Blocks,
}

/// An Anthropic builder's own op.
#[derive(Clone, Debug)]
pub enum Op {
    /// A `thinking_delta`.
    Thinking(String),
    /// A `text_delta`.
    Text(String),
    /// A `tool_use` block with its input in these pieces.
    ToolUse {
        /// The block's `id`.
        id: String,
        /// The tool's name.
        name: String,
        /// The `partial_json` pieces.
        pieces: Vec<String>,
    },
    /// Closes the open block.
    EndBlock,
    /// An `error` event, which ends the stream.
    Error {
        /// The error's `type`.
        kind: String,
        /// Its `message`.
        message: String,
    },
}

impl Anthropic {
    /// `message_start`'s `usage`.
    fn start_usage(&self, input_tokens: u64) -> Value {
        let mut usage = json!({ "input_tokens": input_tokens, "output_tokens": 1 });
        if let Some(read) = self.cache_read {
            usage["cache_read_input_tokens"] = json!(read);
        }
        usage
    }
}

impl Format for Anthropic {
    type Op = Op;
    const DEFAULT_ID: &'static str = DEFAULT_ID;
    const DEFAULT_MODEL: &'static str = DEFAULT_MODEL;

    /// Sends `message_start` (with the input tokens) and a `ping`, and settles the
    /// defaults that depend on the whole stream: the output tokens and the stop reason.
    fn start(&mut self, head: &Head, items: &[Item<Op>], out: &mut Vec<Step>) {
        let ops = || {
            items.iter().filter_map(|item| match item {
                Item::Op(op) => Some(op),
                Item::Step(_) => None,
            })
        };
        let deltas: u64 = ops()
            .map(|op| match op {
                Op::Thinking(_) | Op::Text(_) => 1,
                Op::ToolUse { pieces, .. } => pieces.len() as u64,
                _ => 0,
            })
            .sum();
        let (input_tokens, _) = *self
            .usage
            .get_or_insert((DEFAULT_INPUT_TOKENS, deltas.max(1)));
        let used_tool = ops().any(|op| matches!(op, Op::ToolUse { .. }));
        self.stop_reason
            .get_or_insert_with(|| if used_tool { "tool_use" } else { "end_turn" }.to_owned());
        send(
            out,
            "message_start",
            json!({
                "type": "message_start",
                "message": {
                    "id": head.id,
                    "type": "message",
                    "role": "assistant",
                    "model": head.model,
                    "content": [],
                    "stop_reason": null,
                    "stop_sequence": null,
                    "usage": self.start_usage(input_tokens),
                }
            }),
        );
        send(out, "ping", json!({ "type": "ping" }));
    }

    fn op(&mut self, _: &Head, op: Op, out: &mut Vec<Step>) -> bool {
        let blocks = &mut self.blocks;
        match op {
            Op::Thinking(text) => {
                let index = blocks.ensure_open(
                    out,
                    Kind::Thinking,
                    json!({ "type": "thinking", "thinking": "", "signature": "" }),
                );
                delta(
                    out,
                    index,
                    json!({ "type": "thinking_delta", "thinking": text }),
                );
            }
            Op::Text(text) => {
                let index =
                    blocks.ensure_open(out, Kind::Text, json!({ "type": "text", "text": "" }));
                delta(out, index, json!({ "type": "text_delta", "text": text }));
            }
            Op::ToolUse { id, name, pieces } => {
                blocks.close(out);
                let index = blocks.ensure_open(
                    out,
                    Kind::ToolUse,
                    json!({ "type": "tool_use", "id": id, "name": name, "input": {} }),
                );
                for piece in pieces {
                    delta(
                        out,
                        index,
                        json!({ "type": "input_json_delta", "partial_json": piece }),
                    );
                }
            }
            Op::EndBlock => blocks.close(out),
            Op::Error { kind, message } => {
                out.push(Step::Send(error_event(&kind, &message)));
                return false;
            }
        }
        true
    }

    fn end(mut self, _: &Head, out: &mut Vec<Step>) {
        self.blocks.close(out);
        let output_tokens = self.usage.map(|(_, output)| output);
        send(
            out,
            "message_delta",
            json!({
                "type": "message_delta",
                "delta": { "stop_reason": self.stop_reason, "stop_sequence": null },
                "usage": { "output_tokens": output_tokens }
            }),
        );
        send(out, "message_stop", json!({ "type": "message_stop" }));
    }
}

impl Builder {
    /// A `thinking_delta` (in the open thinking block, or a new one).
    pub fn thinking(self, text: &str) -> Self {
        self.op(Op::Thinking(text.to_owned()))
    }

    /// A `text_delta` (in the open text block, or a new one).
    pub fn text(self, text: &str) -> Self {
        self.op(Op::Text(text.to_owned()))
    }

    /// A `tool_use` block (`content_block_start` with `id`, `name`,
    /// `input: {}`) whose input `args` arrives as `split_into`
    /// `input_json_delta` `partial_json` pieces (see [`split_evenly`]; at
    /// least one piece, so an empty `args` gives one empty piece, as the real
    /// API sends for tools without arguments).
    pub fn tool_use(self, id: &str, name: &str, args: &str, split_into: usize) -> Self {
        self.op(Op::ToolUse {
            id: id.to_owned(),
            name: name.to_owned(),
            pieces: split_evenly(args, split_into),
        })
    }

    /// Closes the open block (`content_block_stop`) so the next delta opens a
    /// new block even if it is of the same kind.
    pub fn end_block(self) -> Self {
        self.op(Op::EndBlock)
    }

    /// A `ping` event.
    pub fn ping(self) -> Self {
        self.raw(event("ping", &json!({ "type": "ping" })))
    }

    /// Token usage: `input` goes in `message_start`, `output` in
    /// `message_delta`. Default: [`DEFAULT_INPUT_TOKENS`] and the number of
    /// content deltas.
    pub fn usage(mut self, input: u64, output: u64) -> Self {
        self.format.usage = Some((input, output));
        self
    }

    /// Reports `tokens` read from the prompt cache (`cache_read_input_tokens` in
    /// `message_start`, which Anthropic counts apart from `input_tokens`).
    pub fn cache_read(mut self, tokens: u64) -> Self {
        self.format.cache_read = Some(tokens);
        self
    }

    /// The `stop_reason` in `message_delta` (`"end_turn"`, `"tool_use"`,
    /// `"max_tokens"`, `"stop_sequence"`, `"pause_turn"`, `"refusal"`, …).
    pub fn stop_reason(mut self, reason: &str) -> Self {
        self.format.stop_reason = Some(reason.to_owned());
        self
    }

    /// An `error` event here, after which the stream ends (cleanly, as the
    /// real API closes it). Nothing after this is sent.
    pub fn error(self, kind: &str, message: &str) -> Self {
        self.op(Op::Error {
            kind: kind.to_owned(),
            message: message.to_owned(),
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Thinking,
    Text,
    ToolUse,
}

/// Block bookkeeping while writing: the open block, and the next block's index.
#[derive(Clone, Debug, Default)]
struct Blocks {
    open: Option<(usize, Kind)>,
    next_index: usize,
}

impl Blocks {
    /// The index of the open block of `kind`, opening one (after closing any
    /// other) if needed.
    fn ensure_open(&mut self, out: &mut Vec<Step>, kind: Kind, content_block: Value) -> usize {
        if let Some((index, open_kind)) = self.open
            && open_kind == kind
        {
            return index;
        }
        self.close(out);
        let index = self.next_index;
        self.next_index += 1;
        self.open = Some((index, kind));
        send(
            out,
            "content_block_start",
            json!({ "type": "content_block_start", "index": index, "content_block": content_block }),
        );
        index
    }

    fn close(&mut self, out: &mut Vec<Step>) {
        if let Some((index, kind)) = self.open.take() {
            if kind == Kind::Thinking {
                delta(
                    out,
                    index,
                    json!({ "type": "signature_delta", "signature": FAKE_SIGNATURE }),
                );
            }
            send(
                out,
                "content_block_stop",
                json!({ "type": "content_block_stop", "index": index }),
            );
        }
    }
}

/// Sends one named event.
fn send(out: &mut Vec<Step>, name: &str, data: Value) {
    out.push(Step::Send(event(name, &data)));
}

fn delta(out: &mut Vec<Step>, index: usize, delta: Value) {
    send(
        out,
        "content_block_delta",
        json!({ "type": "content_block_delta", "index": index, "delta": delta }),
    );
}

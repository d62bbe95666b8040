//! Streaming replies in the OpenAI-compatible Chat Completions format.
//!
//! A stream is a series of `data: {chunk}\n\n` events, each a
//! `chat.completion.chunk` object, ended by `data: [DONE]\n\n`:
//!
//! ```text
//! data: {"id":"chatcmpl-fake","object":"chat.completion.chunk","created":1700000000,"model":"fake-model","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}
//!
//! data: {"id":"chatcmpl-fake",…,"choices":[{"index":0,"delta":{"content":"Hel"},"logprobs":null,"finish_reason":null}]}
//!
//! data: {"id":"chatcmpl-fake",…,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}
//!
//! data: {"id":"chatcmpl-fake",…,"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}
//!
//! data: [DONE]
//! ```
//!
//! Every event is its own [`Step::Send`].

use serde_json::{Value, json};

use crate::sse::sse_event;
use crate::stream::{self, Format, Head, Item};
use crate::{Reply, Step, split_evenly};

/// Model name the builders put in chunks unless [`Builder::model`] is used.
pub const DEFAULT_MODEL: &str = "fake-model";
/// Completion id the builders use unless [`Builder::id`] is used.
pub const DEFAULT_ID: &str = "chatcmpl-fake";
/// The fixed `created` timestamp (deterministic output).
pub const CREATED: u64 = 1_700_000_000;
/// Prompt-token count reported by [`text`] and [`many_chunks`].
pub const DEFAULT_PROMPT_TOKENS: u64 = 10;
/// How many content events [`many_chunks`] packs into one [`Step::Send`].
pub const MANY_CHUNKS_PER_SEND: usize = 1000;

/// A complete text answer: one content delta per chunk, `finish_reason`
/// `"stop"`, a usage chunk (prompt [`DEFAULT_PROMPT_TOKENS`], completion =
/// number of chunks), then `[DONE]`.
pub fn text(chunks: &[&str]) -> Reply {
    let mut b = Builder::new();
    for chunk in chunks {
        b = b.text(chunk);
    }
    b.finish(Some("stop"))
        .usage(DEFAULT_PROMPT_TOKENS, chunks.len() as u64)
        .build()
}

/// A text answer of `n` identical content deltas (`text` each), built
/// efficiently for benchmarks: the events are packed
/// [`MANY_CHUNKS_PER_SEND`] to a [`Step::Send`], so the fake provider is not
/// the bottleneck. Ends like [`text`]: finish `"stop"`, usage, `[DONE]`.
pub fn many_chunks(n: usize, text: &str) -> Reply {
    let head = Builder::new().head;
    let event = data(&chunk(&head, json!({ "content": text }), None));
    let mut steps = Vec::with_capacity(n / MANY_CHUNKS_PER_SEND + 5);
    steps.push(Step::Send(role_event(&head)));
    let mut left = n;
    while left > 0 {
        let k = left.min(MANY_CHUNKS_PER_SEND);
        let mut buf = Vec::with_capacity(event.len() * k);
        for _ in 0..k {
            buf.extend_from_slice(&event);
        }
        steps.push(Step::Send(buf));
        left -= k;
    }
    steps.push(Step::Send(data(&chunk(
        &head,
        json!({}),
        Some(Some("stop")),
    ))));
    steps.push(Step::Send(data(&usage_chunk(
        &head,
        DEFAULT_PROMPT_TOKENS,
        n as u64,
    ))));
    steps.push(Step::Send(done_event()));
    Reply::sse(steps)
}

/// OpenAI's error body: `{"error":{"message":…,"type":…,"param":null,"code":…}}`.
pub fn error_body(message: &str, kind: &str, code: Option<&str>) -> Value {
    json!({
        "error": {
            "message": message,
            "type": kind,
            "param": null,
            "code": code,
        }
    })
}

/// The `data: [DONE]` terminator event.
pub fn done_event() -> Vec<u8> {
    sse_event(None, "[DONE]")
}

/// Builds an OpenAI-style streaming [`Reply`], event by event, in call order.
///
/// [`Builder::build`] always starts with the
/// role chunk (`{"role":"assistant","content":""}`). Unless the stream was cut
/// with `stall` or `reset`, it then ends with a finish chunk (if
/// [`Builder::finish`] was not called:
/// `"tool_calls"` when a tool call was added, else `"stop"`), the usage chunk
/// if `usage` was called, and `data: [DONE]` unless `no_done`.
pub type Builder = stream::Builder<OpenAi>;

/// The Chat Completions format of a [`Builder`]: its settings.
#[derive(Clone, Debug)]
pub struct OpenAi {
    usage: Option<(u64, u64)>,
    /// `usage.prompt_tokens_details.cached_tokens`, when set.
    cached: Option<u64>,
    done: bool,
    finished: bool,
    has_tool_calls: bool,
}

impl Default for OpenAi {
    fn default() -> Self {
        OpenAi {
            usage: None,
            cached: None,
            done: true,
            finished: false,
            has_tool_calls: false,
        }
    }
}

/// An OpenAI builder's own op.
#[derive(Clone, Debug)]
pub enum Op {
    /// A chunk with this `delta` and `finish_reason: null`.
    Delta(Value),
    /// A chunk with an empty delta and this finish reason (`None` = `null`).
    Finish(Option<String>),
    /// A whole chunk object given by the test.
    Chunk(Value),
}

impl Format for OpenAi {
    type Op = Op;
    const DEFAULT_ID: &'static str = DEFAULT_ID;
    const DEFAULT_MODEL: &'static str = DEFAULT_MODEL;

    fn start(&mut self, head: &Head, _: &[Item<Op>], out: &mut Vec<Step>) {
        out.push(Step::Send(role_event(head)));
    }

    fn op(&mut self, head: &Head, op: Op, out: &mut Vec<Step>) -> bool {
        let chunk = match op {
            Op::Delta(delta) => chunk(head, delta, None),
            Op::Finish(reason) => chunk(head, json!({}), Some(reason.as_deref())),
            Op::Chunk(chunk) => chunk,
        };
        out.push(Step::Send(data(&chunk)));
        true
    }

    fn end(self, head: &Head, out: &mut Vec<Step>) {
        if !self.finished {
            let reason = if self.has_tool_calls {
                "tool_calls"
            } else {
                "stop"
            };
            out.push(Step::Send(data(&chunk(
                head,
                json!({}),
                Some(Some(reason)),
            ))));
        }
        if let Some((prompt, completion)) = self.usage {
            let mut chunk = usage_chunk(head, prompt, completion);
            if let Some(cached) = self.cached {
                chunk["usage"]["prompt_tokens_details"] = json!({ "cached_tokens": cached });
            }
            out.push(Step::Send(data(&chunk)));
        }
        if self.done {
            out.push(Step::Send(done_event()));
        }
    }
}

impl Builder {
    /// A reasoning delta spelled `reasoning_content` (DeepSeek, vLLM, …).
    pub fn reasoning(self, text: &str) -> Self {
        self.delta(json!({ "reasoning_content": text }))
    }

    /// A reasoning delta spelled `reasoning` (OpenRouter, Ollama, …).
    pub fn reasoning_field(self, text: &str) -> Self {
        self.delta(json!({ "reasoning": text }))
    }

    /// A content delta.
    pub fn text(self, text: &str) -> Self {
        self.delta(json!({ "content": text }))
    }

    /// A tool call at `index`. The first delta carries `id`, `type:
    /// "function"`, `function.name` and empty `arguments`; then `args` is
    /// split (see [`split_evenly`]) across `split_into` deltas carrying only
    /// `function.arguments`. `split_into == 0` puts the whole `args` into the
    /// first delta instead (one-shot style of some servers).
    pub fn tool_call(
        mut self,
        index: usize,
        id: &str,
        name: &str,
        args: &str,
        split_into: usize,
    ) -> Self {
        self.format.has_tool_calls = true;
        let first_args = if split_into == 0 { args } else { "" };
        self = self.delta(json!({
            "tool_calls": [{
                "index": index,
                "id": id,
                "type": "function",
                "function": { "name": name, "arguments": first_args }
            }]
        }));
        if split_into > 0 {
            for piece in split_evenly(args, split_into) {
                self = self.delta(json!({
                    "tool_calls": [{ "index": index, "function": { "arguments": piece } }]
                }));
            }
        }
        self
    }

    /// An arbitrary `delta` object in a chunk (e.g. `{"refusal": "…"}`).
    pub fn delta(self, delta: Value) -> Self {
        self.op(Op::Delta(delta))
    }

    /// An arbitrary whole chunk object, sent as `data: {chunk}`.
    pub fn raw_chunk(self, chunk: Value) -> Self {
        self.op(Op::Chunk(chunk))
    }

    /// Reports usage in a final `"choices": []` chunk after the finish chunk
    /// (as OpenAI does with `stream_options.include_usage`).
    pub fn usage(mut self, prompt: u64, completion: u64) -> Self {
        self.format.usage = Some((prompt, completion));
        self
    }

    /// Reports `cached` of the prompt tokens as read from the prompt cache
    /// (`usage.prompt_tokens_details.cached_tokens`); needs [`Builder::usage`].
    pub fn cached(mut self, cached: u64) -> Self {
        self.format.cached = Some(cached);
        self
    }

    /// Reports no usage at all (as servers do that ignore `stream_options`).
    pub fn no_usage(mut self) -> Self {
        self.format.usage = None;
        self
    }

    /// A finish chunk here, with this `finish_reason`: `None` sends
    /// `"finish_reason": null` (loosely compatible servers that never say
    /// why), `Some("")` sends an empty string. Suppresses the automatic
    /// finish chunk.
    pub fn finish(mut self, reason: Option<&str>) -> Self {
        self.format.finished = true;
        self.op(Op::Finish(reason.map(str::to_owned)))
    }

    /// Omit the final `data: [DONE]`.
    pub fn no_done(mut self) -> Self {
        self.format.done = false;
        self
    }
}

/// The first chunk: the assistant's role and empty content.
fn role_event(head: &Head) -> Vec<u8> {
    data(&chunk(
        head,
        json!({ "role": "assistant", "content": "" }),
        None,
    ))
}

/// A chunk; `finish` is `None` for `finish_reason: null` on a plain delta,
/// `Some(reason)` for a finish chunk.
fn chunk(head: &Head, delta: Value, finish: Option<Option<&str>>) -> Value {
    json!({
        "id": head.id,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": head.model,
        "choices": [{
            "index": 0,
            "delta": delta,
            "logprobs": null,
            "finish_reason": finish.flatten(),
        }]
    })
}

fn usage_chunk(head: &Head, prompt: u64, completion: u64) -> Value {
    json!({
        "id": head.id,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": head.model,
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    })
}

fn data(chunk: &Value) -> Vec<u8> {
    sse_event(None, &chunk.to_string())
}

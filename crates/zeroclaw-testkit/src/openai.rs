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

use std::time::Duration;

use serde_json::{Value, json};

use crate::{Gate, Reply, Step, split_evenly, sse_event};

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

/// A text answer of `n` identical content deltas (`chunk` each), built
/// efficiently for benchmarks: the events are packed
/// [`MANY_CHUNKS_PER_SEND`] to a [`Step::Send`], so the fake provider is not
/// the bottleneck. Ends like [`text`]: finish `"stop"`, usage, `[DONE]`.
pub fn many_chunks(n: usize, chunk: &str) -> Reply {
    let b = Builder::new();
    let event = b.data(&b.chunk(json!({ "content": chunk }), None));
    let mut steps = Vec::with_capacity(n / MANY_CHUNKS_PER_SEND + 5);
    steps.push(Step::Send(b.role_event()));
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
    steps.push(Step::Send(b.data(&b.chunk(json!({}), Some(Some("stop"))))));
    steps.push(Step::Send(
        b.data(&b.usage_chunk(DEFAULT_PROMPT_TOKENS, n as u64)),
    ));
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

#[derive(Clone, Debug)]
enum Item {
    /// A chunk with this `delta` and `finish_reason: null`.
    Delta(Value),
    /// A chunk with an empty delta and this finish reason (`None` = `null`).
    Finish(Option<String>),
    /// A whole chunk object given by the test.
    Chunk(Value),
    /// A raw step.
    Step(Step),
}

/// Builds an OpenAI-style streaming [`Reply`], event by event, in call order.
///
/// [`Builder::build`] always starts with the role chunk
/// (`{"role":"assistant","content":""}`). Unless the stream was cut with
/// [`Builder::stall`] or [`Builder::reset`], it then ends with a finish chunk
/// (if [`Builder::finish`] was not called: `"tool_calls"` when a tool call was
/// added, else `"stop"`), the usage chunk if [`Builder::usage`] was called,
/// and `data: [DONE]` unless [`Builder::no_done`].
#[derive(Clone, Debug)]
pub struct Builder {
    id: String,
    model: String,
    items: Vec<Item>,
    usage: Option<(u64, u64)>,
    done: bool,
    finished: bool,
    has_tool_calls: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    /// An empty stream.
    pub fn new() -> Builder {
        Builder {
            id: DEFAULT_ID.to_owned(),
            model: DEFAULT_MODEL.to_owned(),
            items: Vec::new(),
            usage: None,
            done: true,
            finished: false,
            has_tool_calls: false,
        }
    }

    /// Sets the `model` field of every chunk.
    pub fn model(mut self, model: &str) -> Self {
        self.model = model.to_owned();
        self
    }

    /// Sets the `id` field of every chunk.
    pub fn id(mut self, id: &str) -> Self {
        self.id = id.to_owned();
        self
    }

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
        self.has_tool_calls = true;
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
    pub fn delta(mut self, delta: Value) -> Self {
        self.items.push(Item::Delta(delta));
        self
    }

    /// An arbitrary whole chunk object, sent as `data: {chunk}`.
    pub fn raw_chunk(mut self, chunk: Value) -> Self {
        self.items.push(Item::Chunk(chunk));
        self
    }

    /// Reports usage in a final `"choices": []` chunk after the finish chunk
    /// (as OpenAI does with `stream_options.include_usage`).
    pub fn usage(mut self, prompt: u64, completion: u64) -> Self {
        self.usage = Some((prompt, completion));
        self
    }

    /// A finish chunk here, with this `finish_reason`: `None` sends
    /// `"finish_reason": null` (loosely compatible servers that never say
    /// why), `Some("")` sends an empty string. Suppresses the automatic
    /// finish chunk.
    pub fn finish(mut self, reason: Option<&str>) -> Self {
        self.finished = true;
        self.items.push(Item::Finish(reason.map(str::to_owned)));
        self
    }

    /// An arbitrary line sent as its own event (`line` + `"\n\n"`), e.g. a
    /// malformed `data: {not json`.
    pub fn raw_line(self, line: &str) -> Self {
        self.step(Step::Send(format!("{line}\n\n").into_bytes()))
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

    /// Stop after what was added so far and hang, keeping the socket open.
    /// Nothing after this is sent (no finish, usage or `[DONE]`).
    pub fn stall(self) -> Self {
        self.step(Step::Stall)
    }

    /// Reset the connection after what was added so far. Nothing after this
    /// is sent.
    pub fn reset(self) -> Self {
        self.step(Step::Reset)
    }

    /// Omit the final `data: [DONE]`.
    pub fn no_done(mut self) -> Self {
        self.done = false;
        self
    }

    /// Any raw [`Step`].
    pub fn step(mut self, step: Step) -> Self {
        self.items.push(Item::Step(step));
        self
    }

    /// The finished reply: `200`, `text/event-stream`, one send per event.
    pub fn build(self) -> Reply {
        let mut steps = vec![Step::Send(self.role_event())];
        for item in &self.items {
            match item {
                Item::Delta(delta) => {
                    steps.push(Step::Send(self.data(&self.chunk(delta.clone(), None))));
                }
                Item::Finish(reason) => {
                    let chunk = self.chunk(json!({}), Some(reason.as_deref()));
                    steps.push(Step::Send(self.data(&chunk)));
                }
                Item::Chunk(chunk) => steps.push(Step::Send(self.data(chunk))),
                Item::Step(step @ (Step::Stall | Step::Reset)) => {
                    steps.push(step.clone());
                    return Reply::sse(steps);
                }
                Item::Step(step) => steps.push(step.clone()),
            }
        }
        if !self.finished {
            let reason = if self.has_tool_calls {
                "tool_calls"
            } else {
                "stop"
            };
            let chunk = self.chunk(json!({}), Some(Some(reason)));
            steps.push(Step::Send(self.data(&chunk)));
        }
        if let Some((prompt, completion)) = self.usage {
            steps.push(Step::Send(self.data(&self.usage_chunk(prompt, completion))));
        }
        if self.done {
            steps.push(Step::Send(done_event()));
        }
        Reply::sse(steps)
    }

    fn role_event(&self) -> Vec<u8> {
        self.data(&self.chunk(json!({ "role": "assistant", "content": "" }), None))
    }

    /// A chunk; `finish` is `None` for `finish_reason: null` on a plain
    /// delta, `Some(reason)` for a finish chunk.
    fn chunk(&self, delta: Value, finish: Option<Option<&str>>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.model,
            "choices": [{
                "index": 0,
                "delta": delta,
                "logprobs": null,
                "finish_reason": finish.flatten(),
            }]
        })
    }

    fn usage_chunk(&self, prompt: u64, completion: u64) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.model,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        })
    }

    fn data(&self, chunk: &Value) -> Vec<u8> {
        sse_event(None, &chunk.to_string())
    }
}

//! OpenAI-compatible Chat Completions with `stream: true` (OpenAI, Ollama, llama.cpp's
//! server, vLLM, OpenRouter). Lenient where those servers differ: a missing or empty
//! `finish_reason`, `reasoning_content` or `reasoning` for thoughts, tool calls without an
//! id, a malformed line (skipped), usage or not.

use super::error::{ProviderError, mid_stream};
use super::sse::Event;
use super::wire::{Decoder, Flow, Raw, Wire, parse, raw_text, raw_value};
use super::{ChatMessage, ChatRequest, Delta, StepResult, ToolCall};
use crate::config::ProviderConfig;
use crate::store::Usage;
use reqwest::RequestBuilder;
use serde::Deserialize;
use serde_json::{Value, json};

/// Chat Completions: the key as a bearer token.
pub(super) struct OpenAi;

impl Wire for OpenAi {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn path(&self) -> &'static str {
        "/chat/completions"
    }

    fn headers(&self, request: RequestBuilder, api_key: Option<&str>) -> RequestBuilder {
        match api_key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    }

    fn body(&self, request: &ChatRequest<'_>, config: &ProviderConfig) -> Value {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if let Some(system) = request.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        for message in request.messages {
            messages.push(match message {
                ChatMessage::User { text, images } if images.is_empty() => {
                    json!({"role": "user", "content": text})
                }
                // With images, the content is parts: the text, then each image as a data URL;
                // a prompt of images alone has no text part (as Anthropic's, which refuses
                // an empty one).
                ChatMessage::User { text, images } => {
                    let mut parts = Vec::with_capacity(images.len() + 1);
                    if !text.is_empty() {
                        parts.push(json!({"type": "text", "text": text}));
                    }
                    parts.extend(images.iter().map(|image| {
                        let url = format!("data:{};base64,{}", image.mime_type, image.base64());
                        json!({"type": "image_url", "image_url": {"url": url}})
                    }));
                    json!({"role": "user", "content": parts})
                }
                ChatMessage::Assistant { text, tool_calls } => {
                    let mut m = json!({"role": "assistant", "content": text});
                    if !tool_calls.is_empty() {
                        m["tool_calls"] = tool_calls
                            .iter()
                            .map(|c| {
                                json!({
                                    "id": c.id,
                                    "type": "function",
                                    "function": {"name": c.name, "arguments": c.raw_arguments},
                                })
                            })
                            .collect();
                    }
                    m
                }
                ChatMessage::ToolResult {
                    call_id, output, ..
                } => json!({"role": "tool", "tool_call_id": call_id, "content": output}),
            });
        }
        let mut body = json!({
            "model": request.model,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "type": "function",
                        "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
                    })
                })
                .collect();
        }
        if let Some(max) = config.max_tokens {
            body["max_tokens"] = json!(max);
        }
        body
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::<Stream>::default()
    }
}

/// One streamed chunk, read without building a map per object: the members the loop does
/// not use are skipped, and those whose type varies between servers stay unparsed slices
/// of the event ([`Raw`]), read only when used.
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    error: Raw<'a>,
    #[serde(default, borrow)]
    usage: Raw<'a>,
    /// Only the first choice is read (one is asked for); the rest are skipped unparsed.
    #[serde(default, borrow, deserialize_with = "first_choice")]
    choices: Option<Choice<'a>>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    finish_reason: Raw<'a>,
    #[serde(default, borrow)]
    delta: Option<ChunkDelta<'a>>,
    /// What a few servers send instead of `delta`.
    #[serde(default, borrow)]
    message: Option<ChunkDelta<'a>>,
}

#[derive(Deserialize)]
struct ChunkDelta<'a> {
    #[serde(default, borrow)]
    content: Raw<'a>,
    #[serde(default, borrow)]
    reasoning_content: Raw<'a>,
    #[serde(default, borrow)]
    reasoning: Raw<'a>,
    #[serde(default, borrow)]
    tool_calls: Raw<'a>,
}

/// `choices`' first element (or `None` for `null` or `[]`), without a `Vec` per chunk.
fn first_choice<'de, D>(deserializer: D) -> Result<Option<Choice<'de>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    struct First;
    impl<'de> serde::de::Visitor<'de> for First {
        type Value = Option<Choice<'de>>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an array of choices or null")
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_seq(self)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let first = seq.next_element::<Choice<'de>>()?;
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
            Ok(first)
        }
    }
    deserializer.deserialize_option(First)
}

/// A tool call being assembled from deltas, keyed by its `index`.
#[derive(Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// One answer being read: tool calls by their `index`, usage and the finish reason as they
/// arrive.
#[derive(Default)]
struct Stream {
    calls: Vec<(u64, PartialCall)>,
    usage: Option<Usage>,
    cached_input_tokens: u64,
    finish_reason: Option<String>,
}

impl Decoder for Stream {
    fn event(
        &mut self,
        event: &Event,
        on_delta: &mut (dyn FnMut(Delta) + Send),
    ) -> Result<Flow, ProviderError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            return Ok(Flow::End);
        }
        let Some(chunk) = parse::<Chunk>(data) else {
            return Ok(Flow::Skipped);
        };
        if let Some(error) = raw_value(chunk.error) {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| error.to_string());
            return Err(mid_stream(None, &message));
        }
        if let Some(u) = raw_value(chunk.usage).filter(Value::is_object) {
            self.usage = Some(Usage {
                input_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
                output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
            });
            // Part of `prompt_tokens` already (OpenAI's prompt caching).
            self.cached_input_tokens = u
                .pointer("/prompt_tokens_details/cached_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0);
        }
        let Some(choice) = chunk.choices else {
            return Ok(Flow::More);
        };
        if let Some(reason) = raw_text(choice.finish_reason) {
            self.finish_reason = Some(reason);
        }
        let Some(delta) = choice.delta.or(choice.message) else {
            return Ok(Flow::More);
        };
        // One or the other: vLLM sends both, with the same text, while it renames the field.
        if let Some(text) = [delta.reasoning_content, delta.reasoning]
            .into_iter()
            .find_map(raw_text)
        {
            on_delta(Delta::Thought(text));
        }
        if let Some(text) = raw_text(delta.content) {
            on_delta(Delta::Text(text));
        }
        for (position, call) in raw_value(delta.tool_calls)
            .as_ref()
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            self.add_call_piece(position, call);
        }
        Ok(Flow::More)
    }

    fn finish(self: Box<Self>) -> StepResult {
        let mut calls = self.calls;
        calls.sort_by_key(|(index, _)| *index);
        let tool_calls = calls
            .into_iter()
            .filter(|(_, c)| !c.name.is_empty())
            .map(|(_, c)| {
                // Ids must be unique across the session, not just the step: clients track
                // tool calls by id, and history pairs each call with its result by id.
                let id =
                    c.id.unwrap_or_else(|| format!("call_{}", uuid::Uuid::new_v4().simple()));
                ToolCall::new(id, c.name, c.arguments)
            })
            .collect();
        StepResult {
            tool_calls,
            usage: self.usage,
            cached_input_tokens: self.cached_input_tokens,
            finish_reason: self.finish_reason,
        }
    }
}

impl Stream {
    /// Adds one delta's piece of a tool call (the `position`th in its chunk) to the call it
    /// continues, or starts one.
    fn add_call_piece(&mut self, position: usize, call: &Value) {
        let index = call["index"].as_u64().unwrap_or(position as u64);
        let at = match self.calls.iter().position(|(i, _)| *i == index) {
            Some(at) => at,
            None => {
                self.calls.push((index, PartialCall::default()));
                self.calls.len() - 1
            }
        };
        let slot = &mut self.calls[at].1;
        if let Some(id) = call["id"].as_str().filter(|s| !s.is_empty()) {
            slot.id = Some(id.to_owned());
        }
        if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
            slot.name.push_str(name);
        }
        if let Some(args) = call.pointer("/function/arguments") {
            match args {
                Value::String(s) => slot.arguments.push_str(s),
                // Some servers send the arguments as an object, already parsed.
                Value::Object(_) => slot.arguments.push_str(&args.to_string()),
                _ => {}
            }
        }
    }
}

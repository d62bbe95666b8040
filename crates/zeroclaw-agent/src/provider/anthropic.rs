//! Anthropic's Messages API with `stream: true`: text, thinking and `tool_use` blocks, the
//! last assembled from `input_json_delta` pieces.

use super::error::{ProviderError, mid_stream};
use super::sse::Event;
use super::wire::{Decoder, Flow, Raw, Wire, parse, raw_text, raw_value};
use super::{ChatMessage, ChatRequest, Delta, StepResult, ToolCall};
use crate::config::ProviderConfig;
use crate::store::Usage;
use reqwest::RequestBuilder;
use serde::Deserialize;
use serde_json::{Value, json};
use std::borrow::Cow;

/// Anthropic requires `max_tokens`; this is used when the config names none.
const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The version of the Messages API this module speaks.
const API_VERSION: &str = "2023-06-01";

/// The Messages API: the key in `x-api-key`, the API version in every request.
pub(super) struct Anthropic;

impl Wire for Anthropic {
    fn name(&self) -> &'static str {
        "anthropic"
    }

    fn path(&self) -> &'static str {
        "/messages"
    }

    fn headers(&self, request: RequestBuilder, api_key: Option<&str>) -> RequestBuilder {
        let request = request.header("anthropic-version", API_VERSION);
        match api_key {
            Some(key) => request.header("x-api-key", key),
            None => request,
        }
    }

    fn body(&self, request: &ChatRequest<'_>, config: &ProviderConfig) -> Value {
        // Roles must alternate, so consecutive messages of one role (a user prompt after tool
        // results, say) are merged into one message with several content blocks.
        let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
        let mut push = |role: &'static str, block: Value| match messages.last_mut() {
            Some((last, blocks)) if *last == role => blocks.push(block),
            _ => messages.push((role, vec![block])),
        };
        for message in request.messages {
            match message {
                // Images first, then the text: Anthropic's advice for image prompts.
                ChatMessage::User { text, images } => {
                    for image in images {
                        push(
                            "user",
                            json!({"type": "image", "source": {
                                "type": "base64",
                                "media_type": image.mime_type,
                                "data": image.base64(),
                            }}),
                        );
                    }
                    // An empty text block is refused ("text content blocks must be
                    // non-empty"): a prompt of images alone has none.
                    if !text.is_empty() || images.is_empty() {
                        push("user", json!({"type": "text", "text": text}));
                    }
                }
                ChatMessage::Assistant { text, tool_calls } => {
                    if !text.is_empty() {
                        push("assistant", json!({"type": "text", "text": text}));
                    }
                    for call in tool_calls {
                        let input = call.arguments.clone().unwrap_or_else(|_| json!({}));
                        push(
                            "assistant",
                            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}),
                        );
                    }
                }
                ChatMessage::ToolResult {
                    call_id,
                    output,
                    is_error,
                    ..
                } => push(
                    "user",
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": output, "is_error": is_error}),
                ),
            }
        }
        let messages: Vec<Value> = messages
            .into_iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect();
        let mut body = json!({
            "model": request.model,
            "max_tokens": config.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            "messages": messages,
            "stream": true,
        });
        if let Some(system) = request.system {
            body["system"] = json!(system);
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
                .collect();
        }
        body
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::<Stream>::default()
    }
}

/// One streamed event, read without building a map per object: the members the loop does
/// not use are skipped; the rare events' payloads (and members whose type varies) stay
/// unparsed slices of the event ([`Raw`]), read only when used. `content_block_delta`, the
/// hot one, is typed all the way down.
#[derive(Deserialize)]
struct StreamEvent<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    index: Raw<'a>,
    #[serde(default, borrow)]
    delta: Option<EventDelta<'a>>,
    #[serde(default, borrow)]
    content_block: Raw<'a>,
    #[serde(default, borrow)]
    message: Raw<'a>,
    #[serde(default, borrow)]
    usage: Raw<'a>,
    #[serde(default, borrow)]
    error: Raw<'a>,
}

#[derive(Deserialize)]
struct EventDelta<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    text: Raw<'a>,
    #[serde(default, borrow)]
    thinking: Raw<'a>,
    #[serde(default, borrow)]
    partial_json: Raw<'a>,
    #[serde(default, borrow)]
    stop_reason: Raw<'a>,
}

enum Block {
    Text,
    Thinking,
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

/// One answer being read: the blocks still open, by index, and what the message said so
/// far.
#[derive(Default)]
struct Stream {
    blocks: Vec<(u64, Block)>,
    tool_calls: Vec<ToolCall>,
    input_tokens: Option<u64>,
    /// `cache_read_input_tokens`: read from the prompt cache, not in `input_tokens`.
    cache_read: u64,
    /// `cache_creation_input_tokens`: written to the cache, not in `input_tokens` either.
    cache_written: u64,
    output_tokens: Option<u64>,
    stop_reason: Option<String>,
}

impl Decoder for Stream {
    fn event(
        &mut self,
        event: &Event,
        on_delta: &mut (dyn FnMut(Delta) + Send),
    ) -> Result<Flow, ProviderError> {
        let Some(data) = parse::<StreamEvent>(&event.data) else {
            return Ok(Flow::Skipped);
        };
        let index = data
            .index
            .and_then(|raw| raw.get().parse::<u64>().ok())
            .unwrap_or(0);
        match data.kind.as_deref().unwrap_or_default() {
            "message_start" => {
                let message = raw_value(data.message);
                let usage = message.as_ref().and_then(|m| m.get("usage"));
                let count = |name: &str| usage.and_then(|u| u.get(name)).and_then(Value::as_u64);
                self.input_tokens = count("input_tokens");
                self.cache_read = count("cache_read_input_tokens").unwrap_or(0);
                self.cache_written = count("cache_creation_input_tokens").unwrap_or(0);
            }
            "content_block_start" => {
                let block = raw_value(data.content_block).unwrap_or(Value::Null);
                let started = match block["type"].as_str().unwrap_or_default() {
                    "text" => Block::Text,
                    "thinking" => Block::Thinking,
                    "tool_use" => Block::ToolUse {
                        id: block["id"].as_str().unwrap_or_default().to_owned(),
                        name: block["name"].as_str().unwrap_or_default().to_owned(),
                        json: String::new(),
                    },
                    _ => Block::Other,
                };
                // A text block may open with its first text already in it.
                if let Some(text) = block["text"].as_str().filter(|t| !t.is_empty()) {
                    on_delta(Delta::Text(text.to_owned()));
                }
                self.blocks.push((index, started));
            }
            "content_block_delta" => {
                let Some(delta) = data.delta else {
                    return Ok(Flow::More);
                };
                let block = self
                    .blocks
                    .iter_mut()
                    .rev()
                    .find(|(i, _)| *i == index)
                    .map(|(_, b)| b);
                match delta.kind.as_deref().unwrap_or_default() {
                    "text_delta" => {
                        if let Some(text) = raw_text(delta.text) {
                            on_delta(Delta::Text(text));
                        }
                    }
                    "thinking_delta" => {
                        if let Some(text) = raw_text(delta.thinking) {
                            on_delta(Delta::Thought(text));
                        }
                    }
                    "input_json_delta" => {
                        if let (Some(Block::ToolUse { json, .. }), Some(part)) =
                            (block, raw_text(delta.partial_json))
                        {
                            json.push_str(&part);
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(at) = self.blocks.iter().rposition(|(i, _)| *i == index)
                    && let (_, Block::ToolUse { id, name, json }) = self.blocks.remove(at)
                {
                    self.tool_calls.push(ToolCall::new(id, name, json));
                }
            }
            "message_delta" => {
                if let Some(reason) = data.delta.and_then(|d| raw_text(d.stop_reason)) {
                    self.stop_reason = Some(reason);
                }
                if let Some(n) = raw_value(data.usage)
                    .as_ref()
                    .and_then(|u| u.get("output_tokens"))
                    .and_then(Value::as_u64)
                {
                    self.output_tokens = Some(n);
                }
            }
            "message_stop" => return Ok(Flow::End),
            "error" => {
                let error = raw_value(data.error).unwrap_or(Value::Null);
                let message = error["message"].as_str().unwrap_or("unknown error");
                let kind = error["type"].as_str().unwrap_or("error");
                return Err(mid_stream(Some(kind), message));
            }
            _ => {}
        }
        Ok(Flow::More)
    }

    fn finish(self: Box<Self>) -> StepResult {
        let mut tool_calls = self.tool_calls;
        // Blocks the stream never closed still count: the model did ask for them.
        for (_, block) in self.blocks {
            if let Block::ToolUse { id, name, json } = block {
                tool_calls.push(ToolCall::new(id, name, json));
            }
        }
        // Anthropic counts cache reads and writes apart from `input_tokens`; the model read
        // them all, so they are input here (as OpenAI's `prompt_tokens` counts them).
        let usage = (self.input_tokens.is_some() || self.output_tokens.is_some()).then(|| Usage {
            input_tokens: self.input_tokens.unwrap_or(0) + self.cache_read + self.cache_written,
            output_tokens: self.output_tokens.unwrap_or(0),
        });
        StepResult {
            tool_calls,
            usage,
            cached_input_tokens: self.cache_read,
            finish_reason: self.stop_reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ChatMessage;

    #[test]
    fn consecutive_roles_merge_and_tool_results_are_user_blocks() {
        let call = ToolCall::new("t1".into(), "bash".into(), r#"{"command":"ls"}"#.into());
        let messages = vec![
            ChatMessage::user("hi"),
            ChatMessage::Assistant {
                text: "".into(),
                tool_calls: vec![call],
            },
            ChatMessage::ToolResult {
                call_id: "t1".into(),
                name: "bash".into(),
                output: "a\nb".into(),
                is_error: false,
            },
            ChatMessage::user("more"),
        ];
        let body = Anthropic.body(
            &ChatRequest {
                model: "m",
                system: Some("sys"),
                messages: &messages,
                tools: &[],
            },
            &ProviderConfig::default(),
        );
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        assert_eq!(
            body["messages"][1]["content"][0]["input"],
            json!({"command": "ls"})
        );
        assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
        assert_eq!(body["messages"][2]["content"][1]["text"], "more");
        assert_eq!(body["system"], "sys");
        assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
    }
}

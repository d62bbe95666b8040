//! Anthropic's Messages API with `stream: true`: text, thinking and `tool_use` blocks, the
//! last assembled from `input_json_delta` pieces.

use super::sse::SseReader;
use super::{
    ChatMessage, ChatRequest, Delta, ErrorKind, Pace, ProviderError, StepResult, ToolCall,
    no_events, stream_error,
};
use crate::config::ProviderConfig;
use crate::store::Usage;
use serde_json::{Value, json};

/// Anthropic requires `max_tokens`; this is used when the config names none.
const DEFAULT_MAX_TOKENS: u32 = 8192;

pub(super) fn request_body(request: &ChatRequest<'_>, config: &ProviderConfig) -> Value {
    // Roles must alternate, so consecutive messages of one role (a user prompt after tool
    // results, say) are merged into one message with several content blocks.
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, block: Value| match messages.last_mut() {
        Some((last, blocks)) if *last == role => blocks.push(block),
        _ => messages.push((role, vec![block])),
    };
    for message in request.messages {
        match message {
            ChatMessage::User { text } => push("user", json!({"type": "text", "text": text})),
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

pub(super) async fn read_stream(
    events: &mut SseReader,
    on_delta: &mut (dyn FnMut(Delta) + Send),
    pace: &dyn Pace,
) -> Result<StepResult, ProviderError> {
    let mut blocks: Vec<(u64, Block)> = Vec::new();
    let mut tool_calls = Vec::new();
    let mut input_tokens = None;
    let mut output_tokens = None;
    let mut stop_reason = None;
    let mut saw_event = false;
    while let Some(event) = events.next_paced(pace).await.map_err(stream_error)? {
        let Ok(data) = serde_json::from_str::<Value>(&event.data) else {
            tracing::warn!("provider sent an event that is not JSON; skipped");
            continue;
        };
        saw_event = true;
        let index = data["index"].as_u64().unwrap_or(0);
        match data["type"].as_str().unwrap_or_default() {
            "message_start" => {
                input_tokens = data
                    .pointer("/message/usage/input_tokens")
                    .and_then(Value::as_u64);
            }
            "content_block_start" => {
                let block = &data["content_block"];
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
                blocks.push((index, started));
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                let block = blocks
                    .iter_mut()
                    .rev()
                    .find(|(i, _)| *i == index)
                    .map(|(_, b)| b);
                match delta["type"].as_str().unwrap_or_default() {
                    "text_delta" => {
                        if let Some(text) = delta["text"].as_str() {
                            on_delta(Delta::Text(text.to_owned()));
                        }
                    }
                    "thinking_delta" => {
                        if let Some(text) = delta["thinking"].as_str() {
                            on_delta(Delta::Thought(text.to_owned()));
                        }
                    }
                    "input_json_delta" => {
                        if let (Some(Block::ToolUse { json, .. }), Some(part)) =
                            (block, delta["partial_json"].as_str())
                        {
                            json.push_str(part);
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(at) = blocks.iter().rposition(|(i, _)| *i == index)
                    && let (_, Block::ToolUse { id, name, json }) = blocks.remove(at)
                {
                    tool_calls.push(ToolCall::new(id, name, json));
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    stop_reason = Some(reason.to_owned());
                }
                if let Some(n) = data.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    output_tokens = Some(n);
                }
            }
            "message_stop" => break,
            "error" => {
                let message = data
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error");
                let kind = data
                    .pointer("/error/type")
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                return Err(ProviderError::new(
                    ErrorKind::Provider,
                    format!("the provider reported an error mid-stream ({kind}): {message}"),
                ));
            }
            _ => {}
        }
    }
    if !saw_event {
        return Err(no_events());
    }
    // Blocks the stream never closed still count: the model did ask for them.
    for (_, block) in blocks {
        if let Block::ToolUse { id, name, json } = block {
            tool_calls.push(ToolCall::new(id, name, json));
        }
    }
    let usage = (input_tokens.is_some() || output_tokens.is_some()).then(|| Usage {
        input_tokens: input_tokens.unwrap_or(0),
        output_tokens: output_tokens.unwrap_or(0),
    });
    Ok(StepResult {
        tool_calls,
        usage,
        finish_reason: stop_reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ChatMessage;

    #[test]
    fn consecutive_roles_merge_and_tool_results_are_user_blocks() {
        let call = ToolCall::new("t1".into(), "bash".into(), r#"{"command":"ls"}"#.into());
        let messages = vec![
            ChatMessage::User { text: "hi".into() },
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
            ChatMessage::User {
                text: "more".into(),
            },
        ];
        let body = request_body(
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

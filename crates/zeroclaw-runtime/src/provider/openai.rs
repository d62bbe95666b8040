//! OpenAI-compatible Chat Completions with `stream: true` (OpenAI, Ollama, llama.cpp's
//! server, vLLM, OpenRouter). Lenient where those servers differ: a missing or empty
//! `finish_reason`, `reasoning_content` or `reasoning` for thoughts, tool calls without an
//! id, a malformed line (skipped), usage or not.

use super::sse::SseReader;
use super::{
    ChatMessage, ChatRequest, Delta, ErrorKind, Pace, ProviderError, StepResult, ToolCall,
    no_events, stream_error,
};
use crate::config::ProviderConfig;
use crate::store::Usage;
use serde::Deserialize;
use serde_json::{Value, json};

pub(super) fn request_body(request: &ChatRequest<'_>, config: &ProviderConfig) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = request.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in request.messages {
        messages.push(match message {
            ChatMessage::User { text } => json!({"role": "user", "content": text}),
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

/// One streamed chunk, read without building a map per object: the members the loop does
/// not use are skipped, and those whose type varies between servers stay `Value`s.
#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    choices: Option<Vec<Choice>>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    finish_reason: Option<Value>,
    #[serde(default)]
    delta: Option<ChunkDelta>,
    /// What a few servers send instead of `delta`.
    #[serde(default)]
    message: Option<ChunkDelta>,
}

#[derive(Deserialize)]
struct ChunkDelta {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    reasoning_content: Option<Value>,
    #[serde(default)]
    reasoning: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Value>,
}

fn non_empty_string(value: Option<Value>) -> Option<String> {
    match value {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    }
}

/// A tool call being assembled from deltas, keyed by its `index`.
#[derive(Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

pub(super) async fn read_stream(
    events: &mut SseReader,
    on_delta: &mut (dyn FnMut(Delta) + Send),
    pace: &dyn Pace,
) -> Result<StepResult, ProviderError> {
    let mut calls: Vec<(u64, PartialCall)> = Vec::new();
    let mut usage = None;
    let mut finish_reason = None;
    // A 200 whose body holds no chunk at all (an HTML page from a proxy, a non-streaming
    // server) is an error, not an empty answer.
    let mut saw_chunk = false;
    while let Some(event) = events.next_paced(pace).await.map_err(stream_error)? {
        let data = event.data.trim();
        if data == "[DONE]" {
            saw_chunk = true;
            break;
        }
        let chunk = match serde_json::from_str::<Chunk>(data) {
            Ok(chunk) => chunk,
            Err(_) if serde_json::from_str::<serde::de::IgnoredAny>(data).is_ok() => {
                tracing::warn!("provider sent a chunk of an unexpected shape; skipped");
                continue;
            }
            Err(_) => {
                tracing::warn!("provider sent a line that is not JSON; skipped");
                continue;
            }
        };
        saw_chunk = true;
        if let Some(error) = chunk.error {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| error.to_string());
            return Err(ProviderError::new(
                ErrorKind::Provider,
                format!("the provider reported an error mid-stream: {message}"),
            ));
        }
        if let Some(u) = chunk.usage.filter(Value::is_object) {
            usage = Some(Usage {
                input_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
                output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
            });
        }
        let Some(choice) = chunk.choices.and_then(|c| c.into_iter().next()) else {
            continue;
        };
        if let Some(Value::String(reason)) = choice.finish_reason
            && !reason.is_empty()
        {
            finish_reason = Some(reason);
        }
        let Some(delta) = choice.delta.or(choice.message) else {
            continue;
        };
        // One or the other: vLLM sends both, with the same text, while it renames the field.
        if let Some(text) = [delta.reasoning_content, delta.reasoning]
            .into_iter()
            .find_map(non_empty_string)
        {
            on_delta(Delta::Thought(text));
        }
        if let Some(text) = non_empty_string(delta.content) {
            on_delta(Delta::Text(text));
        }
        for (position, call) in delta
            .tool_calls
            .as_ref()
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let index = call["index"].as_u64().unwrap_or(position as u64);
            let at = match calls.iter().position(|(i, _)| *i == index) {
                Some(at) => at,
                None => {
                    calls.push((index, PartialCall::default()));
                    calls.len() - 1
                }
            };
            let slot = &mut calls[at].1;
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
    if !saw_chunk {
        return Err(no_events());
    }
    calls.sort_by_key(|(index, _)| *index);
    let tool_calls = calls
        .into_iter()
        .filter(|(_, c)| !c.name.is_empty())
        .map(|(_, c)| {
            // Ids must be unique across the session, not just the step: clients track tool
            // calls by id, and history pairs each call with its result by id.
            let id =
                c.id.unwrap_or_else(|| format!("call_{}", uuid::Uuid::new_v4().simple()));
            ToolCall::new(id, c.name, c.arguments)
        })
        .collect();
    Ok(StepResult {
        tool_calls,
        usage,
        finish_reason,
    })
}

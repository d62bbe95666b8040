//! A session's stored history, as `session/messages` returns it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What one stored message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum MessageKind {
    /// The user's prompt.
    User,
    /// The agent's answer (one model call's text).
    Assistant,
    /// The model's reasoning.
    Thought,
    ToolCall,
    ToolResult,
    /// What compaction wrote in place of older messages, which stay stored: the model is
    /// sent this text instead of them (`text`; `data.upTo` is the last message it folds).
    Summary,
    /// A turn that failed (the provider down, say): `text` is its error, as the prompt's
    /// answer gave it, so the session's history says what became of its last prompt. Never
    /// sent to the model.
    Error,
    /// A hook's run (`rawOutput`: the `hook_result` event's members). Never sent to the
    /// model as such: the context a `SessionStart` or `UserPromptSubmit` hook added goes
    /// with the next prompt.
    Hook,
    /// The agent's plan as its `todo_write` call set it (`rawOutput`: `{entries}`, the
    /// `plan` event's). Never sent to the model (the call and its result are).
    Plan,
}

impl MessageKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MessageKind::User => "user",
            MessageKind::Assistant => "assistant",
            MessageKind::Thought => "thought",
            MessageKind::ToolCall => "tool_call",
            MessageKind::ToolResult => "tool_result",
            MessageKind::Summary => "summary",
            MessageKind::Error => "error",
            MessageKind::Hook => "hook",
            MessageKind::Plan => "plan",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "user" => MessageKind::User,
            "assistant" => MessageKind::Assistant,
            "thought" => MessageKind::Thought,
            "tool_call" => MessageKind::ToolCall,
            "tool_result" => MessageKind::ToolResult,
            "summary" => MessageKind::Summary,
            "error" => MessageKind::Error,
            "hook" => MessageKind::Hook,
            "plan" => MessageKind::Plan,
            _ => return None,
        })
    }
}

/// One stored message. Which members are present depends on `kind`: `text` for the text
/// kinds; `toolCallId`, `name` and `rawInput` for a tool call; `toolCallId`, `name`,
/// `rawOutput` and `isError` for a tool result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Message {
    /// Increasing within a session: the `before` of the next page.
    pub id: i64,
    pub turn_id: Option<String>,
    pub kind: MessageKind,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_output: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// The turn was cancelled while this message was being produced.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// Too large for one page on its own: `text` was cut, and a `rawInput`/`rawOutput`
    /// too large was replaced by a string saying its size.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// A `session/rewind` dropped it from the conversation the model sees (listed only
    /// with `session/messages {includeHidden: true}`; `session/unrewind` brings it back).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
    /// A prompt's images (their bytes: `session/attachment`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<crate::methods::ImageRef>,
}

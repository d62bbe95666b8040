//! LLM providers: one model call ("step") streams deltas and ends with the tool calls the
//! model asked for. Each provider speaks its real wire format over HTTP: one `Wire`
//! per format (`openai.rs`, `anthropic.rs`), the rest shared (`client.rs`, `sse.rs`);
//! `chain.rs` routes a call to the `[[fallback]]` providers when the configured one fails.

mod anthropic;
pub mod chain;
mod client;
mod error;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod http_tests;
pub mod images;
mod openai;
pub mod sse;
pub mod url;
pub mod window;
mod wire;

pub use client::{LastCall, Provider, Retry};
pub use error::{ErrorKind, ProviderError};

use crate::config::ProviderKind;
use crate::store::Usage;
use crate::tools::ToolDef;
use serde_json::{Value, json};
use std::pin::Pin;

/// The wire format `kind` selects.
fn for_kind(kind: ProviderKind) -> &'static dyn wire::Wire {
    match kind {
        ProviderKind::Openai => &openai::OpenAi,
        ProviderKind::Anthropic => &anthropic::Anthropic,
    }
}

/// A provider-neutral conversation message.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    /// The user's words, and the images a prompt carried (`prompt.rs`).
    User {
        text: String,
        images: Vec<crate::prompt::Image>,
    },
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    ToolResult {
        call_id: String,
        name: String,
        output: String,
        is_error: bool,
    },
}

impl ChatMessage {
    /// A user message of text alone.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User {
            text: text.into(),
            images: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as the model sent them; `arguments` is their parse, or an error.
    pub raw_arguments: String,
    pub arguments: Result<Value, String>,
}

impl ToolCall {
    pub fn new(id: String, name: String, raw_arguments: String) -> Self {
        let arguments = if raw_arguments.trim().is_empty() {
            Ok(json!({}))
        } else {
            serde_json::from_str::<Value>(&raw_arguments)
                .map_err(|e| format!("the arguments are not valid JSON ({e}): {raw_arguments}"))
        };
        Self {
            id,
            name,
            raw_arguments,
            arguments,
        }
    }

    /// The input as shown to clients: the parsed object, or the raw text when unparsable.
    pub fn raw_input(&self) -> Value {
        match &self.arguments {
            Ok(v) => v.clone(),
            Err(_) => Value::String(self.raw_arguments.clone()),
        }
    }
}

pub struct ChatRequest<'a> {
    pub model: &'a str,
    pub system: Option<&'a str>,
    pub messages: &'a [ChatMessage],
    pub tools: &'a [ToolDef],
}

/// Lets whoever consumes a stream slow its reading down: asked between events, it returns
/// what to await first when the consumer is behind (clients not keeping up with the
/// events), and `None` otherwise.
pub trait Pace: Sync {
    fn pace(&self) -> Option<Pin<Box<dyn Future<Output = ()> + Send + '_>>>;
}

/// Reads as fast as the provider sends.
#[cfg(test)]
pub struct Unpaced;

#[cfg(test)]
impl Pace for Unpaced {
    fn pace(&self) -> Option<Pin<Box<dyn Future<Output = ()> + Send + '_>>> {
        None
    }
}

/// Streamed as they arrive.
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    Text(String),
    Thought(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct StepResult {
    pub tool_calls: Vec<ToolCall>,
    /// Input tokens count every token the model read, the cached ones included.
    pub usage: Option<Usage>,
    /// How many of `usage`'s input tokens the provider read from its prompt cache.
    pub cached_input_tokens: u64,
    /// The model's own reason for stopping, as it said it (`stop`, `end_turn`, `length`, ...).
    pub finish_reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_arguments_parse_or_explain() {
        assert_eq!(
            ToolCall::new("a".into(), "bash".into(), "".into()).arguments,
            Ok(json!({}))
        );
        let bad = ToolCall::new("a".into(), "bash".into(), "{\"x\":".into());
        assert!(bad.arguments.unwrap_err().contains("not valid JSON"));
    }
}

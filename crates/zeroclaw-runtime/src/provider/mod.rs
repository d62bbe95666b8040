//! LLM providers: one model call ("step") streams deltas and ends with the tool calls the
//! model asked for. Each provider speaks its real wire format over HTTP.

mod anthropic;
mod openai;
pub mod sse;

use crate::config::{ProviderConfig, ProviderKind};
use crate::store::Usage;
use crate::tools::ToolDef;
use serde_json::{Value, json};
use std::pin::Pin;
use std::time::Duration;
use zeroclaw_rpc::RpcError;

/// A provider-neutral conversation message.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    User {
        text: String,
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
pub struct Unpaced;

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
    pub usage: Option<Usage>,
    /// The model's own reason for stopping, as it said it (`stop`, `end_turn`, `length`, ...).
    pub finish_reason: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Unreachable,
    MissingKey,
    Auth,
    ModelNotFound,
    RateLimited,
    Http,
    Timeout,
    Stream,
    Provider,
}

impl ErrorKind {
    fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Unreachable => "unreachable",
            ErrorKind::MissingKey => "missing_api_key",
            ErrorKind::Auth => "auth",
            ErrorKind::ModelNotFound => "model_not_found",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::Http => "http",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Stream => "stream",
            ErrorKind::Provider => "provider",
        }
    }
}

/// What failed, and how to fix it, in words a user can act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    pub kind: ErrorKind,
    pub message: String,
    pub status: Option<u16>,
}

impl ProviderError {
    fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            status: None,
        }
    }

    /// The `-32004` error for a call made with `model` (a session's own model may differ
    /// from the configured default).
    pub fn to_rpc(&self, provider: &Provider, model: &str, turn_id: Option<&str>) -> RpcError {
        let mut data = json!({
            "kind": self.kind.as_str(),
            "provider": match provider.config.kind { ProviderKind::Openai => "openai", ProviderKind::Anthropic => "anthropic" },
            "baseUrl": provider.config.base_url,
            "model": model,
        });
        if let Some(status) = self.status {
            data["status"] = json!(status);
        }
        if let Some(turn_id) = turn_id {
            data["turnId"] = json!(turn_id);
        }
        RpcError::new(
            zeroclaw_protocol::codes::PROVIDER_ERROR,
            self.message.clone(),
        )
        .with_data(data)
    }
}

/// The configured provider: its settings, an HTTP client, and the key read at start-up.
pub struct Provider {
    pub config: ProviderConfig,
    http: reqwest::Client,
    api_key: Option<String>,
}

impl std::fmt::Debug for Provider {
    // Hand-written so the key can never reach a log line through `{:?}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("kind", &self.config.kind)
            .field("base_url", &self.config.base_url)
            .field("model", &self.config.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

/// A model call whose stream is open.
pub struct OpenStep {
    kind: ProviderKind,
    events: sse::SseReader,
}

impl OpenStep {
    /// Reads the stream to its end. Deltas go to `on_delta` as they arrive, and `pace` is
    /// asked before each event; dropping this future aborts the HTTP stream (that is how
    /// a cancel stops the provider).
    pub async fn read(
        mut self,
        on_delta: &mut (dyn FnMut(Delta) + Send),
        pace: &dyn Pace,
    ) -> Result<StepResult, ProviderError> {
        match self.kind {
            ProviderKind::Openai => openai::read_stream(&mut self.events, on_delta, pace).await,
            ProviderKind::Anthropic => {
                anthropic::read_stream(&mut self.events, on_delta, pace).await
            }
        }
    }
}

/// Exponential backoff before retry `n` (0-based), unless the server named a delay.
fn backoff(attempt: u32, retry_after: Option<Duration>) -> Duration {
    retry_after
        .unwrap_or_else(|| Duration::from_millis(250) * 2u32.saturating_pow(attempt))
        .min(Duration::from_secs(10))
}

impl Provider {
    /// Reads the key from the variable `config.api_key_env` names, once, here.
    pub fn new(config: ProviderConfig) -> Result<Self, String> {
        let api_key = config
            .api_key_env
            .as_deref()
            .and_then(|name| std::env::var(name).ok());
        Self::with_api_key(config, api_key)
    }

    /// Like [`Provider::new`] with the key given instead of read from the environment, so
    /// tests need not mutate the process environment (`set_var` is `unsafe` in edition 2024
    /// and races with every other test thread). A blank key counts as no key.
    #[doc(hidden)]
    pub fn with_api_key(config: ProviderConfig, api_key: Option<String>) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(config.connect_timeout_secs.max(1)))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let api_key = api_key.filter(|key| !key.trim().is_empty());
        Ok(Self {
            config,
            http,
            api_key,
        })
    }

    /// Starts one model call: sends the request (with retries) and returns once the
    /// provider has accepted it and its stream is open. Nothing has been shown yet, so a
    /// failure here leaves no trace of the call.
    pub async fn open(&self, request: &ChatRequest<'_>) -> Result<OpenStep, ProviderError> {
        if let (Some(var), None) = (&self.config.api_key_env, &self.api_key) {
            return Err(ProviderError::new(
                ErrorKind::MissingKey,
                format!(
                    "the API key variable {var} (provider.api_key_env) is not set in the daemon's environment; export it and restart the daemon"
                ),
            ));
        }
        let (url, body) = match self.config.kind {
            ProviderKind::Openai => (
                format!("{}/chat/completions", self.base()),
                openai::request_body(request, &self.config),
            ),
            ProviderKind::Anthropic => (
                format!("{}/messages", self.base()),
                anthropic::request_body(request, &self.config),
            ),
        };
        let response = self.send(&url, &body, request.model).await?;
        let idle = Duration::from_secs(self.config.idle_timeout_secs.max(1));
        Ok(OpenStep {
            kind: self.config.kind,
            events: sse::SseReader::new(Box::pin(response.bytes_stream()), idle),
        })
    }

    fn base(&self) -> &str {
        self.config.base_url.trim_end_matches('/')
    }

    /// POSTs the request, retrying connect failures, 429 and 5xx with backoff. Only this
    /// phase retries: once the stream has started, deltas may already have been shown.
    async fn send(
        &self,
        url: &str,
        body: &Value,
        model: &str,
    ) -> Result<reqwest::Response, ProviderError> {
        let mut attempt = 0;
        loop {
            let mut request = self.http.post(url).json(body);
            request = match self.config.kind {
                ProviderKind::Openai => match &self.api_key {
                    Some(key) => request.bearer_auth(key),
                    None => request,
                },
                ProviderKind::Anthropic => {
                    let request = request.header("anthropic-version", "2023-06-01");
                    match &self.api_key {
                        Some(key) => request.header("x-api-key", key),
                        None => request,
                    }
                }
            };
            // The idle limit also bounds the wait for the response head, so a server that
            // accepts and never answers cannot hold a turn forever.
            let idle = Duration::from_secs(self.config.idle_timeout_secs.max(1));
            let sent = match tokio::time::timeout(idle, request.send()).await {
                Ok(sent) => sent,
                Err(_) => {
                    return Err(ProviderError::new(
                        ErrorKind::Timeout,
                        format!(
                            "the provider at {} accepted the request but sent no answer for {}s (provider.idle_timeout_secs)",
                            self.config.base_url,
                            idle.as_secs()
                        ),
                    ));
                }
            };
            let failure = match sent {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status().as_u16();
                    let retry_after = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(Duration::from_secs);
                    let text = response.text().await.unwrap_or_default();
                    let error = self.status_error(status, &text, model);
                    if !(status == 429 || status >= 500) {
                        return Err(error);
                    }
                    (error, retry_after)
                }
                Err(e) => (self.transport_error(&e), None),
            };
            let (error, retry_after) = failure;
            if attempt >= self.config.max_retries {
                return Err(error);
            }
            let delay = backoff(attempt, retry_after);
            tracing::warn!(attempt = attempt + 1, delay = ?delay, error = %error, "provider call failed; retrying");
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    fn transport_error(&self, e: &reqwest::Error) -> ProviderError {
        let base = &self.config.base_url;
        if e.is_timeout() {
            return ProviderError::new(
                ErrorKind::Timeout,
                format!("the provider at {base} did not answer in time: {e}"),
            );
        }
        ProviderError::new(
            ErrorKind::Unreachable,
            format!(
                "cannot reach the provider at {base} ({}); is the server running? For Ollama run `ollama serve`, or set provider.base_url in config.toml",
                error_chain(e)
            ),
        )
    }

    fn status_error(&self, status: u16, body: &str, model: &str) -> ProviderError {
        let detail = excerpt(body);
        let base = &self.config.base_url;
        let (kind, message) = match status {
            401 | 403 => (
                ErrorKind::Auth,
                match &self.config.api_key_env {
                    Some(var) => format!(
                        "the provider at {base} rejected the API key (HTTP {status}: {detail}); check the key in {var}"
                    ),
                    None => format!(
                        "the provider at {base} needs an API key (HTTP {status}: {detail}); set provider.api_key_env to the variable that holds it"
                    ),
                },
            ),
            404 => (
                ErrorKind::ModelNotFound,
                format!(
                    "the provider at {base} does not know model {model:?} (HTTP 404: {detail}); check the model (provider.model, or the one given to session/new) and provider.base_url (for Ollama: `ollama pull {model}`)"
                ),
            ),
            429 => (
                ErrorKind::RateLimited,
                format!(
                    "the provider at {base} is rate limiting requests (HTTP 429: {detail}); wait and try again"
                ),
            ),
            _ => (
                ErrorKind::Http,
                format!("the provider at {base} answered HTTP {status}: {detail}"),
            ),
        };
        ProviderError {
            kind,
            message,
            status: Some(status),
        }
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The start of an error body, enough to tell what went wrong without flooding a message.
fn excerpt(body: &str) -> String {
    let body = body.trim();
    let message = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    let text = message.unwrap_or_else(|| body.to_owned());
    match text.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None if text.is_empty() => "no details".into(),
        None => text,
    }
}

/// A successful answer whose body held no streaming event at all.
fn no_events() -> ProviderError {
    ProviderError::new(
        ErrorKind::Stream,
        "the provider answered, but its body held no streaming events; check that provider.base_url is the API's base (for OpenAI-compatible servers it usually ends in /v1) and that provider.kind matches the server",
    )
}

/// Maps an SSE read failure to a provider error.
fn stream_error(e: sse::SseError) -> ProviderError {
    match e {
        sse::SseError::Idle(d) => ProviderError::new(
            ErrorKind::Timeout,
            format!(
                "the provider stopped sending for {}s in the middle of its answer (provider.idle_timeout_secs)",
                d.as_secs()
            ),
        ),
        sse::SseError::Body(e) => ProviderError::new(
            ErrorKind::Stream,
            format!("the provider's stream broke off: {e}"),
        ),
        sse::SseError::TooLarge => ProviderError::new(
            ErrorKind::Stream,
            "the provider sent one event larger than 16 MiB",
        ),
    }
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

    #[test]
    fn error_bodies_are_excerpted_from_their_message() {
        assert_eq!(
            excerpt(r#"{"error":{"message":"nope","type":"x"}}"#),
            "nope"
        );
        assert_eq!(
            excerpt(r#"{"error":"model \"x\" not found"}"#),
            "model \"x\" not found"
        );
        assert_eq!(excerpt(""), "no details");
        assert!(excerpt(&"x".repeat(1000)).ends_with('…'));
    }

    #[test]
    fn backoff_doubles_and_honours_retry_after() {
        assert_eq!(backoff(0, None), Duration::from_millis(250));
        assert_eq!(backoff(2, None), Duration::from_secs(1));
        assert_eq!(
            backoff(0, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(backoff(30, None), Duration::from_secs(10));
    }

    #[test]
    fn debug_output_never_contains_the_key() {
        let mut provider = Provider::new(ProviderConfig::default()).unwrap();
        provider.api_key = Some("sk-secret-123".into());
        assert!(!format!("{provider:?}").contains("sk-secret"));
    }
}

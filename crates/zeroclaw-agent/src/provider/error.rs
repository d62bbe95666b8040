//! What can go wrong with a model call, in words a user can act on. Plain domain data: how
//! an error is told on the wire is the methods' business (`methods::errors`).

use super::sse::SseError;
use serde_json::Value;

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
    /// The request is longer than the model's context window.
    ContextLength,
}

impl ErrorKind {
    /// Its name as metrics label it (`zeroclaw_provider_errors_total{kind}`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Unreachable => "unreachable",
            ErrorKind::MissingKey => "missing_key",
            ErrorKind::Auth => "auth",
            ErrorKind::ModelNotFound => "model_not_found",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::Http => "http",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Stream => "stream",
            ErrorKind::Provider => "provider",
            ErrorKind::ContextLength => "context_length",
        }
    }
}

/// What failed, and how to fix it, in words a user can act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    pub kind: ErrorKind,
    pub message: String,
    /// The HTTP status of a refused request.
    pub status: Option<u16>,
}

impl ProviderError {
    pub(super) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            status: None,
        }
    }
}

impl ProviderError {
    /// What failed in a few words, as `provider_retry` and `provider_fallback` events and
    /// the run records say it: `HTTP <status> <reason phrase>` for a refusal, else what
    /// kind of failure. Never the body, a URL or a key: those stay in `message`.
    pub fn reason(&self) -> String {
        if let Some(status) = self.status {
            let phrase = reqwest::StatusCode::from_u16(status)
                .ok()
                .and_then(|code| code.canonical_reason());
            return match phrase {
                Some(phrase) => format!("HTTP {status} {phrase}"),
                None => format!("HTTP {status}"),
            };
        }
        match self.kind {
            ErrorKind::Unreachable => "cannot connect",
            ErrorKind::MissingKey => "API key variable not set",
            ErrorKind::Auth => "API key rejected",
            ErrorKind::ModelNotFound => "model not found",
            ErrorKind::RateLimited => "rate limited",
            ErrorKind::Http => "HTTP error",
            ErrorKind::Timeout => "timed out",
            ErrorKind::Stream => "stream failed",
            ErrorKind::Provider => "error reported mid-stream",
            ErrorKind::ContextLength => "conversation too long for the model",
        }
        .to_owned()
    }
}

/// The configured variable that should hold the key is not set.
pub(super) fn missing_key(var: &str) -> ProviderError {
    ProviderError::new(
        ErrorKind::MissingKey,
        format!(
            "the API key variable {var} (provider.api_key_env) is not set in the daemon's environment; export it and restart the daemon"
        ),
    )
}

/// The server accepted the connection but sent no response head within `idle_secs`.
pub(super) fn no_answer(base: &str, idle_secs: u64) -> ProviderError {
    ProviderError::new(
        ErrorKind::Timeout,
        format!(
            "the provider at {base} accepted the request but sent no answer for {idle_secs}s (provider.idle_timeout_secs)"
        ),
    )
}

/// The request did not reach the server, or its answer did not come back in time.
pub(super) fn transport(base: &str, e: &reqwest::Error) -> ProviderError {
    if e.is_timeout() {
        return ProviderError::new(
            ErrorKind::Timeout,
            super::url::scrub(&format!(
                "the provider at {base} did not answer in time: {e}"
            )),
        );
    }
    ProviderError::new(
        ErrorKind::Unreachable,
        super::url::scrub(&format!(
            "cannot reach the provider at {base} ({}); is the server running? For Ollama run `ollama serve`, or set provider.base_url in config.toml",
            error_chain(e)
        )),
    )
}

/// The server refused the request with `status`; `detail` is what its body said.
pub(super) fn status(
    status: u16,
    detail: &str,
    base: &str,
    api_key_env: Option<&str>,
    model: &str,
) -> ProviderError {
    let (kind, message) = match status {
        400 | 413 if says_context_is_full(detail) => (
            ErrorKind::ContextLength,
            format!(
                "the conversation is longer than model {model:?} can read (HTTP {status}: {detail}); compact the session (session/compact, /compact in zerocode) or set provider.context_window to the model's real context size"
            ),
        ),
        401 | 403 => (
            ErrorKind::Auth,
            match api_key_env {
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

/// The provider said, inside its stream, that the call failed: `message`, of the type
/// `kind` when it names one.
pub(super) fn mid_stream(kind: Option<&str>, message: &str) -> ProviderError {
    let error_kind = if says_context_is_full(message) || kind.is_some_and(says_context_is_full) {
        ErrorKind::ContextLength
    } else {
        ErrorKind::Provider
    };
    let message = match kind {
        Some(kind) => format!("the provider reported an error mid-stream ({kind}): {message}"),
        None => format!("the provider reported an error mid-stream: {message}"),
    };
    ProviderError::new(error_kind, message)
}

/// Whether an error's text says the request passed the model's context window, in the
/// words of OpenAI (`context_length_exceeded`, "maximum context length"), Anthropic
/// ("prompt is too long"), llama.cpp (`exceed_context_size_error`, "exceeds the available
/// context size"), vLLM and Ollama.
pub fn says_context_is_full(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    [
        "context_length_exceeded",
        "context length",
        "maximum context",
        "context window",
        "exceed_context_size",
        "context size",
        "prompt is too long",
        "too many tokens",
        "input is too long",
    ]
    .iter()
    .any(|needle| text.contains(needle))
}

/// A successful answer whose body held no streaming event at all.
pub(super) fn no_events() -> ProviderError {
    ProviderError::new(
        ErrorKind::Stream,
        "the provider answered, but its body held no streaming events; check that provider.base_url is the API's base (for OpenAI-compatible servers it usually ends in /v1) and that provider.kind matches the server",
    )
}

/// Maps an SSE read failure to a provider error.
pub(super) fn stream(e: SseError) -> ProviderError {
    match e {
        SseError::Idle(d) => ProviderError::new(
            ErrorKind::Timeout,
            format!(
                "the provider stopped sending for {}s in the middle of its answer (provider.idle_timeout_secs)",
                d.as_secs()
            ),
        ),
        SseError::Body(e) => ProviderError::new(
            ErrorKind::Stream,
            format!("the provider's stream broke off: {}", error_chain(&e)),
        ),
        SseError::TooLarge => ProviderError::new(
            ErrorKind::Stream,
            "the provider sent one event larger than 16 MiB",
        ),
    }
}

/// An error with its causes: reqwest's own text is often only "error sending request".
pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The start of an error body, enough to tell what went wrong without flooding a message:
/// its `error.message` (OpenAI, Anthropic), `error` (Ollama) or `message` when it has one.
pub(super) fn excerpt(body: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_is_the_status_or_the_kind_never_the_body() {
        let refused = status(429, "secret body text", "http://x", None, "m");
        assert_eq!(refused.reason(), "HTTP 429 Too Many Requests");
        assert_eq!(
            status(503, "down", "http://x", None, "m").reason(),
            "HTTP 503 Service Unavailable"
        );
        assert_eq!(status(599, "", "http://x", None, "m").reason(), "HTTP 599");
        assert_eq!(no_answer("http://user:pw@x", 3).reason(), "timed out");
        assert_eq!(missing_key("K").reason(), "API key variable not set");
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
    fn context_length_refusals_are_recognised_in_each_providers_words() {
        for detail in [
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            "prompt is too long: 210000 tokens > 200000 maximum",
            "the request exceeds the available context size, try increasing it",
        ] {
            let e = status(400, detail, "http://x", None, "m");
            assert_eq!(e.kind, ErrorKind::ContextLength, "{detail}");
            assert!(e.message.contains("compact"), "{}", e.message);
        }
        assert_eq!(
            status(400, "bad tool schema", "http://x", None, "m").kind,
            ErrorKind::Http
        );
        assert_eq!(
            mid_stream(Some("exceed_context_size_error"), "x").kind,
            ErrorKind::ContextLength
        );
    }
}

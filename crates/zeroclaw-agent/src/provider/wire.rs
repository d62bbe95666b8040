//! A provider wire format is one [`Wire`]: how a [`ChatRequest`] goes out, and a
//! [`Decoder`] for the events that come back. Everything else (HTTP, retries, SSE framing,
//! pacing, the stall limits) is written once, in `client.rs` and `sse.rs`.
//!
//! Adding a provider is one file implementing [`Wire`] and one arm in `for_kind` (in
//! `mod.rs`, which composes the formats, so no format and this file reach each other).

use super::error::{ProviderError, excerpt};
use super::{ChatRequest, Delta, StepResult, sse};
use crate::config::ProviderConfig;
use reqwest::RequestBuilder;
use serde::Deserialize;
use serde_json::Value;

/// One provider's wire format. It holds no state: a call's state lives in its [`Decoder`].
pub trait Wire: Sync {
    /// The `provider.kind` that selects it, as errors name the provider.
    fn name(&self) -> &'static str;

    /// Where requests are POSTed, below `provider.base_url` (`/chat/completions`).
    fn path(&self) -> &'static str;

    /// Adds the headers the API wants: the key (when there is one) and any version.
    fn headers(&self, request: RequestBuilder, api_key: Option<&str>) -> RequestBuilder;

    /// The streaming request's body.
    fn body(&self, request: &ChatRequest<'_>, config: &ProviderConfig) -> Value;

    /// A reader for one answer's events.
    fn decoder(&self) -> Box<dyn Decoder>;

    /// What an HTTP error body says, short enough for a message.
    fn error_detail(&self, body: &str) -> String {
        excerpt(body)
    }
}

/// Reads one answer's events in order, keeping what spans events (tool calls being
/// assembled, usage, the stop reason). Called once per event, the hot path: it reads an
/// event into typed structs that skip what it does not use (docs/benchmarks.md, §5), and
/// it is a plain call, with no future to allocate.
pub trait Decoder: Send {
    /// Reads one event; its text and thoughts go to `on_delta` as they come. An error the
    /// provider reports inside its stream ends the call.
    fn event(
        &mut self,
        event: &sse::Event,
        on_delta: &mut (dyn FnMut(Delta) + Send),
    ) -> Result<Flow, ProviderError>;

    /// How the answer ended, once its last event has been read.
    fn finish(self: Box<Self>) -> StepResult;
}

/// What one event was to the answer.
pub enum Flow {
    /// Not an event of this format; a body of nothing else is an error.
    Skipped,
    /// Read; more follow.
    More,
    /// The answer's last event.
    End,
}

/// Reads an event's JSON into `T`. Servers differ and some send lines of their own, so one
/// that is not JSON, or not of `T`'s shape, is skipped (`None`, logged) rather than failing
/// the call.
pub(super) fn parse<'a, T: Deserialize<'a>>(data: &'a str) -> Option<T> {
    match serde_json::from_str(data) {
        Ok(parsed) => Some(parsed),
        Err(_) if serde_json::from_str::<serde::de::IgnoredAny>(data).is_ok() => {
            tracing::warn!("provider sent an event of an unexpected shape; skipped");
            None
        }
        Err(_) => {
            tracing::warn!("provider sent an event that is not JSON; skipped");
            None
        }
    }
}

/// A member of an event whose type varies between servers (or that the hot path rarely
/// reads), left unparsed: a borrowed slice of the event's text. A `Value` here cost a
/// tree built per chunk and 80-byte moves as serde passed the structs along, the most of
/// a chunk's CPU in a profile (docs/benchmarks.md, issue 36); the slice is read only when
/// its member is used.
pub(super) type Raw<'a> = Option<&'a serde_json::value::RawValue>;

/// The member as text, when it is a non-empty JSON string (escapes decoded).
pub(super) fn raw_text(raw: Raw<'_>) -> Option<String> {
    let raw = raw?.get();
    if !raw.starts_with('"') {
        return None;
    }
    serde_json::from_str::<String>(raw)
        .ok()
        .filter(|s| !s.is_empty())
}

/// The member as a `Value`, for the rare ones read whole (an error, usage, tool calls).
pub(super) fn raw_value(raw: Raw<'_>) -> Option<Value> {
    serde_json::from_str(raw?.get()).ok()
}

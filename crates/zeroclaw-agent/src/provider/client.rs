//! The configured provider: one HTTP client, the key read at start-up, and the machinery
//! every wire format shares (sending with retries, the wait for the response head, reading
//! the event stream with pacing and its idle limit).

use super::error::{self, ProviderError};
use super::sse::SseReader;
use super::wire::{Decoder, Flow, Wire};
use super::{ChatMessage, ChatRequest, Delta, Pace, StepResult};
use crate::config::{Config, ProviderConfig};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

/// The configured provider: its settings, an HTTP client, and the key read at start-up.
pub struct Provider {
    pub config: ProviderConfig,
    wire: &'static dyn Wire,
    http: reqwest::Client,
    api_key: Option<String>,
    /// `config.base_url` without credentials: what messages, logs and `status` show.
    shown_url: String,
    /// How the last model call went, for `status`.
    last_call: Mutex<Option<LastCall>>,
    /// `[[fallback]]`, in order: tried when this one fails before any output
    /// (`chain.rs`). Empty on a fallback itself.
    pub(super) fallbacks: Vec<Provider>,
}

/// A failed attempt that will be made again after `delay` (a `provider_retry` event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retry {
    /// 1 for the first retry.
    pub attempt: u32,
    pub delay: Duration,
    /// What failed ([`ProviderError::reason`]): a status or a few words, never a body.
    pub reason: String,
}

/// How a model call went: whether the provider accepted it, when, and its error if not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastCall {
    pub ok: bool,
    /// RFC 3339, UTC.
    pub at: String,
    pub error: Option<String>,
}

impl std::fmt::Debug for Provider {
    // Hand-written so the key can never reach a log line through `{:?}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("kind", &self.config.kind)
            .field("base_url", &self.shown_url)
            .field("model", &self.config.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

/// A model call whose stream is open.
pub struct OpenStep {
    events: SseReader,
    decoder: Box<dyn Decoder>,
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
        // A 200 whose body holds no event at all (an HTML page from a proxy, a
        // non-streaming server) is an error, not an empty answer.
        let mut saw_event = false;
        while let Some(event) = self.events.next_paced(pace).await.map_err(error::stream)? {
            let flow = self.decoder.event(&event, on_delta)?;
            self.events.recycle(event);
            match flow {
                Flow::Skipped => {}
                Flow::More => saw_event = true,
                Flow::End => {
                    saw_event = true;
                    break;
                }
            }
        }
        if !saw_event {
            return Err(error::no_events());
        }
        Ok(self.decoder.finish())
    }
}

/// Exponential backoff before retry `n` (0-based), unless the server named a delay.
fn backoff(attempt: u32, retry_after: Option<Duration>) -> Duration {
    retry_after
        .unwrap_or_else(|| Duration::from_millis(250) * 2u32.saturating_pow(attempt))
        .min(Duration::from_secs(10))
}

impl Provider {
    /// The configured provider with its `[[fallback]]` providers, each key read once, here.
    pub fn configured(config: &Config) -> Result<Self, String> {
        let mut provider = Self::new(config.provider.clone())?;
        for (i, fallback) in config.fallback.iter().enumerate() {
            let built = Self::new(fallback.clone()).map_err(|e| format!("fallback[{i}]: {e}"))?;
            provider.fallbacks.push(built);
        }
        Ok(provider)
    }

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
            wire: super::for_kind(config.kind),
            shown_url: super::url::without_credentials(&config.base_url),
            config,
            http,
            api_key,
            last_call: Mutex::new(None),
            fallbacks: Vec::new(),
        })
    }

    /// The name of its wire format (`openai`, `anthropic`), as errors name the provider.
    pub fn name(&self) -> &'static str {
        self.wire.name()
    }

    /// The uncalibrated estimate of `request`'s input tokens: its body as this provider
    /// would send it, at four bytes a token (see `window.rs`).
    pub fn estimate(&self, request: &ChatRequest<'_>) -> u64 {
        let messages = self.fit(request);
        let request = &ChatRequest {
            messages: &messages,
            ..*request
        };
        let body = self.wire.body(request, &self.config).to_string();
        // An image is read by its pixels, not its base64: counted at a typical figure.
        let (count, encoded) = request
            .messages
            .iter()
            .flat_map(|m| match m {
                ChatMessage::User { images, .. } => images.as_slice(),
                _ => &[],
            })
            .fold((0u64, 0usize), |(count, bytes), image| {
                (count + 1, bytes + image.data.len().div_ceil(3) * 4)
            });
        super::window::tokens_of(body.len().saturating_sub(encoded))
            + count * super::images::IMAGE_TOKENS
    }

    /// `request`'s messages with the images this provider is sent for its model
    /// (`images::fit`): decided here, per provider of the route, as its request is built.
    fn fit<'a>(&self, request: &ChatRequest<'a>) -> Cow<'a, [ChatMessage]> {
        let takes = super::images::takes_images(&self.config, request.model);
        super::images::fit(request.messages, takes)
    }

    /// Starts one model call: sends the request (with retries, each told to `on_retry`
    /// before its wait) and returns once the provider has accepted it and its stream is
    /// open. Nothing has been shown yet, so a failure here leaves no trace of the call.
    pub async fn open(
        &self,
        request: &ChatRequest<'_>,
        on_retry: &(dyn Fn(Retry) + Sync),
    ) -> Result<OpenStep, ProviderError> {
        let opened = self.try_open(request, on_retry).await;
        self.record(opened.as_ref().err());
        opened
    }

    async fn try_open(
        &self,
        request: &ChatRequest<'_>,
        on_retry: &(dyn Fn(Retry) + Sync),
    ) -> Result<OpenStep, ProviderError> {
        if let (Some(var), None) = (&self.config.api_key_env, &self.api_key) {
            return Err(error::missing_key(var));
        }
        let url = format!("{}{}", self.base(), self.wire.path());
        let messages = self.fit(request);
        let request = &ChatRequest {
            messages: &messages,
            ..*request
        };
        let body = self.wire.body(request, &self.config);
        let response = self.send(&url, &body, request.model, on_retry).await?;
        Ok(OpenStep {
            events: SseReader::new(Box::pin(response.bytes_stream()), self.idle()),
            decoder: self.wire.decoder(),
        })
    }

    /// Keeps how the call just made went, for [`Provider::last_call`].
    fn record(&self, error: Option<&ProviderError>) {
        let call = LastCall {
            ok: error.is_none(),
            at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            error: error.map(|e| e.message.clone()),
        };
        *self
            .last_call
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(call);
    }

    /// How the last model call went; `None` before the first.
    pub fn last_call(&self) -> Option<LastCall> {
        self.last_call
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The base URL as it may be shown: without credentials.
    pub fn shown_url(&self) -> &str {
        &self.shown_url
    }

    fn base(&self) -> &str {
        self.config.base_url.trim_end_matches('/')
    }

    fn idle(&self) -> Duration {
        Duration::from_secs(self.config.idle_timeout_secs.max(1))
    }

    /// POSTs the request, retrying connect failures, 429 and 5xx with backoff. Only this
    /// phase retries: once the stream has started, deltas may already have been shown.
    async fn send(
        &self,
        url: &str,
        body: &Value,
        model: &str,
        on_retry: &(dyn Fn(Retry) + Sync),
    ) -> Result<reqwest::Response, ProviderError> {
        let base = &self.shown_url;
        let mut attempt = 0;
        loop {
            let request = self.http.post(url).json(body);
            let request = self.wire.headers(request, self.api_key.as_deref());
            // The idle limit also bounds the wait for the response head, so a server that
            // accepts and never answers cannot hold a turn forever.
            let idle = self.idle();
            let Ok(sent) = tokio::time::timeout(idle, request.send()).await else {
                return Err(error::no_answer(base, idle.as_secs()));
            };
            let (error, retry_after) = match sent {
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
                    let detail = self.wire.error_detail(&text);
                    let api_key_env = self.config.api_key_env.as_deref();
                    let error = error::status(status, &detail, base, api_key_env, model);
                    if !(status == 429 || status >= 500) {
                        return Err(error);
                    }
                    (error, retry_after)
                }
                Err(e) => (error::transport(base, &e), None),
            };
            if attempt >= self.config.max_retries {
                return Err(error);
            }
            let delay = backoff(attempt, retry_after);
            tracing::warn!(attempt = attempt + 1, delay = ?delay, error = %error, "provider call failed; retrying");
            on_retry(Retry {
                attempt: attempt + 1,
                delay,
                reason: error.reason(),
            });
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

//! One model call of a turn, over the provider's route (`provider/chain.rs`): each
//! provider opened with its retries told as `provider_retry` events, the answer streamed
//! to the session and stored whole, and, when a provider fails before any output, the next
//! `[[fallback]]` asked, each switch a `provider_fallback` event. A failure after output is
//! never tried elsewhere: that would show a second answer after half of the first.

use super::halt::{Halt, or_cancelled};
use super::meter::call_usage;
use super::step::{Answered, Call, Turn};
use crate::provider::chain::{self, Hop};
use crate::provider::{ChatRequest, Delta, ErrorKind, ProviderError, Retry};
use crate::store::{MessageKind, NewMessage, StoreError};
use zeroclaw_protocol::Update;

/// How one provider of a model call's route answered.
enum Once {
    Done(Call),
    /// It failed before showing anything: the next provider may be asked.
    Failed(ProviderError),
    /// It failed after part of its answer was shown: the call fails.
    AfterOutput(ProviderError),
}

impl Turn<'_> {
    /// One model call: streams its text to the session, stores it whole, and returns it
    /// with the call's result. The call walks the provider's route (`provider/chain.rs`):
    /// when a provider fails before any output, the next `[[fallback]]` is asked, each
    /// switch told as a `provider_fallback` event; each retry of a provider is a
    /// `provider_retry` event.
    pub(super) async fn model_call(
        &mut self,
        step: i64,
        request: &ChatRequest<'_>,
        estimate: u64,
    ) -> Result<Call, Halt> {
        let cancel = self.active.cancel.clone();
        let env = self.env;
        let model = self.model.clone();
        let route = env.provider.route(&model);
        let mut failures = Vec::new();
        for (index, hop) in route.iter().enumerate() {
            let untried = route.len() - index - 1;
            let request = ChatRequest {
                model: hop.model,
                system: request.system,
                messages: request.messages,
                tools: request.tools,
            };
            let outcome = self
                .call_once(step, hop, &request, estimate, &cancel)
                .await?;
            let error = match outcome {
                Once::Done(call) => return Ok(call),
                Once::AfterOutput(error) => {
                    let error = chain::after_output(error, untried);
                    return Err(self.provider_failure(error).await.into());
                }
                Once::Failed(error) => error,
            };
            if index == 0 && error.kind == ErrorKind::ContextLength {
                return Ok(Call::TooLong(error));
            }
            let next = route.get(index + 1);
            if let Some(next) = next.filter(|_| chain::may_fall_back(index, &error)) {
                tracing::warn!(from = %hop.label(), to = %next.label(), error = %error, "provider failed; trying the next fallback");
                self.provider_event(Update::ProviderFallback {
                    from: hop.label(),
                    to: next.label(),
                    reason: error.reason(),
                });
            }
            failures.push((hop.label(), error));
        }
        let error = chain::exhausted(failures);
        Err(self.provider_failure(error).await.into())
    }

    /// One model call to one provider of the route: opened (its retries told as
    /// `provider_retry` events), then streamed to the session and stored.
    async fn call_once(
        &mut self,
        step: i64,
        hop: &Hop<'_>,
        request: &ChatRequest<'_>,
        estimate: u64,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Once, Halt> {
        let started = std::time::Instant::now();
        let opened = {
            let session = self.session;
            let turn_id = self.active.id.as_str();
            let label = hop.label();
            let unattended = self.origin.unattended.clone();
            let on_retry = |retry: Retry| {
                let delay_ms = u64::try_from(retry.delay.as_millis()).unwrap_or(u64::MAX);
                let update = Update::ProviderRetry {
                    attempt: retry.attempt,
                    delay_ms,
                    reason: retry.reason,
                    provider: Some(label.clone()),
                };
                if let Some(run) = &unattended {
                    run.provider_log.push(&update);
                }
                session.broadcast(turn_id, update);
            };
            or_cancelled(cancel, hop.provider.open(request, &on_retry)).await?
        };
        self.env.observer.model_call(
            started.elapsed().as_secs_f64(),
            opened.as_ref().err().map(|e| e.kind.as_str()),
        );
        let open = match opened {
            Err(e) => return Ok(Once::Failed(e)),
            Ok(open) => open,
        };
        self.ensure_started().await?;

        let mut text = String::new();
        let mut thought = String::new();
        let outcome = {
            let session = self.session;
            let turn_id = self.active.id.as_str();
            let mut on_delta = |delta: Delta| match delta {
                Delta::Text(t) => {
                    session.stream_chunk(turn_id, step, false, &t);
                    text.push_str(&t);
                }
                Delta::Thought(t) => {
                    session.stream_chunk(turn_id, step, true, &t);
                    thought.push_str(&t);
                }
            };
            or_cancelled(cancel, open.read(&mut on_delta, session)).await
        };
        // What streamed before a cancellation is kept, marked cancelled.
        let cancelled = outcome.is_err();
        let stored = self.store_streamed(step, &thought, &text, cancelled).await;
        // Stored (or not) whole: a connection joining from here on reads it in the history,
        // not in the text in progress.
        self.session.streamed_stored();
        self.stored(stored).await?;
        if !text.is_empty() {
            if !self.text.is_empty() {
                self.text.push_str("\n\n");
            }
            self.text.push_str(&text);
        }
        let result = match outcome? {
            // Nothing was shown: another provider may answer instead.
            Err(e) if text.is_empty() && thought.is_empty() => return Ok(Once::Failed(e)),
            Err(e) => return Ok(Once::AfterOutput(e)),
            Ok(result) => result,
        };
        let answered = Answered {
            usage: call_usage(hop, estimate, &text, &result),
            window: hop.context_window(),
        };
        Ok(Once::Done(Call::Done(text, result, answered)))
    }

    /// Sends a `provider_retry` or `provider_fallback` event, kept for an unattended run's
    /// record.
    pub(super) fn provider_event(&self, update: Update<'_>) {
        if let Some(run) = &self.origin.unattended {
            run.provider_log.push(&update);
        }
        self.emit(update);
    }

    /// Stores a model call's streamed reasoning, then its text (each only if any).
    async fn store_streamed(
        &self,
        step: i64,
        thought: &str,
        text: &str,
        cancelled: bool,
    ) -> Result<(), StoreError> {
        for (kind, text) in [
            (MessageKind::Thought, thought),
            (MessageKind::Assistant, text),
        ] {
            if text.is_empty() {
                continue;
            }
            let message = NewMessage {
                step,
                text: Some(text.to_owned()),
                cancelled,
                ..NewMessage::default()
            };
            self.store(kind, message).await?;
        }
        Ok(())
    }
}

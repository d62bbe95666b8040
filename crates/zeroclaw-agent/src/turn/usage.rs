//! A turn's token accounting: after each model call its usage (the provider's, or the
//! daemon's estimate marked `estimated` when it reported none) is added to the turn's,
//! stored with the turn (so it survives a crash), and sent as a `usage_update` event, live
//! only: `session/usage` answers the totals from the store.

use super::halt::Halt;
use super::step::Turn;
use crate::provider::{StepResult, window};
use zeroclaw_protocol::{Update, UsageReport, UsageTotals};

/// One call's tokens: the provider's report, or an estimate from the request's calibrated
/// size (`estimate`) and the bytes the model wrote.
fn call_usage(estimate: u64, text: &str, result: &StepResult) -> UsageTotals {
    match result.usage {
        Some(u) => UsageTotals {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cached_input_tokens: result.cached_input_tokens.min(u.input_tokens),
            cost: None,
            estimated: false,
        },
        None => {
            let written = text.len()
                + result
                    .tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.raw_arguments.len())
                    .sum::<usize>();
            UsageTotals {
                input_tokens: estimate,
                output_tokens: window::tokens_of(written),
                cached_input_tokens: 0,
                cost: None,
                estimated: true,
            }
        }
    }
}

impl Turn<'_> {
    /// Counts a model call whose request was estimated at `estimate` tokens (calibrated):
    /// adds it to the turn, stores the turn's usage, sends `usage_update`.
    pub(super) async fn count_usage(
        &mut self,
        estimate: u64,
        text: &str,
        result: &StepResult,
        window: u64,
    ) -> Result<(), Halt> {
        let mut call = call_usage(estimate, text, result);
        if let Some(pricing) = self.env.config.provider.pricing {
            call.cost = Some(pricing.cost(
                call.input_tokens,
                call.cached_input_tokens,
                call.output_tokens,
            ));
        }
        self.env
            .observer
            .tokens_used(call.input_tokens, call.output_tokens);
        let before = match self.meter.before {
            Some(before) => before,
            None => {
                let stored = self.env.store.session_usage(&self.session.id).await;
                let before = self.stored(stored).await?.totals;
                self.meter.before = Some(before);
                before
            }
        };
        let turn = self.meter.turn.get_or_insert_with(UsageTotals::default);
        turn.add(&call);
        let turn = *turn;
        let recorded = self
            .env
            .store
            .record_usage(self.id(), turn, call.input_tokens)
            .await;
        self.stored(recorded).await?;
        let mut session = before;
        session.add(&turn);
        self.emit(Update::UsageUpdate(Box::new(UsageReport {
            input_tokens: call.input_tokens,
            output_tokens: call.output_tokens,
            cached_input_tokens: call.cached_input_tokens,
            cost: call.cost,
            estimated: call.estimated,
            turn,
            session,
            context_used: call.input_tokens,
            context_size: window,
        })));
        Ok(())
    }
}

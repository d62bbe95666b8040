//! A turn's token accounting: after each model call — a step's, or compaction's summary
//! call — its usage (the provider's, or the daemon's estimate marked `estimated` when it
//! reported none, priced by the provider that answered: `meter.rs`) is added to the turn's,
//! stored with the turn (so it survives a crash), and sent as a `usage_update` event, live
//! only: `session/usage` answers the totals from the store. A subagent's calls are added
//! to its parent turn's account too, and the parent turn's stored usage follows.

use super::halt::Halt;
use super::meter::Gauge;
use super::step::Turn;
use crate::store::StoreError;
use zeroclaw_protocol::{Update, UsageReport, UsageTotals};

impl Turn<'_> {
    /// Counts one model call's usage (`meter::call_usage`): adds it to the turn and its
    /// account, stores the turn's usage, sends `usage_update`.
    pub(super) async fn count_usage(
        &mut self,
        call: UsageTotals,
        gauge: Gauge,
    ) -> Result<(), Halt> {
        self.env
            .observer
            .tokens_used(call.input_tokens, call.output_tokens);
        let (before, stored_context) = match self.meter.before {
            Some(before) => (before, None),
            None => {
                let stored = self.env.store.session_usage(&self.session.id).await;
                let stored = self.stored(stored).await?;
                self.meter.before = Some(stored.totals);
                (stored.totals, Some(stored.context_used))
            }
        };
        let context_used = gauge
            .used
            .or(self.meter.context_used)
            .or(stored_context)
            .unwrap_or(0);
        self.meter.context_used = Some(context_used);
        self.meter
            .turn
            .get_or_insert_with(UsageTotals::default)
            .add(&call);
        let account = self.meter.account.add(&call);
        let Some(turn) = self.meter.totals() else {
            return Ok(());
        };
        let recorded = self
            .env
            .store
            .record_usage(self.id(), turn, gauge.used)
            .await;
        self.stored(recorded).await?;
        if let (Some(parent), Some(total)) = (&self.meter.parent_turn, account.usage) {
            // The parent turn's stored usage includes what its subagents spent, so its
            // run's record and `session/usage` show it while the child runs.
            let recorded = self.env.store.record_usage(parent, total, None).await;
            self.stored(recorded).await?;
        }
        let mut session = before;
        session.add(&turn);
        let currency = self
            .env
            .config
            .provider
            .pricing
            .map(|p| p.currency.to_string());
        self.emit(Update::UsageUpdate(Box::new(UsageReport {
            input_tokens: call.input_tokens,
            output_tokens: call.output_tokens,
            cached_input_tokens: call.cached_input_tokens,
            cost: call.cost,
            currency,
            estimated: call.estimated,
            turn,
            session,
            context_used,
            context_size: gauge.size,
        })));
        Ok(())
    }

    /// Writes a parent turn's usage once more at its end when its subagents spent: each of
    /// their calls stored the sum so far, but two running at once may have stored theirs
    /// out of order.
    pub(super) async fn record_children_spend(&self) -> Result<(), StoreError> {
        match self.meter.totals() {
            Some(total) if self.meter.children_spent() => {
                self.env.store.record_usage(self.id(), total, None).await
            }
            _ => Ok(()),
        }
    }
}

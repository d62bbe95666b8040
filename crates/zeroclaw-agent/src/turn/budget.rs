//! A turn's budgets: `[limits]` bound every turn's tokens and cost; an unattended entry
//! (webhook or schedule) adds its own tokens, cost and model calls per run. The turn
//! checks them before each model call after its first, so it stops between steps — its
//! tool calls answered, its history whole — with `stopReason: "budget"`. What they count is
//! the turn's account (`meter.rs`): its steps', its compaction's and its subagents' calls.

use crate::config::{Currency, LimitsConfig};
use zeroclaw_protocol::{BudgetStop, UsageTotals};

/// One budget, with the name the config file gives it (the `limit` of [`BudgetStop`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    pub name: String,
    pub cap: Cap,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cap {
    /// Input plus output tokens over the turn's model calls.
    Tokens(u64),
    /// The turn's cost, in the currency of `[provider.pricing]` (every provider's).
    Cost(f64),
    /// Model calls.
    Steps(u32),
}

impl Limit {
    /// `[limits]`'s budgets.
    pub fn of_config(limits: &LimitsConfig) -> Vec<Limit> {
        let mut all = Vec::new();
        if let Some(max) = limits.max_tokens_per_turn {
            all.push(Limit {
                name: "limits.max_tokens_per_turn".into(),
                cap: Cap::Tokens(max),
            });
        }
        if let Some(max) = limits.max_cost_per_turn {
            all.push(Limit {
                name: "limits.max_cost_per_turn".into(),
                cap: Cap::Cost(max),
            });
        }
        all
    }

    /// Whether a turn that has used `used` over `calls` model calls may not make another;
    /// if so, what it used against this limit (a cost in `currency`).
    fn reached(&self, used: &UsageTotals, calls: u32, currency: Currency) -> Option<String> {
        match self.cap {
            Cap::Tokens(max) => {
                let tokens = used.input_tokens.saturating_add(used.output_tokens);
                (tokens >= max).then(|| format!("{tokens} tokens of {max}"))
            }
            // Without a price there is no cost to count (validation refuses that config).
            Cap::Cost(max) => used
                .cost
                .filter(|cost| *cost >= max)
                .map(|cost| format!("{} of {}", currency.amount(cost), currency.amount(max))),
            Cap::Steps(max) => (calls >= max).then(|| format!("{calls} model calls of {max}")),
        }
    }
}

/// The first of `limits` a turn that has made `calls` model calls, using `used` (costs in
/// `currency`), has reached; `None` while it may go on.
pub(super) fn reached<'a>(
    limits: impl IntoIterator<Item = &'a Limit>,
    used: Option<&UsageTotals>,
    calls: u32,
    currency: Currency,
) -> Option<BudgetStop> {
    let none = UsageTotals::default();
    let used = used.unwrap_or(&none);
    limits.into_iter().find_map(|limit| {
        limit.reached(used, calls, currency).map(|used| BudgetStop {
            limit: limit.name.clone(),
            used,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const USD: Currency = Currency::USD;

    fn used(input: u64, output: u64, cost: Option<f64>) -> UsageTotals {
        UsageTotals {
            input_tokens: input,
            output_tokens: output,
            cost,
            ..UsageTotals::default()
        }
    }

    fn limit(name: &str, cap: Cap) -> Limit {
        Limit {
            name: name.into(),
            cap,
        }
    }

    #[test]
    fn a_budget_is_reached_once_use_meets_it() {
        let tokens = [limit("t", Cap::Tokens(100))];
        assert_eq!(reached(&tokens, Some(&used(60, 39, None)), 1, USD), None);
        let stop = reached(&tokens, Some(&used(60, 40, None)), 1, USD);
        assert_eq!(
            stop,
            Some(BudgetStop {
                limit: "t".into(),
                used: "100 tokens of 100".into()
            })
        );
        let cost = [limit("c", Cap::Cost(0.01))];
        assert_eq!(reached(&cost, Some(&used(1, 1, Some(0.009))), 1, USD), None);
        let stop = reached(&cost, Some(&used(1, 1, Some(0.42))), 1, USD);
        assert_eq!(stop.map(|s| s.used), Some("$0.4200 of $0.0100".into()));
        let euros = Currency::try_from("EUR".to_owned()).unwrap();
        let stop = reached(&cost, Some(&used(1, 1, Some(0.42))), 1, euros);
        assert_eq!(
            stop.map(|s| s.used),
            Some("0.4200 EUR of 0.0100 EUR".into())
        );
        // No price, no cost: never reached.
        assert_eq!(
            reached(&cost, Some(&used(1_000_000, 1, None)), 9, USD),
            None
        );
        let steps = [limit("s", Cap::Steps(3))];
        assert_eq!(reached(&steps, None, 2, USD), None);
        assert_eq!(
            reached(&steps, None, 3, USD).map(|s| s.used),
            Some("3 model calls of 3".into())
        );
    }

    #[test]
    fn the_first_limit_reached_is_named() {
        let limits = [limit("a", Cap::Steps(10)), limit("b", Cap::Tokens(5))];
        let stop = reached(&limits, Some(&used(5, 0, None)), 1, USD);
        assert_eq!(stop.map(|s| s.limit), Some("b".into()));
        assert_eq!(
            Limit::of_config(&LimitsConfig {
                max_tokens_per_turn: Some(7),
                max_cost_per_turn: None
            }),
            vec![limit("limits.max_tokens_per_turn", Cap::Tokens(7))]
        );
    }
}

//! Token usage and cost (docs/protocol.md "Usage and cost"): `session/usage`, and the
//! shapes a `usage_update` event and a run carry.
//!
//! Input tokens count every token the model read, those served from the provider's prompt
//! cache included (`cachedInputTokens` says how many of them were). A cost is a plain number
//! in the currency of `[provider.pricing]` (`currency`, an ISO 4217 code, beside it), never
//! formatted; it is absent when no price is configured.

use super::SessionIdParams;
use serde::{Deserialize, Serialize};

method!(
    /// A session's token usage and cost so far, summed over its stored turns.
    SessionUsage, "session/usage", SessionIdParams, SessionUsageResult
);

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Tokens and cost summed over some model calls (a turn's, a session's, a run's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UsageTotals {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// How many of `inputTokens` the provider read from its prompt cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    /// In the currency of `[provider.pricing]`; absent when no call had a price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Some of the counts are the daemon's estimate: a provider did not report usage.
    #[serde(default, skip_serializing_if = "is_false")]
    pub estimated: bool,
}

impl UsageTotals {
    /// Adds `other` to these totals.
    pub fn add(&mut self, other: &UsageTotals) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.cost = match (self.cost, other.cost) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        self.estimated |= other.estimated;
    }
}

/// A `usage_update` event's members: one model call's usage, with the running totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageReport {
    /// The call's input tokens (cached ones included).
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    /// The call's cost, when a price is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// The ISO 4217 code of every cost here (`USD`, `EUR`), when a price is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// The provider reported no usage for this call: the counts are estimated.
    #[serde(default, skip_serializing_if = "is_false")]
    pub estimated: bool,
    /// The turn's model calls so far, this one included.
    pub turn: UsageTotals,
    /// The session's stored turns plus this turn so far.
    pub session: UsageTotals,
    /// How much of the context window the conversation takes: this call's input tokens.
    pub context_used: u64,
    /// The model's context window in tokens (`provider.context_window` or known).
    pub context_size: u64,
}

/// `session/usage` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionUsageResult {
    pub session_id: String,
    /// Summed over the session's turns, a running one's calls so far included.
    #[serde(flatten)]
    pub totals: UsageTotals,
    /// The ISO 4217 code of `cost` (`USD`, `EUR`), when a price is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// Turns that made at least one model call.
    pub turns: u64,
    /// The input tokens of the session's last model call (0 before any).
    pub context_used: u64,
    /// The context window of the session's model.
    pub context_size: u64,
}

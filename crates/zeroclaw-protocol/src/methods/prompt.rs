//! A turn: `session/prompt` runs one, `session/cancel` ends it, `session/approve` answers
//! its approval requests; with why a turn ends (`StopReason`) and the decisions.

use super::Empty;
use super::session::SessionIdParams;
use serde::{Deserialize, Serialize};

method!(
    /// Runs a turn; answers when it ends.
    SessionPrompt, "session/prompt", PromptParams, PromptResult
);
method!(
    /// Cancels the running turn, if any.
    SessionCancel, "session/cancel", SessionIdParams, CancelResult
);
method!(
    /// Answers an `approval_request`.
    SessionApprove, "session/approve", ApproveParams, Empty
);

method!(
    /// Adds a user message to the running turn, delivered to the model at its next step.
    SessionSteer, "session/steer", SteerParams, SteerResult
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptParams {
    pub session_id: String,
    pub prompt: String,
    /// Images and resources sent with the prompt (`content.rs`), in order; bounded by
    /// [`super::MAX_CONTENT_BLOCKS`] and the sizes beside it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<super::ContentBlock>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PromptResult {
    pub turn_id: String,
    pub stop_reason: StopReason,
    /// The answer's text, cut (at a character boundary) to a quarter of the frame cap when
    /// longer; the whole of it is in the events and the history.
    pub text: String,
    /// `text` was cut.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub text_truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// With `stopReason: "budget"`: the limit the turn reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetStop>,
}

/// The budget a turn stopped at (`stopReason: "budget"`, docs/protocol.md §11).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BudgetStop {
    /// The limit, named as in the config file: `limits.max_tokens_per_turn`,
    /// `limits.max_cost_per_turn`, or an unattended entry's `max_tokens`, `max_cost` or
    /// `max_steps` (`schedules.NAME.max_tokens`...).
    pub limit: String,
    /// What the turn used against it and what was allowed, in words: `1234 tokens of
    /// 1000`, `$0.0123 of $0.01`, `5 model calls of 5`.
    pub used: String,
}

/// At most this many `session/steer` messages wait in one turn for its next step; one more
/// is refused (-32602) until the turn has taken them.
pub const MAX_PENDING_STEERS: usize = 8;
/// A `session/steer` message's longest `text`, in bytes (-32602 beyond).
pub const MAX_STEER_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SteerParams {
    pub session_id: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SteerResult {
    /// The running turn the message was added to.
    pub turn_id: String,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// `session/cancel`, a deleted session or a stopping daemon ended it.
    Cancelled,
    /// It reached `agent.max_steps` model calls.
    MaxTurns,
    /// It reached a token, cost or step budget (`[limits]`, or an unattended entry's); the
    /// result's `budget` names it.
    Budget,
    /// It failed (only in `turn_complete`: `session/prompt` answers an error instead).
    Error,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::Cancelled => "cancelled",
            StopReason::MaxTurns => "max_turns",
            StopReason::Budget => "budget",
            StopReason::Error => "error",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CancelResult {
    pub cancelled: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApproveParams {
    pub session_id: String,
    pub request_id: String,
    pub decision: Decision,
}

/// An answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Decision {
    AllowOnce,
    AllowAlways,
    Reject,
}

impl Decision {
    /// Every decision, in the order an `approval_request` offers them.
    pub const ALL: [Decision; 3] = [Decision::AllowOnce, Decision::AllowAlways, Decision::Reject];

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::AllowOnce => "allow_once",
            Decision::AllowAlways => "allow_always",
            Decision::Reject => "reject",
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn decisions_read_as_their_wire_names() {
        for d in Decision::ALL {
            assert_eq!(serde_json::to_value(d).unwrap(), json!(d.as_str()));
        }
        for s in [
            StopReason::EndTurn,
            StopReason::Cancelled,
            StopReason::MaxTurns,
            StopReason::Budget,
            StopReason::Error,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), json!(s.as_str()));
        }
    }
}

//! What a turn's model calls have used so far: the data `usage.rs` keeps up to date and
//! the turn's end reads (apart from `usage.rs`, which needs the turn, so that the turn can
//! hold it without the two importing each other), and how one call is counted and priced.
//!
//! A turn's budgets count an [`Account`]: the turn's own calls, its compaction's and its
//! subagents'. A subagent's turn shares its parent turn's account, so what the child spends
//! counts against the parent's budgets and a child whose parent's budget is spent stops
//! too; the child session's own usage stays the child's.

use crate::provider::chain::Hop;
use crate::provider::{StepResult, window};
use std::sync::{Arc, Mutex, PoisonError};
use zeroclaw_protocol::{Usage, UsageTotals};

/// How much of the context window a call says the conversation takes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Gauge {
    /// The call's input tokens for a step's call; `None` for a summarising call, which
    /// reads an excerpt, not the conversation (the last measure stands).
    pub(super) used: Option<u64>,
    /// The context window of the model that answered.
    pub(super) size: u64,
}

/// What a turn and its subagents' turns have used: what the turn's budgets count.
#[derive(Debug, Default)]
pub(super) struct Account(Mutex<Spent>);

/// An [`Account`]'s figures.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct Spent {
    /// Every call's usage; `None` before the first.
    pub(super) usage: Option<UsageTotals>,
    /// The model calls counted.
    pub(super) calls: u32,
}

impl Account {
    /// Adds one call; returns the figures with it.
    pub(super) fn add(&self, call: &UsageTotals) -> Spent {
        let mut spent = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        spent
            .usage
            .get_or_insert_with(UsageTotals::default)
            .add(call);
        spent.calls = spent.calls.saturating_add(1);
        *spent
    }

    pub(super) fn spent(&self) -> Spent {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What a turn's model calls have used so far.
#[derive(Debug, Default)]
pub(super) struct Meter {
    /// The turn's own calls so far; `None` before the first.
    pub(super) turn: Option<UsageTotals>,
    /// The session's stored turns before this one, read at the turn's first call.
    pub(super) before: Option<UsageTotals>,
    /// How much of the window the conversation took at its last measure (a step's call;
    /// a summarising call measures nothing), read from the store at the turn's first call.
    pub(super) context_used: Option<u64>,
    /// What the budgets count: this turn's account, or its parent turn's.
    pub(super) account: Arc<Account>,
    /// In a subagent's turn: its parent turn's id, whose stored usage its calls update.
    pub(super) parent_turn: Option<String>,
}

impl Meter {
    /// The meter of a subagent's turn run by the turn metered by `self` (turn `turn_id`).
    pub(super) fn child_of(&self, turn_id: &str) -> Self {
        Self {
            account: self.account.clone(),
            parent_turn: Some(turn_id.to_owned()),
            ..Self::default()
        }
    }

    /// What the turn's stored usage, its answer and its `usage_update`s' `turn` say: a
    /// subagent's turn its own calls; any other turn its account, its subagents' calls
    /// included.
    pub(super) fn totals(&self) -> Option<UsageTotals> {
        match self.parent_turn {
            Some(_) => self.turn,
            None => self.account.spent().usage,
        }
    }

    /// The turn's tokens, as `session/prompt` answers them; `None` before any call.
    pub(super) fn usage(&self) -> Option<Usage> {
        self.totals().map(|t| Usage {
            input_tokens: t.input_tokens,
            output_tokens: t.output_tokens,
        })
    }

    /// Whether subagents spent on this (parent) turn's account: what it stored after its
    /// own last call is then behind.
    pub(super) fn children_spent(&self) -> bool {
        self.parent_turn.is_none() && self.account.spent().usage != self.turn
    }
}

/// One call's tokens, priced at the prices of `hop`, the provider that answered it: the
/// provider's report, or an estimate from the request's calibrated size (`estimate`) and
/// the bytes the model wrote (`text`, and its tool calls).
pub(super) fn call_usage(
    hop: &Hop<'_>,
    estimate: u64,
    text: &str,
    result: &StepResult,
) -> UsageTotals {
    let mut call = match result.usage {
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
    };
    call.cost = hop.pricing().map(|p| {
        p.cost(
            call.input_tokens,
            call.cached_input_tokens,
            call.output_tokens,
        )
    });
    call
}

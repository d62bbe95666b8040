//! What a turn's model calls have used so far: the data `usage.rs` keeps up to date and
//! the turn's end reads (apart from `usage.rs`, which needs the turn, so that the turn can
//! hold it without the two importing each other).

use zeroclaw_protocol::{Usage, UsageTotals};

/// What a turn's model calls have used so far.
#[derive(Debug, Default)]
pub(super) struct Meter {
    /// The turn's calls so far; `None` before the first.
    pub(super) turn: Option<UsageTotals>,
    /// The session's stored turns before this one, read at the turn's first call.
    pub(super) before: Option<UsageTotals>,
}

impl Meter {
    /// The turn's tokens, as `session/prompt` answers them; `None` before any call.
    pub(super) fn usage(&self) -> Option<Usage> {
        self.turn.map(|t| Usage {
            input_tokens: t.input_tokens,
            output_tokens: t.output_tokens,
        })
    }
}

//! Token usage and cost per turn (docs/protocol.md "Usage and cost"): written after each
//! model call, summed per session for `session/usage` and per run for `runs/*`.

use super::db::Db;
use super::{Result, Store, StoreError};
use rusqlite::{OptionalExtension, params};
use zeroclaw_protocol::UsageTotals;

/// A session's usage as its stored turns add up.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SessionUsage {
    pub totals: UsageTotals,
    /// Turns with at least one model call's usage.
    pub turns: u64,
    /// The input tokens of the session's last model call; 0 before any.
    pub context_used: u64,
}

/// The columns of a turn's usage, read by [`totals`] (`sums` the same over many turns).
pub(super) const TURN_COLUMNS: &str =
    "input_tokens, output_tokens, cached_input_tokens, cost, usage_estimated";

/// A turn's usage from [`TURN_COLUMNS`] at `at`; `None` if it has none (no model call).
pub(super) fn totals(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Option<UsageTotals>> {
    let input: Option<i64> = r.get(at)?;
    let output: Option<i64> = r.get(at + 1)?;
    if input.is_none() && output.is_none() {
        return Ok(None);
    }
    let count = |n: Option<i64>| n.map_or(0, |n| u64::try_from(n).unwrap_or(0));
    Ok(Some(UsageTotals {
        input_tokens: count(input),
        output_tokens: count(output),
        cached_input_tokens: count(r.get(at + 2)?),
        cost: r.get(at + 3)?,
        estimated: r.get::<_, Option<bool>>(at + 4)?.unwrap_or(false),
    }))
}

impl Db {
    fn record_usage(&self, turn_id: &str, usage: &UsageTotals, context: Option<u64>) -> Result<()> {
        let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        self.conn()
            .execute(
                "UPDATE turns SET input_tokens = ?2, output_tokens = ?3, cached_input_tokens = ?4, \
                 cost = ?5, usage_estimated = ?6, context_tokens = COALESCE(?7, context_tokens) WHERE id = ?1",
                params![
                    turn_id,
                    count(usage.input_tokens),
                    count(usage.output_tokens),
                    count(usage.cached_input_tokens),
                    usage.cost,
                    usage.estimated,
                    context.map(count),
                ],
            )
            .map_err(StoreError::ctx("record a turn's usage"))?;
        Ok(())
    }

    fn session_usage(&self, session_id: &str) -> Result<SessionUsage> {
        let conn = self.conn();
        let (totals, turns) = conn
            .query_row(
                "SELECT SUM(input_tokens), SUM(output_tokens), SUM(cached_input_tokens), SUM(cost), \
                 MAX(usage_estimated), COUNT(*) FROM turns \
                 WHERE session_id = ?1 AND (input_tokens IS NOT NULL OR output_tokens IS NOT NULL)",
                params![session_id],
                |r| Ok((totals(r, 0)?, r.get::<_, i64>(5)?)),
            )
            .map_err(StoreError::ctx("sum a session's usage"))?;
        let context: Option<i64> = conn
            .query_row(
                "SELECT context_tokens FROM turns WHERE session_id = ?1 AND context_tokens IS NOT NULL \
                 ORDER BY started_at DESC, rowid DESC LIMIT 1",
                params![session_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(StoreError::ctx("sum a session's usage"))?;
        Ok(SessionUsage {
            totals: totals.unwrap_or_default(),
            turns: u64::try_from(turns).unwrap_or(0),
            context_used: context.map_or(0, |n| u64::try_from(n).unwrap_or(0)),
        })
    }
}

impl Store {
    /// Records a turn's usage so far (its model calls' sums) and, when the call measured
    /// the conversation (`context`: its input tokens), how much of the window it took;
    /// called after each model call.
    pub async fn record_usage(
        &self,
        turn_id: &str,
        usage: UsageTotals,
        context: Option<u64>,
    ) -> Result<()> {
        let turn_id = turn_id.to_owned();
        self.writer
            .run(move |db| db.record_usage(&turn_id, &usage, context))
            .await
    }

    /// A session's usage summed over its stored turns (a running one's calls so far too).
    pub async fn session_usage(&self, session_id: &str) -> Result<SessionUsage> {
        let session_id = session_id.to_owned();
        self.reader
            .run(move |db| db.session_usage(&session_id))
            .await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn a_sessions_usage_adds_up_its_turns_and_keeps_the_last_context() {
        let store = Store::open_in_memory().unwrap().store;
        let session = store.create_session("s", None, "/w", "m").await.unwrap();
        let empty = store.session_usage(&session.id).await.unwrap();
        assert_eq!(empty, SessionUsage::default());
        for (turn, input, cost, context) in [("t1", 100, Some(0.5), 60), ("t2", 40, None, 40)] {
            store
                .begin_turn(&session.id, turn, &"hi".into(), None)
                .await
                .unwrap();
            let usage = UsageTotals {
                input_tokens: input,
                output_tokens: 7,
                cached_input_tokens: 10,
                cost,
                estimated: turn == "t2",
            };
            store
                .record_usage(turn, usage, Some(context))
                .await
                .unwrap();
        }
        let usage = store.session_usage(&session.id).await.unwrap();
        assert_eq!(
            usage,
            SessionUsage {
                totals: UsageTotals {
                    input_tokens: 140,
                    output_tokens: 14,
                    cached_input_tokens: 20,
                    cost: Some(0.5),
                    estimated: true,
                },
                turns: 2,
                context_used: 40,
            }
        );
        // A call that measures no conversation (a summary's) leaves the gauge as it was.
        let more = UsageTotals {
            input_tokens: 90,
            ..usage.totals
        };
        store.record_usage("t2", more, None).await.unwrap();
        let usage = store.session_usage(&session.id).await.unwrap();
        assert_eq!(usage.context_used, 40);
        assert_eq!(usage.totals.input_tokens, 190);
    }
}

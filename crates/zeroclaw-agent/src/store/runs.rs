//! Unattended runs (webhooks and schedules): one row per run, written before its turn
//! starts and finished after it; and the session each `session = "shared"` hook or
//! schedule runs in. Times are Unix milliseconds.

use super::db::Db;
use super::{Result, Store, StoreError};
use rusqlite::{OptionalExtension, params};

/// A run's state. `skipped`: a schedule's tick found its queue full and did not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
    Skipped,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::Skipped => "skipped",
        }
    }

    fn parse(text: &str) -> Self {
        match text {
            "queued" => Self::Queued,
            "running" => Self::Running,
            "done" => Self::Done,
            "cancelled" => Self::Cancelled,
            "skipped" => Self::Skipped,
            // A status this build does not know (a newer one wrote it) reads as failed.
            _ => Self::Failed,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub id: String,
    /// `webhook` or `schedule`.
    pub source: String,
    pub name: String,
    pub delivery_id: Option<String>,
    pub session_id: Option<String>,
    pub turn_id: Option<String>,
    pub status: RunStatus,
    pub error: Option<String>,
    /// A schedule's tick: the minute it was for.
    pub tick: Option<i64>,
    /// The prompt the run's turn is given (kept so a queued run survives a restart).
    pub prompt: String,
    pub created_at: i64,
    pub finished_at: Option<i64>,
    /// The run's turn's usage, read from the turn (never written with the run); `None`
    /// before its first model call.
    pub usage: Option<zeroclaw_protocol::UsageTotals>,
    /// The run's `provider_retry` and `provider_fallback` events, a JSON array as sent;
    /// `None` when there were none (or before the turn ended).
    pub provider_events: Option<String>,
    /// The budget the run's turn stopped at, a JSON `BudgetStop`; `None` otherwise.
    pub budget: Option<String>,
}

/// What a run's turn left besides its status ([`Store::set_run_outcome`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOutcome {
    /// The turn's `provider_retry` and `provider_fallback` events, a JSON array.
    pub provider_events: Option<String>,
    /// The budget it stopped at, a JSON `BudgetStop`.
    pub budget: Option<String>,
}

const COLUMNS: &str = "id, source, name, delivery_id, session_id, turn_id, status, error, tick, created_at, finished_at, prompt, provider_events, budget";

/// [`COLUMNS`], then the run's turn's usage ([`super::usage::TURN_COLUMNS`]), as reads
/// select them.
fn selected() -> String {
    let usage = super::usage::TURN_COLUMNS
        .split(", ")
        .map(|column| format!("(SELECT {column} FROM turns WHERE turns.id = runs.turn_id)"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("{COLUMNS}, {usage}")
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRow> {
    let status: String = r.get(6)?;
    Ok(RunRow {
        id: r.get(0)?,
        source: r.get(1)?,
        name: r.get(2)?,
        delivery_id: r.get(3)?,
        session_id: r.get(4)?,
        turn_id: r.get(5)?,
        status: RunStatus::parse(&status),
        error: r.get(7)?,
        tick: r.get(8)?,
        created_at: r.get(9)?,
        finished_at: r.get(10)?,
        prompt: r.get(11)?,
        usage: super::usage::totals(r, 14)?,
        provider_events: r.get(12)?,
        budget: r.get(13)?,
    })
}

/// Delivery ids that are a hash of the body (no header named one) start with this; they
/// deduplicate only within [`Db::insert_delivery`]'s window.
pub const HASH_PREFIX: &str = "sha256:";

/// How a webhook delivery is deduplicated besides its delivery id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dedup {
    /// The SHA-256 of its signed body, when a body seen before is a repeat whatever the
    /// delivery id (GitHub scheme, whose delivery id is not signed).
    pub body: Option<[u8; 32]>,
    /// Unix ms: the start of the hook's replay window. A body (or a `sha256:` id) seen
    /// before it is forgotten.
    pub since: i64,
}

impl Db {
    fn insert_run(&self, run: &RunRow) -> Result<()> {
        self.conn()
            .execute(
                &format!("INSERT INTO runs ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"),
                params![
                    run.id,
                    run.source,
                    run.name,
                    run.delivery_id,
                    run.session_id,
                    run.turn_id,
                    run.status.as_str(),
                    run.error,
                    run.tick,
                    run.created_at,
                    run.finished_at,
                    run.prompt,
                    run.provider_events,
                    run.budget
                ],
            )
            .map_err(StoreError::ctx("record a run"))?;
        Ok(())
    }

    /// The first run of hook `name` of this delivery: the run with this delivery id (any
    /// age for an id a header gave, since `dedup.since` for a body hash), else the run whose
    /// body had this SHA-256 since `dedup.since`.
    fn delivered(&self, name: &str, delivery_id: &str, dedup: Dedup) -> Result<Option<RunRow>> {
        let by_id = self
            .conn()
            .query_row(
                &format!(
                    "SELECT {} FROM runs WHERE source = 'webhook' AND name = ?1 AND delivery_id = ?2 \
                     AND (substr(delivery_id, 1, 7) != ?3 OR created_at >= ?4) ORDER BY created_at LIMIT 1", selected()
                ),
                params![name, delivery_id, HASH_PREFIX, dedup.since],
                row,
            )
            .optional()
            .map_err(StoreError::ctx("look up a delivery"))?;
        let Some(body) = dedup.body.filter(|_| by_id.is_none()) else {
            return Ok(by_id);
        };
        let run_id: Option<String> = self
            .conn()
            .query_row(
                "SELECT run_id FROM webhook_bodies WHERE name = ?1 AND sha256 = ?2 AND seen_at >= ?3",
                params![name, &body[..], dedup.since],
                |r| r.get(0),
            )
            .optional()
            .map_err(StoreError::ctx("look up a delivery's body"))?;
        match run_id {
            Some(id) => self.run(&id),
            None => Ok(None),
        }
    }

    /// Records `run` unless its hook already has a run of the same delivery (see
    /// [`Db::delivered`]): then that run. With a body hash, remembers it for the run and
    /// forgets the hook's hashes older than the window, so the table holds at most a
    /// window's deliveries. One writer and one transaction make it atomic.
    fn insert_delivery(&self, run: &RunRow, dedup: Dedup) -> Result<Option<RunRow>> {
        let ctx = || StoreError::ctx("record a delivery");
        // The writer thread owns the connection, so no other transaction can be open on it.
        let tx = self.conn().unchecked_transaction().map_err(ctx())?;
        if let Some(delivery) = &run.delivery_id
            && let Some(first) = self.delivered(&run.name, delivery, dedup)?
        {
            return Ok(Some(first));
        }
        self.insert_run(run)?;
        if let Some(body) = dedup.body {
            tx.execute(
                "INSERT OR REPLACE INTO webhook_bodies (name, sha256, run_id, seen_at) VALUES (?1, ?2, ?3, ?4)",
                params![run.name, &body[..], run.id, run.created_at],
            )
            .map_err(ctx())?;
            tx.execute(
                "DELETE FROM webhook_bodies WHERE name = ?1 AND seen_at < ?2",
                params![run.name, dedup.since],
            )
            .map_err(ctx())?;
        }
        tx.commit().map_err(ctx())?;
        Ok(None)
    }

    /// Start-up: forgets the body hashes of hooks no longer configured, and those older
    /// than each configured hook's window (`hooks`: name and window start). Returns how
    /// many were forgotten.
    fn prune_bodies(&self, hooks: &[(String, i64)]) -> Result<usize> {
        let ctx = || StoreError::ctx("forget old webhook bodies");
        let tx = self.conn().unchecked_transaction().map_err(ctx())?;
        let names: Vec<String> = {
            let mut statement = tx
                .prepare("SELECT DISTINCT name FROM webhook_bodies")
                .map_err(ctx())?;
            statement
                .query_map([], |r| r.get(0))
                .map_err(ctx())?
                .collect::<std::result::Result<_, _>>()
                .map_err(ctx())?
        };
        let mut forgotten = 0;
        for name in names {
            // A hook no longer configured keeps nothing: i64::MAX is after every time.
            let since = hooks
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(i64::MAX, |(_, since)| *since);
            forgotten += tx
                .execute(
                    "DELETE FROM webhook_bodies WHERE name = ?1 AND seen_at < ?2",
                    params![name, since],
                )
                .map_err(ctx())?;
        }
        tx.commit().map_err(ctx())?;
        Ok(forgotten)
    }

    fn set_run(
        &self,
        id: &str,
        status: RunStatus,
        turn_id: Option<&str>,
        error: Option<&str>,
        finished_at: Option<i64>,
    ) -> Result<()> {
        self.conn()
            .execute(
                "UPDATE runs SET status = ?2, turn_id = COALESCE(?3, turn_id), error = ?4, finished_at = ?5 WHERE id = ?1",
                params![id, status.as_str(), turn_id, error, finished_at],
            )
            .map_err(StoreError::ctx("update a run"))?;
        Ok(())
    }

    fn set_run_outcome(&self, id: &str, outcome: &RunOutcome) -> Result<()> {
        self.conn()
            .execute(
                "UPDATE runs SET provider_events = ?2, budget = ?3 WHERE id = ?1",
                params![id, outcome.provider_events, outcome.budget],
            )
            .map_err(StoreError::ctx("record how a run went"))?;
        Ok(())
    }

    fn run(&self, id: &str) -> Result<Option<RunRow>> {
        self.conn()
            .query_row(
                &format!("SELECT {} FROM runs WHERE id = ?1", selected()),
                params![id],
                row,
            )
            .optional()
            .map_err(StoreError::ctx("read a run"))
    }

    /// The newest `limit` runs, filtered by source and name when given.
    fn runs(&self, source: Option<&str>, name: Option<&str>, limit: usize) -> Result<Vec<RunRow>> {
        let mut statement = self
            .conn()
            .prepare(&format!(
                "SELECT {} FROM runs WHERE (?1 IS NULL OR source = ?1) AND (?2 IS NULL OR name = ?2) \
                 ORDER BY created_at DESC, id DESC LIMIT ?3", selected()
            ))
            .map_err(StoreError::ctx("read the runs"))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = statement
            .query_map(params![source, name, limit], row)
            .map_err(StoreError::ctx("read the runs"))?;
        rows.collect::<std::result::Result<_, _>>()
            .map_err(StoreError::ctx("read the runs"))
    }

    /// Start-up: runs a killed daemon left `running` are `failed` ("daemon stopped");
    /// returns how many, and the `queued` runs, oldest first, to start now.
    fn recover_runs(&self, now: i64) -> Result<(usize, Vec<RunRow>)> {
        let failed = self
            .conn()
            .execute(
                "UPDATE runs SET status = 'failed', error = 'daemon stopped', finished_at = ?1 WHERE status = 'running'",
                params![now],
            )
            .map_err(StoreError::ctx("recover runs"))?;
        let mut statement = self
            .conn()
            .prepare(&format!(
                "SELECT {} FROM runs WHERE status = 'queued' ORDER BY created_at, id",
                selected()
            ))
            .map_err(StoreError::ctx("recover runs"))?;
        let queued = statement
            .query_map([], row)
            .map_err(StoreError::ctx("recover runs"))?
            .collect::<std::result::Result<_, _>>()
            .map_err(StoreError::ctx("recover runs"))?;
        Ok((failed, queued))
    }

    /// The latest tick schedule `name` was recorded for (run or skipped).
    fn last_tick(&self, name: &str) -> Result<Option<i64>> {
        self.conn()
            .query_row(
                "SELECT MAX(tick) FROM runs WHERE source = 'schedule' AND name = ?1",
                params![name],
                |r| r.get(0),
            )
            .map_err(StoreError::ctx("read a schedule's last tick"))
    }

    fn shared_session(&self, source: &str, name: &str) -> Result<Option<String>> {
        self.conn()
            .query_row(
                "SELECT session_id FROM run_sessions WHERE source = ?1 AND name = ?2",
                params![source, name],
                |r| r.get(0),
            )
            .optional()
            .map_err(StoreError::ctx("read a shared session"))
    }

    fn set_shared_session(&self, source: &str, name: &str, session_id: &str) -> Result<()> {
        self.conn()
            .execute(
                "INSERT INTO run_sessions (source, name, session_id) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (source, name) DO UPDATE SET session_id = excluded.session_id",
                params![source, name, session_id],
            )
            .map_err(StoreError::ctx("store a shared session"))?;
        Ok(())
    }
}

impl Store {
    pub async fn insert_run(&self, run: RunRow) -> Result<()> {
        self.writer.run(move |db| db.insert_run(&run)).await
    }

    /// Records a webhook's run unless the delivery was seen: then the first run of it.
    pub async fn insert_delivery(&self, run: RunRow, dedup: Dedup) -> Result<Option<RunRow>> {
        self.writer
            .run(move |db| db.insert_delivery(&run, dedup))
            .await
    }

    /// The first run of a delivery, if any (see [`Db::delivered`]).
    pub async fn delivered(
        &self,
        name: &str,
        delivery_id: &str,
        dedup: Dedup,
    ) -> Result<Option<RunRow>> {
        let (name, delivery_id) = (name.to_owned(), delivery_id.to_owned());
        self.reader
            .run(move |db| db.delivered(&name, &delivery_id, dedup))
            .await
    }

    /// Forgets old and orphaned webhook body hashes (see [`Db::prune_bodies`]).
    pub async fn prune_bodies(&self, hooks: Vec<(String, i64)>) -> Result<usize> {
        self.writer.run(move |db| db.prune_bodies(&hooks)).await
    }

    pub async fn set_run(
        &self,
        id: &str,
        status: RunStatus,
        turn_id: Option<&str>,
        error: Option<&str>,
        finished_at: Option<i64>,
    ) -> Result<()> {
        let (id, turn_id, error) = (
            id.to_owned(),
            turn_id.map(str::to_owned),
            error.map(str::to_owned),
        );
        self.writer
            .run(move |db| {
                db.set_run(
                    &id,
                    status,
                    turn_id.as_deref(),
                    error.as_deref(),
                    finished_at,
                )
            })
            .await
    }

    /// Records what a run's turn left besides its status: its provider events and the
    /// budget it stopped at.
    pub async fn set_run_outcome(&self, id: &str, outcome: RunOutcome) -> Result<()> {
        let id = id.to_owned();
        self.writer
            .run(move |db| db.set_run_outcome(&id, &outcome))
            .await
    }

    pub async fn run(&self, id: &str) -> Result<Option<RunRow>> {
        let id = id.to_owned();
        self.reader.run(move |db| db.run(&id)).await
    }

    pub async fn runs(
        &self,
        source: Option<String>,
        name: Option<String>,
        limit: usize,
    ) -> Result<Vec<RunRow>> {
        self.reader
            .run(move |db| db.runs(source.as_deref(), name.as_deref(), limit))
            .await
    }

    pub async fn recover_runs(&self, now: i64) -> Result<(usize, Vec<RunRow>)> {
        self.writer.run(move |db| db.recover_runs(now)).await
    }

    pub async fn last_tick(&self, name: &str) -> Result<Option<i64>> {
        let name = name.to_owned();
        self.writer.run(move |db| db.last_tick(&name)).await
    }

    pub async fn shared_session(&self, source: &str, name: &str) -> Result<Option<String>> {
        let (source, name) = (source.to_owned(), name.to_owned());
        self.writer
            .run(move |db| db.shared_session(&source, &name))
            .await
    }

    pub async fn set_shared_session(
        &self,
        source: &str,
        name: &str,
        session_id: &str,
    ) -> Result<()> {
        let (source, name, session_id) =
            (source.to_owned(), name.to_owned(), session_id.to_owned());
        self.writer
            .run(move |db| db.set_shared_session(&source, &name, &session_id))
            .await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn run(id: &str, delivery: Option<&str>, at: i64) -> RunRow {
        RunRow {
            id: id.into(),
            source: "webhook".into(),
            name: "ci".into(),
            delivery_id: delivery.map(str::to_owned),
            session_id: Some("s".into()),
            turn_id: None,
            status: RunStatus::Queued,
            error: None,
            tick: None,
            prompt: "p".into(),
            created_at: at,
            finished_at: None,
            usage: None,
            provider_events: None,
            budget: None,
        }
    }

    fn ids(since: i64) -> Dedup {
        Dedup { body: None, since }
    }

    #[tokio::test]
    async fn a_delivery_is_recorded_once_and_a_body_hash_only_within_its_window() {
        let store = Store::open_in_memory().unwrap().store;
        assert_eq!(
            store
                .insert_delivery(run("a", Some("d1"), 10), ids(0))
                .await
                .unwrap(),
            None
        );
        let first = store
            .insert_delivery(run("b", Some("d1"), 20), ids(0))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(first.id, "a");
        let hash = "sha256:00";
        assert_eq!(
            store
                .insert_delivery(run("c", Some(hash), 30), ids(0))
                .await
                .unwrap(),
            None
        );
        assert_eq!(
            store
                .insert_delivery(run("d", Some(hash), 40), ids(25))
                .await
                .unwrap()
                .unwrap()
                .id,
            "c"
        );
        // Past the window the same body is a new delivery.
        assert_eq!(
            store
                .insert_delivery(run("e", Some(hash), 50), ids(35))
                .await
                .unwrap(),
            None
        );
        assert_eq!(store.runs(None, None, 10).await.unwrap().len(), 3);
    }

    #[tokio::test]
    async fn a_signed_body_is_a_repeat_under_any_delivery_id_within_the_window_and_then_forgotten()
    {
        let store = Store::open_in_memory().unwrap().store;
        let body = |b: u8| Dedup {
            body: Some([b; 32]),
            since: 0,
        };
        let within = |b: u8, since| Dedup { since, ..body(b) };
        assert_eq!(
            store
                .insert_delivery(run("a", Some("d1"), 10), body(1))
                .await
                .unwrap(),
            None
        );
        // Another delivery id, the same body: the first run.
        let first = store
            .insert_delivery(run("b", Some("d2"), 20), within(1, 5))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(first.id, "a");
        assert_eq!(
            store
                .delivered("ci", "d3", within(1, 5))
                .await
                .unwrap()
                .map(|r| r.id),
            Some("a".into())
        );
        // Another hook's body of the same bytes is not this hook's.
        let mut other = run("o", Some("d9"), 20);
        other.name = "other".into();
        assert_eq!(store.insert_delivery(other, body(1)).await.unwrap(), None);
        // Another body: a new run, and its insert forgets this hook's hashes before `since`.
        assert_eq!(
            store
                .insert_delivery(run("c", Some("d4"), 30), within(2, 15))
                .await
                .unwrap(),
            None
        );
        let count = |name: &'static str| {
            let store = store.clone();
            async move {
                store
                    .reader
                    .run(move |db| {
                        db.conn()
                            .query_row(
                                "SELECT COUNT(*) FROM webhook_bodies WHERE name = ?1",
                                [name],
                                |r| r.get::<_, i64>(0),
                            )
                            .map_err(StoreError::ctx("count"))
                    })
                    .await
                    .unwrap()
            }
        };
        assert_eq!(count("ci").await, 1, "the body of run a was forgotten");
        // Past the window the body is new again.
        assert_eq!(
            store
                .insert_delivery(run("d", Some("d5"), 40), within(1, 15))
                .await
                .unwrap(),
            None
        );
        // Only the id counts without a body hash (the Standard scheme).
        assert_eq!(
            store
                .insert_delivery(run("e", Some("d6"), 50), ids(0))
                .await
                .unwrap(),
            None
        );
        // Start-up: a hook gone from the config keeps nothing; a configured one its window.
        let forgotten = store.prune_bodies(vec![("ci".into(), 35)]).await.unwrap();
        assert_eq!(forgotten, 2, "run c's body in ci, and the other hook's");
        assert_eq!((count("ci").await, count("other").await), (1, 0));
    }

    #[tokio::test]
    async fn recovery_fails_running_runs_and_returns_queued_ones_oldest_first() {
        let store = Store::open_in_memory().unwrap().store;
        for (id, at) in [("q2", 3), ("r", 1), ("q1", 2)] {
            store.insert_run(run(id, None, at)).await.unwrap();
        }
        store
            .set_run("r", RunStatus::Running, Some("t"), None, None)
            .await
            .unwrap();
        let (failed, queued) = store.recover_runs(9).await.unwrap();
        assert_eq!(failed, 1);
        assert_eq!(
            queued.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            ["q1", "q2"]
        );
        let r = store.run("r").await.unwrap().unwrap();
        assert_eq!(
            (
                r.status,
                r.error.as_deref(),
                r.turn_id.as_deref(),
                r.finished_at
            ),
            (
                RunStatus::Failed,
                Some("daemon stopped"),
                Some("t"),
                Some(9)
            )
        );
    }
}

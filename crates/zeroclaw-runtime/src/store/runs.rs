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

#[derive(Debug, Clone, PartialEq, Eq)]
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
}

const COLUMNS: &str = "id, source, name, delivery_id, session_id, turn_id, status, error, tick, created_at, finished_at, prompt";

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
    })
}

/// Delivery ids that are a hash of the body (no header named one) start with this; they
/// deduplicate only within [`Db::insert_delivery`]'s window.
pub const HASH_PREFIX: &str = "sha256:";

impl Db {
    fn insert_run(&self, run: &RunRow) -> Result<()> {
        self.conn()
            .execute(
                &format!("INSERT INTO runs ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"),
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
                    run.prompt
                ],
            )
            .map_err(StoreError::ctx("record a run"))?;
        Ok(())
    }

    /// The run of hook `name` with this delivery id: any age for an id a header gave,
    /// created at or after `hash_since` for a body hash.
    fn delivered(&self, name: &str, delivery_id: &str, hash_since: i64) -> Result<Option<RunRow>> {
        self.conn()
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM runs WHERE source = 'webhook' AND name = ?1 AND delivery_id = ?2 \
                     AND (substr(delivery_id, 1, 7) != ?3 OR created_at >= ?4) ORDER BY created_at LIMIT 1"
                ),
                params![name, delivery_id, HASH_PREFIX, hash_since],
                row,
            )
            .optional()
            .map_err(StoreError::ctx("look up a delivery"))
    }

    /// Records `run` unless its hook already has a run of the same delivery (see
    /// [`Db::delivered`]): then that run. One writer makes the check and the insert atomic.
    fn insert_delivery(&self, run: &RunRow, hash_since: i64) -> Result<Option<RunRow>> {
        if let Some(delivery) = &run.delivery_id
            && let Some(first) = self.delivered(&run.name, delivery, hash_since)?
        {
            return Ok(Some(first));
        }
        self.insert_run(run)?;
        Ok(None)
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

    fn run(&self, id: &str) -> Result<Option<RunRow>> {
        self.conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM runs WHERE id = ?1"),
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
                "SELECT {COLUMNS} FROM runs WHERE (?1 IS NULL OR source = ?1) AND (?2 IS NULL OR name = ?2) \
                 ORDER BY created_at DESC, id DESC LIMIT ?3"
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
                "SELECT {COLUMNS} FROM runs WHERE status = 'queued' ORDER BY created_at, id"
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
    pub async fn insert_delivery(&self, run: RunRow, hash_since: i64) -> Result<Option<RunRow>> {
        self.writer
            .run(move |db| db.insert_delivery(&run, hash_since))
            .await
    }

    /// The first run of a delivery, if any (see [`Db::delivered`]).
    pub async fn delivered(
        &self,
        name: &str,
        delivery_id: &str,
        hash_since: i64,
    ) -> Result<Option<RunRow>> {
        let (name, delivery_id) = (name.to_owned(), delivery_id.to_owned());
        self.reader
            .run(move |db| db.delivered(&name, &delivery_id, hash_since))
            .await
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
        }
    }

    #[tokio::test]
    async fn a_delivery_is_recorded_once_and_a_body_hash_only_within_its_window() {
        let store = Store::open_in_memory().unwrap().store;
        assert_eq!(
            store
                .insert_delivery(run("a", Some("d1"), 10), 0)
                .await
                .unwrap(),
            None
        );
        let first = store
            .insert_delivery(run("b", Some("d1"), 20), 0)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(first.id, "a");
        let hash = "sha256:00";
        assert_eq!(
            store
                .insert_delivery(run("c", Some(hash), 30), 0)
                .await
                .unwrap(),
            None
        );
        assert_eq!(
            store
                .insert_delivery(run("d", Some(hash), 40), 25)
                .await
                .unwrap()
                .unwrap()
                .id,
            "c"
        );
        // Past the window the same body is a new delivery.
        assert_eq!(
            store
                .insert_delivery(run("e", Some(hash), 50), 35)
                .await
                .unwrap(),
            None
        );
        assert_eq!(store.runs(None, None, 10).await.unwrap().len(), 3);
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

//! Checkpoints, rewinds and forks in the store (issue 31; the snapshots themselves are in
//! the checkpoint engine's shadow repositories, which these rows name).
//!
//! - A checkpoint row is written with its turn, in `begin_turn`'s transaction, so every
//!   stored turn has one (a snapshot that failed leaves `snapshot` NULL and says why in
//!   `error`); the turn's end fills `end_snapshot` and `changed`.
//! - A rewind hides the messages from its checkpoint's prompt on, and the checkpoints of
//!   those turns, by setting `hidden_by` to its id: nothing is deleted, so an unrewind
//!   (which clears them) is lossless. Hidden messages are never in a turn's context nor in
//!   a replay; `session/messages` shows them on request.
//! - A fork copies the visible messages before a point into a new session, with new turn
//!   ids, and a summary's `upTo` moved to the copy's ids.

use super::db::{Db, now_ms};
use super::{Result, SessionRow, Store, StoreError};
use rusqlite::{Transaction, params};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// The checkpoint taken before a turn, stored with it.
#[derive(Debug, Clone, Default)]
pub struct NewCheckpoint {
    pub id: String,
    /// The engine's snapshot id; `None` when taking it failed.
    pub snapshot: Option<String>,
    /// What the snapshot left out (JSON), when it left anything out.
    pub omitted: Option<Value>,
    /// Why there is no snapshot.
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointRow {
    pub id: String,
    pub session_id: String,
    pub turn_id: String,
    /// 1 for the session's first turn.
    pub turn: i64,
    /// The row of the turn's prompt.
    pub message_id: Option<i64>,
    /// The first line of the prompt.
    pub prompt: String,
    pub created_at: i64,
    pub snapshot: Option<String>,
    pub end_snapshot: Option<String>,
    /// What the turn changed (`[{path, change}]`), known once it ended.
    pub changed: Option<Value>,
    pub omitted: Option<Value>,
    pub error: Option<String>,
    /// A rewind hid its turn.
    pub hidden: bool,
}

/// A rewind (`kind` `rewind`) or an unrewind (`unrewind`).
#[derive(Debug, Clone, PartialEq)]
pub struct RewindRow {
    pub id: String,
    pub session_id: String,
    pub checkpoint_id: Option<String>,
    pub kind: String,
    /// The snapshot of the state it found (restoring it is the undo); `None` when it left
    /// the files alone.
    pub found: Option<String>,
    /// The snapshot of the state it left the files in.
    pub left_state: Option<String>,
    pub messages_hidden: i64,
    pub created_at: i64,
    pub undone: bool,
}

/// The first line of a prompt (its first non-blank one), at most 200 characters.
pub fn first_line(prompt: &str) -> String {
    let line = prompt
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    line.chars().take(200).collect()
}

const CHECKPOINT_COLUMNS: &str = "id, session_id, turn_id, turn, message_id, prompt, created_at, \
     snapshot, end_snapshot, changed, omitted, error, hidden_by IS NOT NULL";

fn json(text: Option<String>) -> Option<Value> {
    text.and_then(|t| serde_json::from_str(&t).ok())
}

fn checkpoint_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<CheckpointRow> {
    Ok(CheckpointRow {
        id: r.get(0)?,
        session_id: r.get(1)?,
        turn_id: r.get(2)?,
        turn: r.get(3)?,
        message_id: r.get(4)?,
        prompt: r.get(5)?,
        created_at: r.get(6)?,
        snapshot: r.get(7)?,
        end_snapshot: r.get(8)?,
        changed: json(r.get(9)?),
        omitted: json(r.get(10)?),
        error: r.get(11)?,
        hidden: r.get(12)?,
    })
}

fn rewind_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RewindRow> {
    Ok(RewindRow {
        id: r.get(0)?,
        session_id: r.get(1)?,
        checkpoint_id: r.get(2)?,
        kind: r.get(3)?,
        found: r.get(4)?,
        left_state: r.get(5)?,
        messages_hidden: r.get(6)?,
        created_at: r.get(7)?,
        undone: r.get(8)?,
    })
}

fn insert_checkpoint(
    tx: &Transaction<'_>,
    session_id: &str,
    turn_id: &str,
    prompt: &str,
    message_id: i64,
    checkpoint: &NewCheckpoint,
    now: i64,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO checkpoints (id, session_id, turn_id, turn, message_id, prompt, created_at, snapshot, omitted, error) \
         VALUES (?1, ?2, ?3, (SELECT COUNT(*) + 1 FROM checkpoints WHERE session_id = ?2), ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            checkpoint.id,
            session_id,
            turn_id,
            message_id,
            first_line(prompt),
            now,
            checkpoint.snapshot,
            checkpoint.omitted.as_ref().map(Value::to_string),
            checkpoint.error,
        ],
    )
    .map(drop)
}

/// Every checkpoint id and rewind id of the database at `path`, read without a daemon
/// (`zeroclaw store prune`): the snapshots of any other are orphans.
pub fn checkpoint_ids_in(path: &std::path::Path) -> Result<(HashSet<String>, HashSet<String>)> {
    let conn = super::repair::open_read_only(path)?;
    ids(&conn)
}

fn ids(conn: &rusqlite::Connection) -> Result<(HashSet<String>, HashSet<String>)> {
    let ids = |sql: &str| -> rusqlite::Result<HashSet<String>> {
        let mut stmt = conn.prepare(sql)?;
        stmt.query_map([], |r| r.get(0))?.collect()
    };
    let read = || {
        Ok((
            ids("SELECT id FROM checkpoints")?,
            ids("SELECT id FROM rewinds")?,
        ))
    };
    read().map_err(StoreError::ctx("read the checkpoints"))
}

impl Db {
    /// Starts a turn (`Db::begin_turn`) with the checkpoint taken before it, stored after
    /// its prompt in the same transaction, so every stored turn of a checkpointed session
    /// has its checkpoint.
    pub(super) fn begin_checkpointed_turn(
        &mut self,
        session_id: &str,
        turn_id: &str,
        prompt: &crate::prompt::Prompt,
        checkpoint: Option<&NewCheckpoint>,
    ) -> Result<()> {
        self.begin_turn_then(session_id, turn_id, prompt, |tx, message_id, now| {
            let Some(checkpoint) = checkpoint else {
                return Ok(());
            };
            let text = &prompt.text;
            insert_checkpoint(tx, session_id, turn_id, text, message_id, checkpoint, now)
        })
    }

    fn end_checkpoint(
        &self,
        id: &str,
        end: Option<&str>,
        changed: Option<&Value>,
        error: Option<&str>,
    ) -> Result<()> {
        self.conn()
            .execute(
                "UPDATE checkpoints SET end_snapshot = ?2, changed = ?3, error = COALESCE(error, ?4) WHERE id = ?1",
                params![id, end, changed.map(Value::to_string), error],
            )
            .map(drop)
            .map_err(StoreError::ctx("end the checkpoint"))
    }

    fn checkpoints(&self, session_id: &str) -> Result<Vec<CheckpointRow>> {
        let sql = format!(
            "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE session_id = ?1 ORDER BY created_at, turn"
        );
        let read = || {
            let mut stmt = self.conn().prepare_cached(&sql)?;
            stmt.query_map(params![session_id], checkpoint_row)?
                .collect::<rusqlite::Result<Vec<_>>>()
        };
        read().map_err(StoreError::ctx("read the checkpoints"))
    }

    fn rewinds(&self, session_id: &str) -> Result<Vec<RewindRow>> {
        let read = || {
            let mut stmt = self.conn().prepare_cached(
                "SELECT id, session_id, checkpoint_id, kind, found, left_state, messages_hidden, created_at, undone \
                 FROM rewinds WHERE session_id = ?1 ORDER BY created_at, rowid",
            )?;
            stmt.query_map(params![session_id], rewind_row)?
                .collect::<rusqlite::Result<Vec<_>>>()
        };
        read().map_err(StoreError::ctx("read the rewinds"))
    }

    /// Records a rewind; with `hide_from` (a prompt's row), hides that message and every
    /// later one, and the checkpoints of their turns. Returns how many messages it hid.
    fn record_rewind(&mut self, rewind: &RewindRow, hide_from: Option<i64>) -> Result<i64> {
        let write = |tx: &Transaction<'_>| -> rusqlite::Result<i64> {
            let mut hidden = 0;
            if let Some(from) = hide_from {
                hidden = tx.execute(
                    "UPDATE messages SET hidden_by = ?3 WHERE session_id = ?1 AND id >= ?2 AND hidden_by IS NULL",
                    params![rewind.session_id, from, rewind.id],
                )?;
                tx.execute(
                    "UPDATE checkpoints SET hidden_by = ?3 WHERE session_id = ?1 AND message_id >= ?2 AND hidden_by IS NULL",
                    params![rewind.session_id, from, rewind.id],
                )?;
            }
            let hidden = i64::try_from(hidden).unwrap_or(i64::MAX);
            insert_rewind(tx, rewind, hidden)?;
            Ok(hidden)
        };
        let tx = self
            .conn_mut()
            .transaction()
            .map_err(StoreError::ctx("record the rewind"))?;
        let hidden = write(&tx).map_err(StoreError::ctx("record the rewind"))?;
        tx.commit().map_err(StoreError::ctx("record the rewind"))?;
        Ok(hidden)
    }

    /// Reverses rewind `undone`: its messages and checkpoints are visible again, and it is
    /// marked undone; `unrewind` is recorded. Returns how many messages came back.
    fn record_unrewind(&mut self, undone: &str, unrewind: &RewindRow) -> Result<i64> {
        let write = |tx: &Transaction<'_>| -> rusqlite::Result<i64> {
            let shown = tx.execute(
                "UPDATE messages SET hidden_by = NULL WHERE hidden_by = ?1",
                params![undone],
            )?;
            tx.execute(
                "UPDATE checkpoints SET hidden_by = NULL WHERE hidden_by = ?1",
                params![undone],
            )?;
            tx.execute(
                "UPDATE rewinds SET undone = 1 WHERE id = ?1",
                params![undone],
            )?;
            insert_rewind(tx, unrewind, 0)?;
            Ok(i64::try_from(shown).unwrap_or(i64::MAX))
        };
        let tx = self
            .conn_mut()
            .transaction()
            .map_err(StoreError::ctx("record the unrewind"))?;
        let shown = write(&tx).map_err(StoreError::ctx("record the unrewind"))?;
        tx.commit()
            .map_err(StoreError::ctx("record the unrewind"))?;
        Ok(shown)
    }

    /// Every checkpoint id and rewind id the store holds, for pruning snapshots.
    fn checkpoint_ids(&self) -> Result<(HashSet<String>, HashSet<String>)> {
        ids(self.conn())
    }

    /// A new session `new_id` titled `title`, in `source`'s cwd with its model and sandbox,
    /// holding a copy of `source`'s visible messages below row `before` (all with `None`).
    fn fork_session(
        &mut self,
        source: &SessionRow,
        new_id: &str,
        title: &str,
        before: Option<i64>,
    ) -> Result<SessionRow> {
        let now = now_ms();
        let sandbox = source.sandbox.and_then(|c| serde_json::to_string(&c).ok());
        let write = |tx: &Transaction<'_>| -> rusqlite::Result<i64> {
            tx.execute(
                "INSERT INTO sessions (id, title, cwd, model, created_at, updated_at, sandbox) VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)",
                params![new_id, title, source.cwd, source.model, now, sandbox],
            )?;
            copy_messages(tx, &source.id, new_id, before.unwrap_or(i64::MAX))
        };
        let tx = self
            .conn_mut()
            .transaction()
            .map_err(StoreError::ctx("fork the session"))?;
        let copied = write(&tx).map_err(StoreError::ctx("fork the session"))?;
        tx.commit().map_err(StoreError::ctx("fork the session"))?;
        Ok(SessionRow {
            id: new_id.to_owned(),
            title: Some(title.to_owned()),
            cwd: source.cwd.clone(),
            model: source.model.clone(),
            always_allow: Vec::new(),
            created_at: now,
            updated_at: now,
            message_count: copied,
            sandbox: source.sandbox,
            parent: None,
            // A fork starts asking again, whatever its source's mode.
            mode: zeroclaw_protocol::methods::PermissionMode::Default,
        })
    }
}

fn insert_rewind(tx: &Transaction<'_>, r: &RewindRow, hidden: i64) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO rewinds (id, session_id, checkpoint_id, kind, found, left_state, messages_hidden, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            r.id,
            r.session_id,
            r.checkpoint_id,
            r.kind,
            r.found,
            r.left_state,
            hidden,
            r.created_at
        ],
    )
    .map(drop)
}

/// Copies the visible messages of `from` below row `before` into `to`, their turns with
/// new ids; returns how many. A summary's `upTo` (a row id) is moved to the copy's row.
fn copy_messages(tx: &Transaction<'_>, from: &str, to: &str, before: i64) -> rusqlite::Result<i64> {
    let mut stmt = tx.prepare(
        "SELECT id, turn_id, step, kind, text, tool_call_id, tool_name, data, is_error, cancelled, created_at \
         FROM messages WHERE session_id = ?1 AND id < ?2 AND hidden_by IS NULL ORDER BY id",
    )?;
    type Copied = (
        i64,
        Option<String>,
        i64,
        String,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
        bool,
        bool,
        i64,
    );
    let rows: Vec<Copied> = stmt
        .query_map(params![from, before], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
                r.get(9)?,
                r.get(10)?,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut turns: HashMap<String, String> = HashMap::new();
    // Old row id → new row id, in order, for the summaries' `upTo`.
    let mut moved: Vec<(i64, i64)> = Vec::new();
    for (id, turn, step, kind, text, call, tool, data, is_error, cancelled, at) in rows {
        let turn = match turn {
            Some(old) => Some(match turns.get(&old) {
                Some(new) => new.clone(),
                None => {
                    let new = uuid::Uuid::new_v4().to_string();
                    copy_turn(tx, &old, &new, to)?;
                    turns.insert(old, new.clone());
                    new
                }
            }),
            None => None,
        };
        let data = match (kind.as_str(), data) {
            ("summary", Some(d)) => Some(moved_summary(&d, &moved)),
            (_, d) => d,
        };
        tx.execute(
            "INSERT INTO messages (session_id, turn_id, step, kind, text, tool_call_id, tool_name, data, is_error, cancelled, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![to, turn, step, kind, text, call, tool, data, is_error, cancelled, at],
        )?;
        let copy = tx.last_insert_rowid();
        if kind == "user" {
            super::attachments::copy(tx, to, id, copy)?;
        }
        moved.push((id, copy));
    }
    Ok(i64::try_from(moved.len()).unwrap_or(i64::MAX))
}

/// A summary's data with `upTo` moved to the copy of the last message it folds.
fn moved_summary(data: &str, moved: &[(i64, i64)]) -> String {
    let Ok(mut value) = serde_json::from_str::<Value>(data) else {
        return data.to_owned();
    };
    if let Some(up_to) = value.get("upTo").and_then(Value::as_i64) {
        let new = moved
            .iter()
            .take_while(|(old, _)| *old <= up_to)
            .last()
            .map_or(0, |(_, new)| *new);
        value["upTo"] = Value::from(new);
    }
    value.to_string()
}

fn copy_turn(tx: &Transaction<'_>, old: &str, new: &str, session: &str) -> rusqlite::Result<()> {
    // A turn still running in the source is not running in the fork.
    tx.execute(
        "INSERT INTO turns (id, session_id, status, error, input_tokens, output_tokens, started_at, ended_at) \
         SELECT ?2, ?3, CASE status WHEN 'running' THEN 'interrupted' ELSE status END, error, \
                input_tokens, output_tokens, started_at, ended_at FROM turns WHERE id = ?1",
        params![old, new, session],
    )
    .map(drop)
}

impl Store {
    /// Fills in the end of a turn's checkpoint: the snapshot after it and what it changed.
    pub async fn end_checkpoint(
        &self,
        id: &str,
        end: Option<String>,
        changed: Option<Value>,
        error: Option<String>,
    ) -> Result<()> {
        let id = id.to_owned();
        self.writer
            .run(move |db| {
                db.end_checkpoint(&id, end.as_deref(), changed.as_ref(), error.as_deref())
            })
            .await
    }

    /// A session's checkpoints, hidden ones included, oldest first.
    pub async fn checkpoints(&self, session_id: &str) -> Result<Vec<CheckpointRow>> {
        let session_id = session_id.to_owned();
        self.reader.run(move |db| db.checkpoints(&session_id)).await
    }

    /// A session's rewinds and unrewinds, oldest first.
    pub async fn rewinds(&self, session_id: &str) -> Result<Vec<RewindRow>> {
        let session_id = session_id.to_owned();
        self.reader.run(move |db| db.rewinds(&session_id)).await
    }

    /// See [`Db::record_rewind`].
    pub async fn record_rewind(&self, rewind: RewindRow, hide_from: Option<i64>) -> Result<i64> {
        self.writer
            .run(move |db| db.record_rewind(&rewind, hide_from))
            .await
    }

    /// See [`Db::record_unrewind`].
    pub async fn record_unrewind(&self, undone: &str, unrewind: RewindRow) -> Result<i64> {
        let undone = undone.to_owned();
        self.writer
            .run(move |db| db.record_unrewind(&undone, &unrewind))
            .await
    }

    /// Every checkpoint id and rewind id the store holds.
    pub async fn checkpoint_ids(&self) -> Result<(HashSet<String>, HashSet<String>)> {
        self.reader.run(|db| db.checkpoint_ids()).await
    }

    /// See [`Db::fork_session`].
    pub async fn fork_session(
        &self,
        source: SessionRow,
        new_id: &str,
        title: &str,
        before: Option<i64>,
    ) -> Result<SessionRow> {
        let (new_id, title) = (new_id.to_owned(), title.to_owned());
        self.writer
            .run(move |db| db.fork_session(&source, &new_id, &title, before))
            .await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::store::{MessageKind, NewMessage};
    use serde_json::json;

    #[test]
    fn a_prompts_first_line_is_its_first_non_blank_one_cut_to_200_characters() {
        assert_eq!(first_line("\n  \n  fix the bug \nthen more"), "fix the bug");
        assert_eq!(first_line(&"é".repeat(300)).chars().count(), 200);
        assert_eq!(first_line(""), "");
    }

    #[test]
    fn a_rewind_hides_from_its_prompt_on_and_an_unrewind_shows_them_again() {
        let (mut db, _) = Db::open_in_memory().unwrap();
        db.create_session("s", None, "/tmp", "m", None).unwrap();
        for n in 1..=3 {
            let cp = NewCheckpoint {
                id: format!("c{n}"),
                snapshot: Some(format!("{n:040}")),
                ..NewCheckpoint::default()
            };
            db.begin_checkpointed_turn(
                "s",
                &format!("t{n}"),
                &format!("prompt {n}\nmore").into(),
                Some(&cp),
            )
            .unwrap();
            let answer = NewMessage {
                turn_id: Some(format!("t{n}")),
                text: Some(format!("answer {n}")),
                ..NewMessage::default()
            };
            db.append("s", MessageKind::Assistant, &answer).unwrap();
        }
        let cps = db.checkpoints("s").unwrap();
        assert_eq!(cps.iter().map(|c| c.turn).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(cps[1].prompt, "prompt 2");
        let rewind = RewindRow {
            id: "u1".into(),
            session_id: "s".into(),
            checkpoint_id: Some("c2".into()),
            kind: "rewind".into(),
            found: None,
            left_state: None,
            messages_hidden: 0,
            created_at: 1,
            undone: false,
        };
        assert_eq!(db.record_rewind(&rewind, cps[1].message_id).unwrap(), 4);
        let context = db.context("s").unwrap();
        assert_eq!(context.len(), 2, "the first turn only");
        let (all, total) = db.messages("s", 100, None, true).unwrap();
        assert_eq!((all.len(), total), (6, 6));
        assert_eq!(all.iter().filter(|m| m.hidden).count(), 4);
        let hidden: Vec<bool> = db
            .checkpoints("s")
            .unwrap()
            .iter()
            .map(|c| c.hidden)
            .collect();
        assert_eq!(hidden, [false, true, true]);

        let fork = db.session("s").unwrap().unwrap();
        let forked = db.fork_session(&fork, "f", "fork of s", None).unwrap();
        assert_eq!(
            forked.message_count, 2,
            "only the visible messages are copied"
        );

        let unrewind = RewindRow {
            id: "u2".into(),
            kind: "unrewind".into(),
            ..rewind
        };
        assert_eq!(db.record_unrewind("u1", &unrewind).unwrap(), 4);
        assert_eq!(db.context("s").unwrap().len(), 6);
        assert!(db.rewinds("s").unwrap()[0].undone);
    }

    #[test]
    fn a_fork_moves_a_summarys_range_to_its_own_rows() {
        let (mut db, _) = Db::open_in_memory().unwrap();
        db.create_session("s", None, "/tmp", "m", None).unwrap();
        db.create_session("other", None, "/tmp", "m", None).unwrap();
        // Rows of another session in between, so the copies get other ids.
        for _ in 0..5 {
            db.begin_turn("other", &uuid::Uuid::new_v4().to_string(), "x")
                .unwrap();
        }
        db.begin_turn("s", "t1", "one").unwrap();
        let folded = db
            .append(
                "s",
                MessageKind::Assistant,
                &NewMessage {
                    turn_id: Some("t1".into()),
                    text: Some("a".into()),
                    ..NewMessage::default()
                },
            )
            .unwrap();
        let summary = NewMessage {
            text: Some("sum".into()),
            data: Some(json!({"upTo": folded, "folded": 2})),
            ..NewMessage::default()
        };
        db.append("s", MessageKind::Summary, &summary).unwrap();
        db.begin_turn("s", "t2", "two").unwrap();
        let source = db.session("s").unwrap().unwrap();
        db.fork_session(&source, "f", "fork", None).unwrap();
        let copy = db.history("f").unwrap();
        assert_eq!(copy.len(), 4);
        assert_eq!(copy[2].data.as_ref().unwrap()["upTo"], json!(copy[1].id));
        assert_eq!(
            db.context("f").unwrap().len(),
            2,
            "the summary and turn two"
        );
        assert_ne!(copy[0].turn_id.as_deref(), Some("t1"));
    }
}

//! The SQL: one connection's synchronous statements. Only the store's threads call these
//! (see `mod.rs`); each is one statement or one transaction.

use super::search::{self, Plan};
use super::{
    Cause, MessageKind, MessageRow, NewMessage, RawMessageRef, Result, SessionRow, StoreError,
    Usage,
};
use super::{attachments, clean_close, schema};
use crate::prompt::Prompt;
use crate::sandbox::Choice;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use zeroclaw_protocol::methods::PermissionMode;

pub(super) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

pub struct Db {
    conn: Connection,
    /// The writer's file: where closing records a clean close (`clean_close.rs`).
    file: Option<PathBuf>,
}

/// What opening the writer did besides opening it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Startup {
    /// Turns left running by a previous daemon, now marked `interrupted`.
    pub interrupted: usize,
    /// Whether `PRAGMA quick_check` read the file; `false`: it was as a clean close left
    /// it (`clean_close.rs`).
    pub checked: bool,
}

mod list;
pub use list::ListQuery;

const SESSION_COLUMNS: &str = "s.id, s.title, s.cwd, s.model, s.always_allow, s.created_at, s.updated_at, \
     (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id), s.sandbox, s.mode, \
     s.parent_session_id, s.parent_tool_call_id";

impl Db {
    pub(super) fn conn(&self) -> &Connection {
        &self.conn
    }

    pub(super) fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// The writer's connection: opens (creating if needed) the database, checks it, migrates
    /// it, and marks turns left running by a previous daemon as `interrupted`. Nothing is
    /// written before the checks pass: an empty file, a newer schema and a damaged file are
    /// refused as they are. The check reads every page, unless the file is as a clean close
    /// left it (`clean_close.rs`).
    pub fn open_writer(path: &Path) -> Result<(Self, Startup)> {
        if !path.exists() {
            create_whole(path)?;
        }
        refuse_empty(path)?;
        let unchanged = clean_close::unchanged(path);
        // Before anything can write the file: a daemon that dies from here leaves no
        // marker, and its successor checks the whole file.
        clean_close::forget(path)
            .map_err(|e| StoreError::file("open the database", &clean_close::path(path), e))?;
        let conn = Connection::open(path).map_err(StoreError::ctx("open the database"))?;
        schema::version(&conn)?;
        if !unchanged {
            // quick_check reads every page (it skips only the index-to-table cross-checks
            // of integrity_check): damage is found here, not by the first client to read it.
            let found = schema::damage(&conn, "quick_check")?;
            if !found.is_empty() {
                return Err(damaged(&found));
            }
        }
        let (db, interrupted) = Self::init(conn, Some(path.to_owned()))?;
        let startup = Startup {
            interrupted,
            checked: !unchanged,
        };
        Ok((db, startup))
    }

    /// A connection for reads only, beside the writer's (WAL lets them run side by side).
    pub fn open_reader(path: &Path) -> Result<Self> {
        let conn = Connection::open(path).map_err(StoreError::ctx("open the database"))?;
        schema::configure(&conn)?;
        Ok(Self { conn, file: None })
    }

    /// Closes the connection. The last connection to close checkpoints the WAL into the
    /// database file and removes it, so a stopped daemon leaves one self-contained file;
    /// the writer's (closed last) then records the clean close.
    pub fn close(self) -> Result<()> {
        self.conn
            .close()
            .map_err(|(_, e)| StoreError::ctx("close the database")(e))?;
        if let Some(file) = self.file {
            match clean_close::record(&file) {
                Ok(true) => {}
                Ok(false) => tracing::debug!("no clean-close marker: a WAL is left"),
                Err(e) => tracing::warn!(
                    error = %e,
                    "could not record the clean close; the next start checks the whole file"
                ),
            }
        }
        Ok(())
    }

    pub fn open_in_memory() -> Result<(Self, usize)> {
        let conn = Connection::open_in_memory().map_err(StoreError::ctx("open the database"))?;
        Self::init(conn, None)
    }

    fn init(mut conn: Connection, file: Option<PathBuf>) -> Result<(Self, usize)> {
        schema::configure(&conn)?;
        schema::migrate(&mut conn)?;
        // Read through the `turns_running` index: only the turns still running.
        let interrupted = conn
            .execute(
                "UPDATE turns SET status = 'interrupted', ended_at = ?1 WHERE status = 'running'",
                params![now_ms()],
            )
            .map_err(StoreError::ctx("mark interrupted turns"))?;
        Ok((Self { conn, file }, interrupted))
    }

    pub fn create_session(
        &self,
        id: &str,
        title: Option<&str>,
        cwd: &str,
        model: &str,
        sandbox: Option<Choice>,
    ) -> Result<SessionRow> {
        let now = now_ms();
        let sandbox_json = sandbox.and_then(|c| serde_json::to_string(&c).ok());
        self.conn
            .execute(
                "INSERT INTO sessions (id, title, cwd, model, created_at, updated_at, sandbox) VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)",
                params![id, title, cwd, model, now, sandbox_json],
            )
            .map_err(StoreError::ctx("create the session"))?;
        Ok(SessionRow {
            id: id.to_owned(),
            title: title.map(str::to_owned),
            cwd: cwd.to_owned(),
            model: model.to_owned(),
            always_allow: Vec::new(),
            created_at: now,
            updated_at: now,
            message_count: 0,
            sandbox,
            parent: None,
            mode: PermissionMode::Default,
        })
    }

    /// Marks the session `id` as the child of `parent`'s `task` call.
    pub fn set_parent(&self, id: &str, parent: &super::ParentRef) -> Result<()> {
        self.conn
            .execute(
                "UPDATE sessions SET parent_session_id = ?2, parent_tool_call_id = ?3 WHERE id = ?1",
                params![id, parent.session_id, parent.tool_call_id],
            )
            .map_err(StoreError::ctx("create the session"))?;
        Ok(())
    }

    pub fn session(&self, id: &str) -> Result<Option<SessionRow>> {
        let sql = format!("SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.id = ?1");
        self.conn
            .query_row(&sql, params![id], session_row)
            .optional()
            .map_err(StoreError::ctx("read the session"))
    }

    pub fn delete_session(&self, id: &str) -> Result<bool> {
        self.conn
            .execute("DELETE FROM sessions WHERE id = ?1", params![id])
            .map(|n| n > 0)
            .map_err(StoreError::ctx("delete the session"))
    }

    /// Sets (or with `None` clears) a session's title; `false` if there is no such session.
    /// `updated_at` stays: it is the time of the conversation's last message.
    pub fn rename_session(&self, id: &str, title: Option<&str>) -> Result<bool> {
        self.conn
            .execute(
                "UPDATE sessions SET title = ?2 WHERE id = ?1",
                params![id, title],
            )
            .map(|n| n > 0)
            .map_err(StoreError::ctx("rename the session"))
    }

    /// Sets a session's model; `false` if there is no such session. `updated_at` stays, as
    /// for a rename.
    pub fn set_session_model(&self, id: &str, model: &str) -> Result<bool> {
        self.conn
            .execute(
                "UPDATE sessions SET model = ?2 WHERE id = ?1",
                params![id, model],
            )
            .map(|n| n > 0)
            .map_err(StoreError::ctx("set the session's model"))
    }

    /// Sets a session's permission mode; `false` if there is no such session. `updated_at`
    /// stays, as for a rename.
    pub fn set_session_mode(&self, id: &str, mode: PermissionMode) -> Result<bool> {
        self.conn
            .execute(
                "UPDATE sessions SET mode = ?2 WHERE id = ?1",
                params![id, mode.as_str()],
            )
            .map(|n| n > 0)
            .map_err(StoreError::ctx("set the session's mode"))
    }

    pub fn set_always_allow(&self, id: &str, tools: &[String]) -> Result<()> {
        let json = serde_json::to_string(tools).unwrap_or_else(|_| "[]".into());
        self.conn
            .execute(
                "UPDATE sessions SET always_allow = ?2 WHERE id = ?1",
                params![id, json],
            )
            .map(drop)
            .map_err(StoreError::ctx("record an allow_always decision"))
    }

    /// Starts a turn: the turn row and the user's prompt, in one transaction. The daemon
    /// starts turns with their checkpoint (`checkpoints.rs`); tests without.
    #[cfg(test)]
    pub fn begin_turn(&mut self, session_id: &str, turn_id: &str, prompt: &str) -> Result<()> {
        let prompt = Prompt::from(prompt.to_owned());
        self.begin_turn_then(session_id, turn_id, &prompt, |_, _, _| Ok(()))
    }

    /// [`Db::begin_turn`], and `then` in the same transaction, given the prompt's row id
    /// and the time (`checkpoints.rs` stores the turn's checkpoint so).
    pub(super) fn begin_turn_then(
        &mut self,
        session_id: &str,
        turn_id: &str,
        prompt: &Prompt,
        then: impl FnOnce(&rusqlite::Transaction<'_>, i64, i64) -> rusqlite::Result<()>,
    ) -> Result<()> {
        let now = now_ms();
        let tx = self
            .conn
            .transaction()
            .map_err(StoreError::ctx("start the turn"))?;
        tx.execute(
            "INSERT INTO turns (id, session_id, status, started_at) VALUES (?1, ?2, 'running', ?3)",
            params![turn_id, session_id, now],
        )
        .map_err(StoreError::ctx("start the turn"))?;
        let message_id = insert_message(
            &tx,
            session_id,
            MessageKind::User,
            &NewMessage {
                turn_id: Some(turn_id.to_owned()),
                text: Some(prompt.text.clone()),
                data: attachments::message_data(&prompt.images),
                ..NewMessage::default()
            },
            now,
        )
        .map_err(StoreError::ctx("store the prompt"))?;
        attachments::insert(&tx, session_id, message_id, &prompt.images)
            .map_err(StoreError::ctx("store the prompt's images"))?;
        then(&tx, message_id, now).map_err(StoreError::ctx("store the checkpoint"))?;
        tx.commit().map_err(StoreError::ctx("start the turn"))
    }

    /// Appends a message; returns its row id, which grows with every message stored.
    pub fn append(
        &mut self,
        session_id: &str,
        kind: MessageKind,
        message: &NewMessage,
    ) -> Result<i64> {
        let tx = self
            .conn
            .transaction()
            .map_err(StoreError::ctx("store a message"))?;
        let id = insert_message(&tx, session_id, kind, message, now_ms())
            .map_err(StoreError::ctx("store a message"))?;
        tx.commit().map_err(StoreError::ctx("store a message"))?;
        Ok(id)
    }

    /// Ends a turn. A failed one (`error`) also leaves an `error` entry in its session's
    /// history, in the same transaction: a first prompt that failed (the provider down)
    /// leaves a session that says why it has no answer.
    pub fn finish_turn(
        &mut self,
        turn_id: &str,
        status: &str,
        usage: Option<Usage>,
        error: Option<&str>,
    ) -> Result<()> {
        let (input, output) = match usage {
            Some(u) => (Some(u.input_tokens as i64), Some(u.output_tokens as i64)),
            None => (None, None),
        };
        let now = now_ms();
        let write = |tx: &rusqlite::Transaction<'_>| {
            tx.execute(
                "UPDATE turns SET status = ?2, input_tokens = ?3, output_tokens = ?4, error = ?5, ended_at = ?6 WHERE id = ?1",
                params![turn_id, status, input, output, error, now],
            )?;
            let Some(error) = error else { return Ok(()) };
            let session: Option<String> = tx
                .query_row(
                    "SELECT session_id FROM turns WHERE id = ?1",
                    params![turn_id],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(session) = session {
                let entry = NewMessage {
                    turn_id: Some(turn_id.to_owned()),
                    text: Some(error.to_owned()),
                    is_error: true,
                    ..NewMessage::default()
                };
                insert_message(tx, &session, MessageKind::Error, &entry, now)?;
            }
            Ok(())
        };
        let tx = self
            .conn
            .transaction()
            .map_err(StoreError::ctx("finish the turn"))?;
        write(&tx).map_err(StoreError::ctx("finish the turn"))?;
        tx.commit().map_err(StoreError::ctx("finish the turn"))
    }

    #[cfg(test)]
    pub fn turn_status(&self, turn_id: &str) -> Result<Option<String>> {
        self.conn
            .query_row(
                "SELECT status FROM turns WHERE id = ?1",
                params![turn_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(StoreError::ctx("read the turn"))
    }

    /// A page of a session's messages in chronological order: the latest `limit` with an
    /// id below `before` (all, when `before` is `None`), and the session's total count;
    /// those a rewind hid only with `include_hidden`.
    pub fn messages(
        &self,
        session_id: &str,
        limit: usize,
        before: Option<i64>,
        include_hidden: bool,
    ) -> Result<(Vec<MessageRow>, i64)> {
        let total: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM messages WHERE session_id = ?1 AND (?2 OR hidden_by IS NULL)",
                params![session_id, include_hidden],
                |r| r.get(0),
            )
            .map_err(StoreError::ctx("count messages"))?;
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, turn_id, step, kind, text, tool_call_id, tool_name, data, is_error, cancelled, created_at, hidden_by IS NOT NULL \
                 FROM messages WHERE session_id = ?1 AND id < ?2 AND (?4 OR hidden_by IS NULL) \
                 ORDER BY id DESC LIMIT ?3",
            )
            .map_err(StoreError::ctx("read messages"))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut rows: Vec<MessageRow> = stmt
            .query_map(
                params![
                    session_id,
                    before.unwrap_or(i64::MAX),
                    limit,
                    include_hidden
                ],
                message_row,
            )
            .and_then(|rows| rows.collect())
            .map_err(StoreError::ctx("read messages"))?;
        rows.reverse();
        Ok((rows, total))
    }

    /// Up to `limit` of a session's messages with an id above `after`, oldest first: one
    /// page of a replay, read from the `messages_by_session` index.
    pub fn history_page(
        &self,
        session_id: &str,
        after: i64,
        limit: usize,
    ) -> Result<Vec<MessageRow>> {
        let mut rows = Vec::new();
        self.raw_page(session_id, after, limit, |row| {
            rows.push(row.to_owned_row().parse());
            ControlFlow::Continue(())
        })?;
        Ok(rows)
    }

    /// [`Db::history_page`], each row handed to `each` as the cursor holds it, until it
    /// says stop.
    pub fn raw_page(
        &self,
        session_id: &str,
        after: i64,
        limit: usize,
        mut each: impl FnMut(RawMessageRef<'_>) -> ControlFlow<()>,
    ) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, turn_id, step, kind, text, tool_call_id, tool_name, data, is_error, cancelled, created_at, hidden_by IS NOT NULL \
                 FROM messages WHERE session_id = ?1 AND id > ?2 AND hidden_by IS NULL ORDER BY id LIMIT ?3",
            )
            .map_err(StoreError::ctx("read messages"))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut rows = stmt
            .query(params![session_id, after, limit])
            .map_err(StoreError::ctx("read messages"))?;
        while let Some(row) = rows.next().map_err(StoreError::ctx("read messages"))? {
            if each(raw_message_ref(row).map_err(StoreError::ctx("read messages"))?).is_break() {
                break;
            }
        }
        Ok(())
    }

    /// The messages the model's conversation is built from: every one after the last
    /// message the newest `summary` folds (`data.upTo`), that summary included; the whole
    /// history when there is none. A turn of a long compacted session so reads what it
    /// sends, not the week behind it. Found by walking `messages_by_session` backwards from
    /// the newest message to the newest summary.
    pub fn context(&self, session_id: &str) -> Result<Vec<MessageRow>> {
        let summary: Option<(i64, Option<String>)> = self
            .conn
            .prepare_cached(
                "SELECT id, data FROM messages WHERE session_id = ?1 AND kind = 'summary' AND hidden_by IS NULL \
                 ORDER BY id DESC LIMIT 1",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![session_id], |row| Ok((row.get(0)?, row.get(1)?)))
                    .optional()
            })
            .map_err(StoreError::ctx("read messages"))?;
        let after = summary.map_or(0, |(id, data)| {
            data.and_then(|d| serde_json::from_str::<Value>(&d).ok())
                .and_then(|d| d.get("upTo")?.as_i64())
                // A summary without its range folds everything before it.
                .map_or(id - 1, |up_to| up_to.min(id - 1))
        });
        let mut rows = self.history_page(session_id, after, usize::MAX)?;
        attachments::attach_images(self.conn(), session_id, &mut rows)?;
        Ok(rows)
    }

    /// Every message of a session, oldest first. Only tests read a history whole: the
    /// daemon pages it (replays) or starts at the newest summary (turns).
    #[cfg(test)]
    pub fn history(&self, session_id: &str) -> Result<Vec<MessageRow>> {
        self.messages(session_id, usize::MAX, None, true)
            .map(|(rows, _)| rows)
    }

    /// Runs `sql` as is; for tests of how the store's threads take a failing statement.
    #[cfg(test)]
    pub fn execute_batch(&self, sql: &str) -> Result<()> {
        self.conn
            .execute_batch(sql)
            .map_err(StoreError::ctx("run a statement"))
    }
}

/// A file that exists and is empty is not a new database: something truncated it (or made
/// it), and starting afresh would hide that. `zeroclaw store recover` moves it aside.
/// Makes a new database beside `path` (`<name>.new-<pid>`), migrated and closed, then
/// renames it into place: a process killed while making it leaves no database, or a whole
/// one, never the empty file a later start would refuse. Leftovers of such a process are
/// removed first (the caller holds the daemon's lock, so none is being made).
fn create_whole(path: &Path) -> Result<()> {
    const ACTION: &str = "create the database";
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!("{name}.new-");
    let dir = path.parent().unwrap_or(Path::new("."));
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    let temp = dir.join(format!("{prefix}{}", std::process::id()));
    let mut conn = Connection::open(&temp).map_err(StoreError::ctx(ACTION))?;
    schema::configure(&conn)?;
    schema::migrate(&mut conn)?;
    // Closing the only connection checkpoints the WAL and removes it: one whole file.
    conn.close().map_err(|(_, e)| StoreError::ctx(ACTION)(e))?;
    std::fs::rename(&temp, path).map_err(|e| StoreError::file(ACTION, path, e))
}

pub fn refuse_empty(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.len() == 0 => {
            Err(StoreError::new("open the database", Cause::Empty))
        }
        _ => Ok(()),
    }
}

/// The error for what a check found: its first line, and how many more there are.
pub fn damaged(found: &[String]) -> StoreError {
    let first = found.first().map_or("", String::as_str);
    let more = match found.len() {
        0 | 1 => String::new(),
        n => format!(", and {} more", n - 1),
    };
    StoreError::new(
        "check the database",
        Cause::Damaged(format!("quick_check: {first}{more}")),
    )
}

fn session_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRow> {
    let always: String = row.get(4)?;
    Ok(SessionRow {
        id: row.get(0)?,
        title: row.get(1)?,
        cwd: row.get(2)?,
        model: row.get(3)?,
        always_allow: serde_json::from_str(&always).unwrap_or_default(),
        created_at: row.get(5)?,
        updated_at: row.get(6)?,
        message_count: row.get(7)?,
        // Written by this module only; an unreadable value follows `[sandbox]`, which a
        // session could only have narrowed.
        sandbox: row
            .get::<_, Option<String>>(8)?
            .and_then(|text| serde_json::from_str(&text).ok()),
        // Written by `set_session_mode` only; an unreadable value is the mode that asks.
        mode: PermissionMode::parse(&row.get::<_, String>(9)?).unwrap_or_default(),
        parent: match (row.get::<_, Option<String>>(10)?, row.get(11)?) {
            (Some(session_id), Some(tool_call_id)) => Some(super::ParentRef {
                session_id,
                tool_call_id,
            }),
            _ => None,
        },
    })
}

fn insert_message(
    tx: &rusqlite::Transaction<'_>,
    session_id: &str,
    kind: MessageKind,
    m: &NewMessage,
    now: i64,
) -> rusqlite::Result<i64> {
    let data = m.data.as_ref().map(Value::to_string);
    tx.execute(
        "INSERT INTO messages (session_id, turn_id, step, kind, text, tool_call_id, tool_name, data, is_error, cancelled, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            session_id,
            m.turn_id,
            m.step,
            kind.as_str(),
            m.text,
            m.tool_call_id,
            m.tool_name,
            data,
            m.is_error,
            m.cancelled,
            now
        ],
    )?;
    let id = tx.last_insert_rowid();
    tx.execute(
        "UPDATE sessions SET updated_at = ?2 WHERE id = ?1",
        params![session_id, now],
    )?;
    Ok(id)
}

fn message_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<MessageRow> {
    raw_message_ref(row).map(|r| r.to_owned_row().parse())
}

/// A row of the messages' `SELECT` (its twelve columns in order), borrowed.
fn raw_message_ref<'a>(row: &'a rusqlite::Row<'_>) -> rusqlite::Result<RawMessageRef<'a>> {
    let text = |i: usize| -> rusqlite::Result<Option<&'a str>> {
        row.get_ref(i)?.as_str_or_null().map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into())
        })
    };
    let kind = text(3)?.unwrap_or_default();
    Ok(RawMessageRef {
        id: row.get(0)?,
        turn_id: text(1)?,
        step: row.get(2)?,
        kind: MessageKind::parse(kind).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                3,
                rusqlite::types::Type::Text,
                format!("unknown message kind {kind:?}").into(),
            )
        })?,
        text: text(4)?,
        tool_call_id: text(5)?,
        tool_name: text(6)?,
        data: text(7)?,
        is_error: row.get(8)?,
        cancelled: row.get(9)?,
        created_at: row.get(10)?,
        hidden: row.get(11)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_new_database_is_made_whole_then_named_and_a_killed_starts_leftover_goes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("zeroclaw.db");
        // What a daemon killed while making its database leaves: not the database's name.
        std::fs::write(dir.path().join("zeroclaw.db.new-4242"), b"").unwrap();
        let (db, _) = Db::open_writer(&path).unwrap();
        db.create_session("s", None, "/tmp", "m", None).unwrap();
        db.close().unwrap();
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        // Beside it, only the record of its clean close (Unix: `clean_close.rs`).
        let expected: &[&str] = if cfg!(unix) {
            &["zeroclaw.db", "zeroclaw.db-closed"]
        } else {
            &["zeroclaw.db"]
        };
        assert_eq!(names, expected);
        let (db, _) = Db::open_writer(&path).unwrap();
        assert_eq!(db.count_sessions().unwrap(), 1);
    }

    #[test]
    fn a_clean_close_lets_the_next_open_skip_the_check_and_anything_else_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("zeroclaw.db");
        let (db, opened) = Db::open_writer(&path).unwrap();
        assert!(opened.checked, "a new file has no marker");
        db.create_session("s", None, "/tmp", "m", None).unwrap();
        db.close().unwrap();

        let (db, opened) = Db::open_writer(&path).unwrap();
        assert_eq!(opened.checked, cfg!(not(unix)), "only Unix trusts a marker");
        assert!(
            !clean_close::path(&path).exists(),
            "opened for writing: no marker until the next clean close"
        );
        // Dropped without closing, as a killed daemon leaves it: no marker, a full check.
        drop(db);
        let (db, opened) = Db::open_writer(&path).unwrap();
        assert!(opened.checked);
        db.close().unwrap();

        // Another connection left open at the close keeps the WAL: no marker either.
        let (db, _) = Db::open_writer(&path).unwrap();
        let other = Db::open_reader(&path).unwrap();
        db.create_session("t", None, "/tmp", "m", None).unwrap();
        db.close().unwrap();
        assert!(!clean_close::path(&path).exists());
        other.close().unwrap();
        let (db, opened) = Db::open_writer(&path).unwrap();
        assert!(opened.checked);
        assert_eq!(db.count_sessions().unwrap(), 2);
    }

    #[test]
    fn sessions_messages_and_turns_round_trip() {
        let (mut db, _) = Db::open_in_memory().unwrap();
        db.create_session("s1", Some("t"), "/tmp", "m", None)
            .unwrap();
        db.begin_turn("s1", "t1", "hello").unwrap();
        let input = json!({"command": "ls"});
        db.append(
            "s1",
            MessageKind::ToolCall,
            &NewMessage {
                turn_id: Some("t1".into()),
                step: 1,
                tool_call_id: Some("c1".into()),
                tool_name: Some("bash".into()),
                data: Some(input.clone()),
                ..NewMessage::default()
            },
        )
        .unwrap();
        db.finish_turn(
            "t1",
            "end_turn",
            Some(Usage {
                input_tokens: 3,
                output_tokens: 4,
            }),
            None,
        )
        .unwrap();
        let history = db.history("s1").unwrap();
        assert_eq!(history.len(), 2);
        assert_eq!(history[0].kind, MessageKind::User);
        assert_eq!(history[0].text.as_deref(), Some("hello"));
        assert_eq!(history[1].data, Some(input));
        assert_eq!(db.session("s1").unwrap().unwrap().message_count, 2);
        assert_eq!(db.turn_status("t1").unwrap().as_deref(), Some("end_turn"));
        let (page, total) = db.messages("s1", 1, None, false).unwrap();
        assert_eq!((page.len(), total), (1, 2));
        assert_eq!(page[0].kind, MessageKind::ToolCall);
        let (page, _) = db.messages("s1", 10, Some(page[0].id), false).unwrap();
        assert_eq!(page[0].kind, MessageKind::User);
        assert!(db.delete_session("s1").unwrap());
        assert!(db.history("s1").unwrap().is_empty());
        assert!(!db.delete_session("s1").unwrap());
    }

    #[test]
    fn a_turns_context_is_every_message_after_the_newest_summarys_range() {
        let (mut db, _) = Db::open_in_memory().unwrap();
        db.create_session("s", None, "/tmp", "m", None).unwrap();
        let turn = |db: &mut Db, n: usize| {
            let turn_id = format!("t{n}");
            db.begin_turn("s", &turn_id, &format!("prompt {n}"))
                .unwrap();
            let call = NewMessage {
                turn_id: Some(turn_id.clone()),
                step: 1,
                tool_call_id: Some(format!("c{n}")),
                tool_name: Some("bash".into()),
                data: Some(json!({"command": "ls"})),
                ..NewMessage::default()
            };
            db.append("s", MessageKind::ToolCall, &call).unwrap();
            let result = NewMessage {
                data: Some(json!("x".repeat(5000))),
                ..call
            };
            db.append("s", MessageKind::ToolResult, &result).unwrap();
            let answer = NewMessage {
                turn_id: Some(turn_id.clone()),
                step: 2,
                text: Some(format!("answer {n}")),
                ..NewMessage::default()
            };
            db.append("s", MessageKind::Assistant, &answer).unwrap()
        };
        for n in 0..3 {
            turn(&mut db, n);
        }
        // No summary yet: the context is the whole history.
        assert_eq!(db.context("s").unwrap(), db.history("s").unwrap());
        let summarise = |db: &mut Db, up_to: i64| {
            let summary = NewMessage {
                text: Some(format!("up to {up_to}")),
                data: Some(json!({"upTo": up_to, "folded": up_to})),
                ..NewMessage::default()
            };
            db.append("s", MessageKind::Summary, &summary).unwrap()
        };
        let first_folds = turn(&mut db, 3);
        turn(&mut db, 4);
        summarise(&mut db, first_folds);
        turn(&mut db, 5);
        let second_folds = turn(&mut db, 6);
        turn(&mut db, 7);
        summarise(&mut db, second_folds);
        turn(&mut db, 8);

        let context = db.context("s").unwrap();
        assert_eq!(
            context[0].id,
            second_folds + 1,
            "starts after the range folded"
        );
        let whole = db.history("s").unwrap();
        assert!(context.len() < whole.len() / 2);
        // Every message after the range, the newest summary among them: that the model is
        // sent the same conversation from these as from the whole history is `history`'s
        // test (`a_summary_stands_for_what_it_folds_and_old_outputs_are_cut`).
        let after: Vec<MessageRow> = whole.into_iter().filter(|r| r.id > second_folds).collect();
        assert_eq!(context, after);
    }

    #[test]
    fn reopening_marks_running_turns_interrupted_and_keeps_history() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.db");
        {
            let (mut db, opened) = Db::open_writer(&path).unwrap();
            assert_eq!(opened.interrupted, 0);
            db.create_session("s", None, "/", "m", None).unwrap();
            db.begin_turn("s", "t", "hi").unwrap();
        }
        let (db, opened) = Db::open_writer(&path).unwrap();
        assert_eq!(opened.interrupted, 1);
        assert_eq!(db.turn_status("t").unwrap().as_deref(), Some("interrupted"));
        assert_eq!(db.history("s").unwrap().len(), 1);
    }
}

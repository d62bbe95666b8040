//! The SQL: one connection's synchronous statements. Only the store's threads call these
//! (see `mod.rs`); each is one statement or one transaction.

use super::search::{self, Plan};
use super::{Cause, MessageKind, MessageRow, NewMessage, Result, SessionRow, StoreError, Usage};
use super::{attachments, clean_close, schema};
use crate::prompt::Prompt;
use crate::sandbox::Choice;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
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

    /// Up to `limit` sessions, most recently updated first, then by id; with `after` (a
    /// row's `updated_at` and `id`), the ones that come after that row in this order; with
    /// `search`, only those whose title or cwd contains it (ASCII letters in any case).
    /// Without a search, read in the order of the `sessions_by_update` index, so a page
    /// costs the rows it passes, never a sort of them all; a search reads what its plan
    /// says (`search.rs`). Subagents' sessions only with `children`.
    pub fn sessions_page(
        &self,
        after: Option<(i64, &str)>,
        search: Option<&str>,
        children: bool,
        limit: usize,
    ) -> Result<Vec<SessionRow>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let plan = match search {
            Some(text) => Some(
                Plan::of(text, |query| self.index_matches(query))
                    .map_err(StoreError::ctx("search sessions"))?,
            ),
            None => None,
        };
        let after_sql = match after {
            None => "?2 IS NULL AND ?3 IS NULL",
            Some(_) => "(s.updated_at < ?2 OR (s.updated_at = ?2 AND s.id > ?3))",
        };
        // LIKE, not `instr(lower(…))`: it folds ASCII case as it compares, where `lower()`
        // made a copy of each title and cwd it passed (twice as slow on 10,000 sessions).
        let search_sql = match search {
            None => "?4 IS NULL",
            Some(_) => r"(s.title LIKE ?4 ESCAPE '\' OR s.cwd LIKE ?4 ESCAPE '\')",
        };
        let children_sql = if children {
            ""
        } else {
            " AND s.parent_session_id IS NULL"
        };
        // The candidates first (CROSS JOIN keeps that order of the loops): each is found by
        // its rowid, and only they are sorted.
        let from_sql = match plan {
            Some(Plan::Candidates(_)) => {
                "sessions_search CROSS JOIN sessions s ON s.rowid = sessions_search.rowid \
                 WHERE sessions_search MATCH ?5 AND"
            }
            _ => "sessions s WHERE",
        };
        let sql = format!(
            "SELECT {SESSION_COLUMNS} FROM {from_sql} {after_sql} AND {search_sql}{children_sql} \
             ORDER BY s.updated_at DESC, s.id LIMIT ?1"
        );
        let (at, id) = after.unzip();
        let pattern = search.map(search::contains_pattern);
        let read = || {
            let mut stmt = self.conn.prepare_cached(&sql)?;
            match &plan {
                Some(Plan::Candidates(query)) => {
                    stmt.query_map(params![limit, at, id, pattern, query], session_row)
                }
                _ => stmt.query_map(params![limit, at, id, pattern], session_row),
            }?
            .collect::<rusqlite::Result<Vec<_>>>()
        };
        read().map_err(StoreError::ctx("list sessions"))
    }

    /// How many sessions the search index matches for the FTS5 `query`, counting no
    /// further than one past [`search::CANDIDATES`].
    fn index_matches(&self, query: &str) -> rusqlite::Result<usize> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT count(*) FROM \
             (SELECT 1 FROM sessions_search WHERE sessions_search MATCH ?1 LIMIT ?2)",
        )?;
        let most = i64::try_from(search::CANDIDATES + 1).unwrap_or(i64::MAX);
        let count: i64 = stmt.query_row(params![query, most], |r| r.get(0))?;
        Ok(usize::try_from(count).unwrap_or(usize::MAX))
    }

    /// The ids starting with `prefix`, in order, at most `limit`: read along the primary
    /// key from the prefix on, stopping at the first id past it, so it costs the matches.
    pub fn session_ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<String>> {
        let read = || {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT id FROM sessions WHERE id >= ?1 ORDER BY id")?;
            let mut rows = stmt.query(params![prefix])?;
            let mut ids = Vec::new();
            while let Some(row) = rows.next()? {
                let id: String = row.get(0)?;
                if !id.starts_with(prefix) || ids.len() == limit {
                    break;
                }
                ids.push(id);
            }
            Ok(ids)
        };
        read().map_err(StoreError::ctx("find sessions by id prefix"))
    }

    pub fn count_sessions(&self) -> Result<i64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))
            .map_err(StoreError::ctx("count sessions"))
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
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, turn_id, step, kind, text, tool_call_id, tool_name, data, is_error, cancelled, created_at, hidden_by IS NOT NULL \
                 FROM messages WHERE session_id = ?1 AND id > ?2 AND hidden_by IS NULL ORDER BY id LIMIT ?3",
            )
            .map_err(StoreError::ctx("read messages"))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        stmt.query_map(params![session_id, after, limit], message_row)
            .and_then(|rows| rows.collect())
            .map_err(StoreError::ctx("read messages"))
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
    let kind: String = row.get(3)?;
    let data: Option<String> = row.get(7)?;
    Ok(MessageRow {
        id: row.get(0)?,
        turn_id: row.get(1)?,
        step: row.get(2)?,
        kind: MessageKind::parse(&kind).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                3,
                rusqlite::types::Type::Text,
                format!("unknown message kind {kind:?}").into(),
            )
        })?,
        text: row.get(4)?,
        tool_call_id: row.get(5)?,
        tool_name: row.get(6)?,
        data: data.and_then(|d| serde_json::from_str(&d).ok()),
        is_error: row.get(8)?,
        cancelled: row.get(9)?,
        created_at: row.get(10)?,
        hidden: row.get(11)?,
        images: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_search_matches_its_wildcards_literally_and_letters_in_any_case() {
        let (db, _) = Db::open_in_memory().unwrap();
        for (id, title) in [
            ("a", "100% Done"),
            ("b", "1000 done"),
            ("c", "snake_case"),
            ("d", "snakeXcase"),
            ("e", r"back\slash"),
        ] {
            db.create_session(id, Some(title), "/tmp", "m", None)
                .unwrap();
        }
        let found = |search: &str| {
            let mut ids: Vec<String> = db
                .sessions_page(None, Some(search), false, 10)
                .unwrap()
                .into_iter()
                .map(|row| row.id)
                .collect();
            ids.sort();
            ids
        };
        assert_eq!(found("0% d"), ["a"]);
        assert_eq!(found("DONE"), ["a", "b"]);
        assert_eq!(found("e_c"), ["c"]);
        assert_eq!(found(r"k\s"), ["e"]);
        assert_eq!(found("%"), ["a"]);
        assert_eq!(
            found("TMP"),
            ["a", "b", "c", "d", "e"],
            "the cwd is searched too"
        );
    }

    #[test]
    fn session_pages_follow_each_other_from_the_index_without_sorting() {
        let (db, _) = Db::open_in_memory().unwrap();
        for n in 0..7 {
            db.create_session(&format!("s{n}"), None, "/tmp", "m", None)
                .unwrap();
        }
        // Same `updated_at` for some: the id orders them.
        db.execute_batch("UPDATE sessions SET updated_at = 5 WHERE id IN ('s1', 's2', 's3')")
            .unwrap();
        let mut seen = Vec::new();
        let mut after: Option<(i64, String)> = None;
        loop {
            let page = db
                .sessions_page(
                    after.as_ref().map(|(at, id)| (*at, id.as_str())),
                    None,
                    false,
                    3,
                )
                .unwrap();
            let Some(last) = page.last() else { break };
            after = Some((last.updated_at, last.id.clone()));
            seen.extend(page.iter().map(|row| row.id.clone()));
        }
        let distinct: std::collections::HashSet<&String> = seen.iter().collect();
        assert_eq!((seen.len(), distinct.len()), (7, 7), "{seen:?}");
        assert_eq!(&seen[4..], ["s1", "s2", "s3"], "{seen:?}");

        let plan: Vec<String> = db
            .conn
            .prepare(
                "EXPLAIN QUERY PLAN SELECT id FROM sessions s \
                 WHERE s.updated_at < 1 OR (s.updated_at = 1 AND s.id > 'x') \
                 ORDER BY s.updated_at DESC, s.id LIMIT 3",
            )
            .unwrap()
            .query_map([], |r| r.get(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let plan = plan.join("; ");
        assert!(
            plan.contains("sessions_by_update") && !plan.contains("TEMP B-TREE"),
            "{plan}"
        );
    }

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

    /// The search's answer, read page by page (`per_page` at a time, the cursor from each
    /// page's last row), must be the whole list filtered by the rule it promises: the
    /// title or the cwd contains the text, ASCII letters in any case, the rest as is.
    fn assert_search_is_the_rule(db: &Db, search: &str, per_page: usize) -> Vec<String> {
        let mut paged = Vec::new();
        let mut after: Option<(i64, String)> = None;
        loop {
            let page = db
                .sessions_page(
                    after.as_ref().map(|(at, id)| (*at, id.as_str())),
                    Some(search),
                    false,
                    per_page,
                )
                .unwrap();
            let Some(last) = page.last() else { break };
            after = Some((last.updated_at, last.id.clone()));
            paged.extend(page.into_iter().map(|row| row.id));
        }
        let needle = search.to_ascii_lowercase();
        let holds = |text: &str| text.to_ascii_lowercase().contains(&needle);
        let expected: Vec<String> = db
            .sessions_page(None, None, false, usize::MAX)
            .unwrap()
            .into_iter()
            .filter(|row| row.title.as_deref().is_some_and(holds) || holds(&row.cwd))
            .map(|row| row.id)
            .collect();
        assert_eq!(paged, expected, "search {search:?}, {per_page} a page");
        paged
    }

    #[test]
    fn a_search_through_the_index_finds_what_the_like_rule_finds_in_list_order() {
        let (db, _) = Db::open_in_memory().unwrap();
        let titles = [
            "Fix the Parser",
            "fix the parser again",
            "PARSER rewrite",
            "ÉTÉ plans",
            "été plans",
            "100% Done",
            "snake_case",
            r"back\slash",
            "say \"hi\" twice",
            "ab",
        ];
        for n in 0..60 {
            let title = titles[n % titles.len()];
            let cwd = format!("/home/dev/Project-{}", n % 7);
            db.create_session(&format!("s{n:02}"), Some(title), &cwd, "m", None)
                .unwrap();
        }
        // Some share a time: the id orders them, across pages too.
        db.conn
            .execute_batch("UPDATE sessions SET updated_at = 7 WHERE id < 's20'")
            .unwrap();
        db.rename_session("s03", Some("renamed to parser")).unwrap();
        db.rename_session("s02", None).unwrap();
        db.delete_session("s00").unwrap();
        for search in [
            "parser",
            "PARSER",
            "Parser r",
            "project-3",
            "PROJECT",
            "été",
            "ÉTÉ",
            "Été",
            "0% d",
            "e_c",
            r"k\s",
            "\"hi\"",
            "renamed",
            "no such thing",
            "ab",
            "a",
            "%",
            "_",
            "é",
        ] {
            for per_page in [1, 4, 100] {
                assert_search_is_the_rule(&db, search, per_page);
            }
        }
        // The rule itself, spelled out: ASCII letters fold, others do not; wildcards are
        // themselves; the renamed and the deleted are found as they are now.
        assert_eq!(assert_search_is_the_rule(&db, "été", 100).len(), 6);
        assert_eq!(
            assert_search_is_the_rule(&db, "ÉTÉ", 100).len(),
            5,
            "s03 was renamed"
        );
        assert_eq!(assert_search_is_the_rule(&db, "renamed", 100), ["s03"]);
        let parser = assert_search_is_the_rule(&db, "parser", 100);
        assert!(parser.contains(&"s03".to_owned()) && !parser.contains(&"s02".to_owned()));
        assert!(!parser.contains(&"s00".to_owned()));
    }

    #[test]
    fn a_search_matching_more_than_the_candidates_reads_the_list_in_order() {
        let (db, _) = Db::open_in_memory().unwrap();
        let n = search::CANDIDATES * 3 / 2 + 100;
        for i in 0..n {
            let title = if i % 3 == 0 {
                "Other work"
            } else {
                "Common task"
            };
            db.create_session(&format!("s{i:05}"), Some(title), "/tmp", "m", None)
                .unwrap();
        }
        let count = |text: &str| db.index_matches(&search::fts_query(text).unwrap()).unwrap();
        assert_eq!(count("common"), search::CANDIDATES + 1, "counts no further");
        assert!(count("other") <= search::CANDIDATES);
        for (search, per_page) in [("COMMON", 300), ("other", 100), ("task", 1000)] {
            assert_search_is_the_rule(&db, search, per_page);
        }
    }

    #[test]
    fn a_rare_search_reads_its_candidates_by_rowid_and_marking_turns_reads_only_running_ones() {
        let (db, _) = Db::open_in_memory().unwrap();
        let plan = |sql: &str| -> String {
            let rows: Vec<String> = db
                .conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap()
                .query_map([], |r| r.get(3))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            rows.join("; ")
        };
        let search = plan(
            "SELECT s.id FROM sessions_search CROSS JOIN sessions s \
             ON s.rowid = sessions_search.rowid WHERE sessions_search MATCH '\"abc\"' \
             ORDER BY s.updated_at DESC, s.id LIMIT 3",
        );
        assert!(
            search.contains("VIRTUAL TABLE INDEX") && search.contains("rowid=?"),
            "{search}"
        );
        let interrupted = plan("UPDATE turns SET status = 'interrupted' WHERE status = 'running'");
        assert!(interrupted.contains("turns_running"), "{interrupted}");
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

//! Persistence: one SQLite file in the data dir (WAL, versioned migrations), off the async
//! reactor.
//!
//! Two threads own the database: the writer, with the connection every write goes
//! through, and a reader with a second connection for the reads clients ask for (the session
//! list, a replay, a page of messages), so a long read never waits behind a turn's writes
//! and no reactor thread ever waits on the disk. [`Store`] is the async handle to both; each
//! thread's queue is bounded (see `worker.rs` for the bound and the overflow rule). An
//! in-memory database has one connection, so there the reader is the writer.
//!
//! One writer means message row ids grow in commit order: a read that does not see a
//! message sees none stored after it. Joining a running session depends on that (see
//! `session/audience.rs`).
//!
//! Each message is written when it completes, in its own transaction, so a daemon killed
//! mid-turn restarts with the history intact up to the last completed step; the turn that
//! was running is marked `interrupted` when the store is next opened. API keys are never
//! written here: nothing in the schema holds configuration.
//!
//! The file is not trusted: opening it refuses an empty file, a schema newer than ours and
//! a file `PRAGMA quick_check` finds damaged, each with a message that says what to do
//! (`zeroclaw store check|backup|recover`, in `repair.rs`). A statement that meets damage
//! later says the same. The check reads every page, so it is skipped for a file that is as
//! the last daemon's clean close left it (`clean_close.rs`): start-up does not grow with
//! the store.

mod attachments;
mod checkpoints;
mod clean_close;
mod db;
pub mod repair;
mod runs;
mod schema;
mod search;
mod tokens;
mod usage;
mod worker;

pub use attachments::refs as image_refs;
pub use checkpoints::{CheckpointRow, NewCheckpoint, RewindRow, checkpoint_ids_in, first_line};
pub use db::ListQuery;
pub use runs::{Dedup, RunOutcome, RunRow, RunStatus};
pub use tokens::TokenRow;
pub use usage::SessionUsage;

use db::Db;
use serde_json::Value;
use std::path::{Path, PathBuf};
use worker::Worker;
pub use zeroclaw_protocol::{MessageKind, Usage};

#[derive(Debug, thiserror::Error)]
#[error("storage error while trying to {action}: {cause}")]
pub struct StoreError {
    action: &'static str,
    cause: Cause,
}

#[derive(Debug, thiserror::Error)]
enum Cause {
    #[error(transparent)]
    Sql(rusqlite::Error),
    #[error("the store thread did not answer")]
    NoAnswer,
    #[error("cannot start the store thread: {0}")]
    Thread(std::io::Error),
    #[error(
        "the file is empty (0 bytes): it holds no sessions, and was left as it is. If that is \
         expected, `zeroclaw store recover` moves it aside and creates a new database"
    )]
    Empty,
    #[error(
        "its schema version is {found}, newer than this zeroclaw's ({ours}): a newer zeroclaw \
         wrote it. Run that version, or a copy of the data dir made for this one"
    )]
    Newer { found: i64, ours: usize },
    #[error(
        "the file is damaged ({0}). The daemon does not write into a damaged database: stop \
         every daemon on this data dir, then `zeroclaw store check` lists the damage and \
         `zeroclaw store recover` rebuilds the database from what can still be read, keeping \
         the damaged file beside it"
    )]
    Damaged(String),
    #[error("there is no database at {}", .0.display())]
    Missing(PathBuf),
    #[error("{} already exists; it was left as it is", .0.display())]
    Exists(PathBuf),
    #[error("{}: {source}", path.display())]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl StoreError {
    /// Wraps a SQLite error; one that reports damage carries the way to recover.
    fn ctx(action: &'static str) -> impl FnOnce(rusqlite::Error) -> Self {
        move |source| Self {
            action,
            cause: if is_damage(&source) {
                Cause::Damaged(source.to_string())
            } else {
                Cause::Sql(source)
            },
        }
    }

    fn new(action: &'static str, cause: Cause) -> Self {
        Self { action, cause }
    }

    fn file(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        let path = path.to_owned();
        Self::new(
            action,
            match source.kind() {
                std::io::ErrorKind::NotFound => Cause::Missing(path),
                std::io::ErrorKind::AlreadyExists => Cause::Exists(path),
                _ => Cause::File { path, source },
            },
        )
    }

    fn no_answer() -> Self {
        Self {
            action: "use the database",
            cause: Cause::NoAnswer,
        }
    }

    fn thread(e: std::io::Error) -> Self {
        Self {
            action: "open the database",
            cause: Cause::Thread(e),
        }
    }
}

/// Whether SQLite says the file is damaged (or not a database at all).
fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

type Result<T> = std::result::Result<T, StoreError>;

/// The database's file name in the data dir.
pub const FILE_NAME: &str = "zeroclaw.db";

#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub id: String,
    pub title: Option<String>,
    pub cwd: String,
    pub model: String,
    pub always_allow: Vec<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub message_count: i64,
    /// The session's own sandbox; `None`: it follows `[sandbox]`.
    pub sandbox: Option<crate::sandbox::Choice>,
    /// The session's permission mode (`session/set_mode`).
    pub mode: zeroclaw_protocol::methods::PermissionMode,
    /// A subagent's session: the session and the `task` call that made it.
    pub parent: Option<ParentRef>,
}

/// The `task` call a child session was made by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParentRef {
    pub session_id: String,
    pub tool_call_id: String,
}

/// One stored message. `data` is a tool call's input or a tool result's output.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRow {
    /// Grows with every message stored (see the module docs).
    pub id: i64,
    pub turn_id: Option<String>,
    pub step: i64,
    pub kind: MessageKind,
    pub text: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub data: Option<Value>,
    pub is_error: bool,
    pub cancelled: bool,
    pub created_at: i64,
    /// A rewind hid it: the model is no longer sent it (`checkpoints.rs`).
    pub hidden: bool,
    /// A prompt's images, read only for the model (`Store::context`); elsewhere empty
    /// (`image_refs` lists them from `data`).
    pub images: Vec<crate::prompt::Image>,
}

impl MessageRow {
    /// A row of turn `turn` with nothing but its kind, for tests to fill in.
    #[cfg(test)]
    pub fn bare(id: i64, turn: &str, step: i64, kind: MessageKind) -> Self {
        Self {
            id,
            turn_id: Some(turn.into()),
            step,
            kind,
            text: None,
            tool_call_id: None,
            tool_name: None,
            data: None,
            is_error: false,
            cancelled: false,
            created_at: 0,
            hidden: false,
            images: Vec::new(),
        }
    }
}

/// One stored message as the store holds it: `data` still its JSON text. A replay frames
/// most rows from this directly, splicing the text into the frame instead of parsing it
/// and writing it again (`session/replay_frame.rs`); [`RawMessageRow::parse`] makes the
/// [`MessageRow`] everything else reads.
#[derive(Debug, Clone, PartialEq)]
pub struct RawMessageRow {
    pub id: i64,
    pub turn_id: Option<String>,
    pub step: i64,
    pub kind: MessageKind,
    pub text: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    /// The stored JSON text, unchecked: it may be damaged ([`RawMessageRow::parse`] then
    /// reads it as no data, as the rest of the daemon always has).
    pub data: Option<String>,
    pub is_error: bool,
    pub cancelled: bool,
    pub created_at: i64,
    pub hidden: bool,
}

/// A [`RawMessageRow`] borrowed from the store's cursor: what a replay frames without an
/// allocation per column (`Store::replay_page`).
#[derive(Debug, Clone, Copy)]
pub struct RawMessageRef<'a> {
    pub id: i64,
    pub turn_id: Option<&'a str>,
    pub step: i64,
    pub kind: MessageKind,
    pub text: Option<&'a str>,
    pub tool_call_id: Option<&'a str>,
    pub tool_name: Option<&'a str>,
    pub data: Option<&'a str>,
    pub is_error: bool,
    pub cancelled: bool,
    pub created_at: i64,
    pub hidden: bool,
}

impl RawMessageRef<'_> {
    pub fn to_owned_row(&self) -> RawMessageRow {
        RawMessageRow {
            id: self.id,
            turn_id: self.turn_id.map(Into::into),
            step: self.step,
            kind: self.kind,
            text: self.text.map(Into::into),
            tool_call_id: self.tool_call_id.map(Into::into),
            tool_name: self.tool_name.map(Into::into),
            data: self.data.map(Into::into),
            is_error: self.is_error,
            cancelled: self.cancelled,
            created_at: self.created_at,
            hidden: self.hidden,
        }
    }
}

impl RawMessageRow {
    pub fn parse(self) -> MessageRow {
        MessageRow {
            id: self.id,
            turn_id: self.turn_id,
            step: self.step,
            kind: self.kind,
            text: self.text,
            tool_call_id: self.tool_call_id,
            tool_name: self.tool_name,
            data: self.data.and_then(|d| serde_json::from_str(&d).ok()),
            is_error: self.is_error,
            cancelled: self.cancelled,
            created_at: self.created_at,
            hidden: self.hidden,
            images: Vec::new(),
        }
    }
}

/// A message about to be written (owned: it travels to the writer thread).
#[derive(Debug, Clone, Default)]
pub struct NewMessage {
    pub turn_id: Option<String>,
    pub step: i64,
    pub text: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub data: Option<Value>,
    pub is_error: bool,
    pub cancelled: bool,
}

/// An opened store, and what opening it found.
pub struct Opened {
    pub store: Store,
    /// Turns a previous daemon left running, now marked `interrupted`.
    pub interrupted: usize,
    /// How many sessions the store holds.
    pub sessions: i64,
    /// Whether opening read every page (`PRAGMA quick_check`); `false`: the file was as a
    /// clean close left it, and was trusted (see `clean_close.rs`).
    pub checked: bool,
}

/// The async handle to the store's threads; clones share them. The threads end when the
/// last handle is dropped.
#[derive(Clone)]
pub struct Store {
    writer: Worker,
    reader: Worker,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Store")
    }
}

impl Store {
    /// Opens (creating if needed) the database at `path`, checks it (see the module docs),
    /// migrates it, marks turns left running as `interrupted`, and starts the threads. It blocks on the disk: call it
    /// before serving, or from `spawn_blocking`. Both connections are opened here, so a
    /// daemon that later runs out of file descriptors still reaches its database.
    pub fn open(path: &Path) -> Result<Opened> {
        let (writer, startup) = Db::open_writer(path)?;
        let reader = Db::open_reader(path)?;
        // The first read opens the reader's WAL files too.
        let sessions = reader.count_sessions()?;
        Ok(Opened {
            store: Self {
                writer: Worker::spawn("zeroclaw-store", writer)?,
                reader: Worker::spawn("zeroclaw-store-read", reader)?,
            },
            interrupted: startup.interrupted,
            sessions,
            checked: startup.checked,
        })
    }

    /// Finishes the queued work and closes both connections, the writer's last so that it
    /// checkpoints the WAL into the file. Calls after this fail with "no answer".
    pub async fn close(&self) {
        self.reader.close().await;
        self.writer.close().await;
    }

    /// A fresh database in memory: one connection, so one thread for reads and writes.
    pub fn open_in_memory() -> Result<Opened> {
        let (db, interrupted) = Db::open_in_memory()?;
        let sessions = db.count_sessions()?;
        let worker = Worker::spawn("zeroclaw-store", db)?;
        Ok(Opened {
            store: Self {
                writer: worker.clone(),
                reader: worker,
            },
            interrupted,
            sessions,
            checked: false,
        })
    }

    pub async fn create_session(
        &self,
        id: &str,
        title: Option<&str>,
        cwd: &str,
        model: &str,
    ) -> Result<SessionRow> {
        self.create_session_with(id, title, cwd, model, None).await
    }

    /// [`Store::create_session`] with the session's own sandbox (`None`: `[sandbox]`'s).
    pub async fn create_session_with(
        &self,
        id: &str,
        title: Option<&str>,
        cwd: &str,
        model: &str,
        sandbox: Option<crate::sandbox::Choice>,
    ) -> Result<SessionRow> {
        self.create_child_session(id, title, cwd, model, sandbox, None)
            .await
    }

    /// [`Store::create_session_with`] for a subagent's session, made by `parent`.
    pub async fn create_child_session(
        &self,
        id: &str,
        title: Option<&str>,
        cwd: &str,
        model: &str,
        sandbox: Option<crate::sandbox::Choice>,
        parent: Option<ParentRef>,
    ) -> Result<SessionRow> {
        let (id, title, cwd, model) = (
            id.to_owned(),
            title.map(str::to_owned),
            cwd.to_owned(),
            model.to_owned(),
        );
        self.writer
            .run(move |db| {
                let mut row = db.create_session(&id, title.as_deref(), &cwd, &model, sandbox)?;
                if let Some(parent) = parent {
                    db.set_parent(&id, &parent)?;
                    row.parent = Some(parent);
                }
                Ok(row)
            })
            .await
    }

    pub async fn session(&self, id: &str) -> Result<Option<SessionRow>> {
        let id = id.to_owned();
        self.reader.run(move |db| db.session(&id)).await
    }

    /// A page of sessions in `session/list`'s order: see [`db::Db::sessions_page`].
    pub async fn sessions_page(&self, query: ListQuery, limit: usize) -> Result<Vec<SessionRow>> {
        self.reader
            .run(move |db| db.sessions_page(&query, limit))
            .await
    }

    /// The ids starting with `prefix`: see [`db::Db::session_ids_with_prefix`].
    pub async fn session_ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<String>> {
        let prefix = prefix.to_owned();
        self.reader
            .run(move |db| db.session_ids_with_prefix(&prefix, limit))
            .await
    }

    pub async fn delete_session(&self, id: &str) -> Result<bool> {
        let id = id.to_owned();
        self.writer.run(move |db| db.delete_session(&id)).await
    }

    /// Sets (or with `None` clears) a session's title; `false` if there is no such session.
    pub async fn rename_session(&self, id: &str, title: Option<&str>) -> Result<bool> {
        let (id, title) = (id.to_owned(), title.map(str::to_owned));
        self.writer
            .run(move |db| db.rename_session(&id, title.as_deref()))
            .await
    }

    /// Sets a session's model; `false` if there is no such session.
    pub async fn set_session_model(&self, id: &str, model: &str) -> Result<bool> {
        let (id, model) = (id.to_owned(), model.to_owned());
        self.writer
            .run(move |db| db.set_session_model(&id, &model))
            .await
    }

    /// Sets a session's permission mode; `false` if there is no such session.
    pub async fn set_session_mode(
        &self,
        id: &str,
        mode: zeroclaw_protocol::methods::PermissionMode,
    ) -> Result<bool> {
        let id = id.to_owned();
        self.writer
            .run(move |db| db.set_session_mode(&id, mode))
            .await
    }

    pub async fn set_always_allow(&self, id: &str, tools: Vec<String>) -> Result<()> {
        let id = id.to_owned();
        self.writer
            .run(move |db| db.set_always_allow(&id, &tools))
            .await
    }

    /// Starts a turn: the turn row, the user's prompt and the checkpoint taken before it,
    /// in one transaction.
    pub async fn begin_turn(
        &self,
        session_id: &str,
        turn_id: &str,
        prompt: &crate::prompt::Prompt,
        checkpoint: Option<NewCheckpoint>,
    ) -> Result<()> {
        let (session_id, turn_id, prompt) =
            (session_id.to_owned(), turn_id.to_owned(), prompt.clone());
        self.writer
            .run(move |db| {
                db.begin_checkpointed_turn(&session_id, &turn_id, &prompt, checkpoint.as_ref())
            })
            .await
    }

    /// Appends a message; returns its row id.
    pub async fn append(
        &self,
        session_id: &str,
        kind: MessageKind,
        message: NewMessage,
    ) -> Result<i64> {
        let session_id = session_id.to_owned();
        self.writer
            .run(move |db| db.append(&session_id, kind, &message))
            .await
    }

    pub async fn finish_turn(
        &self,
        turn_id: &str,
        status: &'static str,
        usage: Option<Usage>,
        error: Option<&str>,
    ) -> Result<()> {
        let (turn_id, error) = (turn_id.to_owned(), error.map(str::to_owned));
        self.writer
            .run(move |db| db.finish_turn(&turn_id, status, usage, error.as_deref()))
            .await
    }

    /// A page of a session's messages in chronological order: the latest `limit` with an
    /// id below `before` (all, when `before` is `None`), and the session's total count;
    /// the messages a rewind hid only with `include_hidden`.
    pub async fn messages(
        &self,
        session_id: &str,
        limit: usize,
        before: Option<i64>,
        include_hidden: bool,
    ) -> Result<(Vec<MessageRow>, i64)> {
        let session_id = session_id.to_owned();
        self.reader
            .run(move |db| db.messages(&session_id, limit, before, include_hidden))
            .await
    }

    /// Up to `limit` of a session's messages after row `after`, oldest first, each handed
    /// as stored to `each` on the store's thread, which folds them into `page` (a replay's
    /// page of frames: no row is copied out of the cursor) until it says stop.
    pub async fn replay_page<P: Send + 'static>(
        &self,
        session_id: &str,
        after: i64,
        limit: usize,
        mut page: P,
        mut each: impl FnMut(&mut P, RawMessageRef<'_>) -> std::ops::ControlFlow<()> + Send + 'static,
    ) -> Result<P> {
        let session_id = session_id.to_owned();
        self.reader
            .run(move |db| {
                db.raw_page(&session_id, after, limit, |row| each(&mut page, row))?;
                Ok(page)
            })
            .await
    }

    /// What a turn builds the model's conversation from: the messages after the newest
    /// summary's range, that summary included (see [`Db::context`](db::Db::context)).
    pub async fn context(&self, session_id: &str) -> Result<Vec<MessageRow>> {
        let session_id = session_id.to_owned();
        self.reader.run(move |db| db.context(&session_id)).await
    }

    /// Every message of a session, oldest first. Only tests read a history whole: the
    /// daemon pages it (replays) or starts at the newest summary (turns).
    #[cfg(test)]
    pub async fn history(&self, session_id: &str) -> Result<Vec<MessageRow>> {
        let session_id = session_id.to_owned();
        self.reader.run(move |db| db.history(&session_id)).await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn the_reader_sees_every_write_the_writer_has_answered() {
        let dir = tempfile::tempdir().unwrap();
        let Opened { store, .. } = Store::open(&dir.path().join("z.db")).unwrap();
        store.create_session("s", None, "/", "m").await.unwrap();
        store
            .begin_turn("s", "t", &"hi".into(), None)
            .await
            .unwrap();
        let mut last = 0;
        for n in 0..5 {
            let message = NewMessage {
                turn_id: Some("t".into()),
                text: Some(format!("{n}")),
                ..NewMessage::default()
            };
            let id = store
                .append("s", MessageKind::Assistant, message)
                .await
                .unwrap();
            let history = store.history("s").await.unwrap();
            assert_eq!(history.last().map(|row| row.id), Some(id));
            assert!(id > last);
            last = id;
        }
        assert_eq!(
            store.sessions_page(ListQuery::default(), 10).await.unwrap()[0].message_count,
            6
        );
        let reopened = Store::open(&dir.path().join("z.db")).unwrap();
        assert_eq!((reopened.interrupted, reopened.sessions), (1, 1));
    }
}

//! The database's maintenance, on the file itself with no daemon using it (`zeroclaw store
//! check|backup|recover`): SQLite's integrity check, its online backup, and recovery.
//!
//! The bundled SQLite has no recovery extension, so recovery is a copy: every row of every
//! table that can still be read, in rowid order, into a new database made by our
//! migrations. A read that meets a damaged page goes on row by row, so the rows after the
//! damage are found too. The damaged file is never written or deleted: it is renamed, with
//! its `-wal` and `-shm`, to `<name>.damaged-<unix seconds>`.

use super::db::refuse_empty;
use super::{Cause, Result, StoreError, schema};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, backup};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// The tables, parents before children (a child row is kept only with its parent).
/// A checkpoint's snapshot lives in the checkpoint store, not here: its row is what names it.
/// A prompt's images (`attachments`) go with its message: without them a recovered history
/// would list images it cannot send or serve.
const TABLES: [&str; 6] = [
    "sessions",
    "turns",
    "messages",
    "attachments",
    "checkpoints",
    "rewinds",
];

/// What one table gave up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub name: &'static str,
    /// Rows copied into the new database.
    pub copied: u64,
    /// Row ids that could not be read (or not be written: a row too damaged to be valid).
    /// Ids in a damaged page that were never used count too, so this is an upper bound.
    pub unreadable: u64,
    /// `false` when the table's end could not be found (its schema or its last page is
    /// unreadable): rows after the last one copied may be lost, uncounted.
    pub to_the_end: bool,
}

/// What `recover` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// Where the damaged file now is.
    pub kept: PathBuf,
    /// The file was empty: there was nothing to read.
    pub was_empty: bool,
    pub tables: Vec<Table>,
    /// Turns, messages and images read whole but dropped because their session (or a
    /// message's turn, or an image's message) was lost: the history has no place for them.
    pub orphans: u64,
}

/// What is wrong with the database: the rules the daemon opens it by (not empty, not a
/// newer schema), then every line of `PRAGMA integrity_check`. Empty when it is healthy.
pub fn check(path: &Path) -> Result<Vec<String>> {
    if let Err(e) = refuse_empty(path) {
        return Ok(vec![e.cause.to_string()]);
    }
    let conn = open_read_only(path)?;
    let mut found = Vec::new();
    for step in [
        schema::version(&conn).map(|_| Vec::new()),
        schema::damage(&conn, "integrity_check"),
    ] {
        match step {
            Ok(lines) => found.extend(lines),
            // The finding alone: the command that prints it says what to do next.
            Err(StoreError {
                cause: Cause::Damaged(what),
                ..
            }) => found.push(what),
            Err(StoreError {
                cause: cause @ Cause::Newer { .. },
                ..
            }) => found.push(cause.to_string()),
            Err(e) => return Err(e),
        }
    }
    Ok(found)
}

/// Writes a consistent copy of the database to `to`, a path that must not exist yet, with
/// SQLite's online backup: one step over every page, under one read transaction, so a
/// daemon writing meanwhile neither blocks it nor makes it start over.
pub fn backup(path: &Path, to: &Path) -> Result<()> {
    let source = open_read_only(path)?;
    // Created here, so an existing file is refused rather than overwritten (SQLite takes
    // an empty file as an empty database), and private: it holds every conversation.
    let mut file = std::fs::OpenOptions::new();
    file.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut file, 0o600);
    file.open(to)
        .map_err(|e| StoreError::file("write the backup", to, e))?;
    let mut copy = Connection::open(to).map_err(StoreError::ctx("write the backup"))?;
    let run = backup::Backup::new(&source, &mut copy).map_err(StoreError::ctx("back up"))?;
    match run.step(-1).map_err(StoreError::ctx("back up"))? {
        backup::StepResult::Done => Ok(()),
        other => Err(StoreError::new(
            "back up",
            Cause::Damaged(format!("the backup stopped before the end ({other:?})")),
        )),
    }
}

/// Rebuilds the database at `path` from what can be read of it, keeping the old file (see
/// the module docs). A newer schema is refused: this build cannot know its tables.
pub fn recover(path: &Path) -> Result<Recovery> {
    let was_empty = refuse_empty(path).is_err();
    let damaged = if was_empty {
        None
    } else {
        let conn = open_read_only(path)?;
        if let Err(
            e @ StoreError {
                cause: Cause::Newer { .. },
                ..
            },
        ) = schema::version(&conn)
        {
            return Err(e);
        }
        Some(conn)
    };
    let fresh_path = with_suffix(path, ".recovering");
    // Left by a recovery that was interrupted: it was never the database.
    if fresh_path.exists() {
        std::fs::remove_file(&fresh_path)
            .map_err(|e| StoreError::file("start a new database", &fresh_path, e))?;
    }
    let mut fresh =
        Connection::open(&fresh_path).map_err(StoreError::ctx("create the new database"))?;
    schema::migrate(&mut fresh)?;
    let (tables, orphans) = match damaged {
        None => (Vec::new(), 0),
        Some(damaged) => {
            // The new connection leaves foreign keys off (no `configure`), so children are
            // copied as read and those whose parent was lost are dropped at the end.
            let fill = || StoreError::ctx("fill the new database");
            let tx = fresh.transaction().map_err(fill())?;
            let tables = TABLES
                .into_iter()
                .map(|table| copy_table(&damaged, &tx, table))
                .collect::<Result<Vec<_>>>()?;
            let orphans = drop_orphans(&tx).map_err(fill())?;
            tx.commit().map_err(fill())?;
            (tables, orphans)
        }
    };
    // Closed before the renames: its journal is gone and nothing else holds the files.
    drop(fresh);
    let kept = keep(path)?;
    std::fs::rename(&fresh_path, path)
        .map_err(|e| StoreError::file("put the new database in place", path, e))?;
    Ok(Recovery {
        kept,
        was_empty,
        tables,
        orphans,
    })
}

/// A connection that cannot write the file, so checking and copying never change it.
pub(super) fn open_read_only(path: &Path) -> Result<Connection> {
    if !path.exists() {
        return Err(StoreError::new(
            "open the database",
            Cause::Missing(path.to_owned()),
        ));
    }
    Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(StoreError::ctx("open the database"))
}

/// Copies every row of `table` that can still be read (see the module docs).
fn copy_table(from: &Connection, to: &Connection, table: &'static str) -> Result<Table> {
    let fill = StoreError::ctx("fill the new database");
    let columns = columns(to, table).map_err(StoreError::ctx("read the new schema"))?;
    let list = columns.join(", ");
    let marks = vec!["?"; columns.len()].join(", ");
    let mut insert = to
        .prepare(&format!("INSERT INTO {table} ({list}) VALUES ({marks})"))
        .map_err(fill)?;
    let mut out = Table {
        name: table,
        copied: 0,
        unreadable: 0,
        to_the_end: true,
    };
    let scan = from.prepare(&format!(
        "SELECT rowid, {list} FROM {table} WHERE rowid > ?1 ORDER BY rowid"
    ));
    let one = from.prepare(&format!(
        "SELECT rowid, {list} FROM {table} WHERE rowid = ?1"
    ));
    let (Ok(mut scan), Ok(mut one)) = (scan, one) else {
        out.to_the_end = false;
        return Ok(out);
    };
    let last: Option<i64> = from
        .query_row(&format!("SELECT max(rowid) FROM {table}"), [], |r| r.get(0))
        .ok()
        .flatten();
    let mut store = |values: Vec<Value>, out: &mut Table| match insert
        .execute(rusqlite::params_from_iter(values))
    {
        Ok(_) => out.copied += 1,
        Err(_) => out.unreadable += 1,
    };
    let mut after = i64::MIN;
    loop {
        // In order from `after`, until the end or the first read that fails.
        let reached_end = (|| -> rusqlite::Result<bool> {
            let mut rows = scan.query([after])?;
            while let Some(row) = rows.next()? {
                let (rowid, values) = read(row)?;
                after = rowid;
                store(values, &mut out);
            }
            Ok(true)
        })()
        .unwrap_or(false);
        if reached_end {
            return Ok(out);
        }
        // Past the damage one row id at a time, to the next row that reads.
        let Some(last) = last else {
            out.to_the_end = false;
            return Ok(out);
        };
        loop {
            if after >= last {
                return Ok(out);
            }
            after = after.max(0) + 1;
            match one.query_row([after], read).optional() {
                Ok(Some((_, values))) => {
                    store(values, &mut out);
                    break;
                }
                Ok(None) => {}
                Err(_) => out.unreadable += 1,
            }
        }
    }
}

/// A row's id and its values; text that is not UTF-8 (damage) is kept, lossily.
fn read(row: &Row<'_>) -> rusqlite::Result<(i64, Vec<Value>)> {
    let count = row.as_ref().column_count();
    let values = (1..count)
        .map(|i| {
            Ok(match row.get_ref(i)? {
                ValueRef::Text(bytes) => Value::Text(String::from_utf8_lossy(bytes).into_owned()),
                other => Value::from(other),
            })
        })
        .collect::<rusqlite::Result<_>>()?;
    Ok((row.get(0)?, values))
}

fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!("PRAGMA table_info({table})"))?;
    stmt.query_map([], |row| row.get(1))?.collect()
}

/// Deletes the turns, messages, images, checkpoints and rewinds whose parent row was lost;
/// returns how many.
fn drop_orphans(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<u64> {
    let turns = tx.execute(
        "DELETE FROM turns WHERE session_id NOT IN (SELECT id FROM sessions)",
        [],
    )?;
    let messages = tx.execute(
        "DELETE FROM messages WHERE session_id NOT IN (SELECT id FROM sessions) \
         OR (turn_id IS NOT NULL AND turn_id NOT IN (SELECT id FROM turns))",
        [],
    )?;
    // After the messages: an image whose message was dropped just now goes too.
    let attachments = tx.execute(
        "DELETE FROM attachments WHERE session_id NOT IN (SELECT id FROM sessions) \
         OR message_id NOT IN (SELECT id FROM messages)",
        [],
    )?;
    let checkpoints = tx.execute(
        "DELETE FROM checkpoints WHERE session_id NOT IN (SELECT id FROM sessions)",
        [],
    )?;
    let rewinds = tx.execute(
        "DELETE FROM rewinds WHERE session_id NOT IN (SELECT id FROM sessions)",
        [],
    )?;
    Ok((turns + messages + attachments + checkpoints + rewinds) as u64)
}

/// Renames the damaged file and its `-wal` and `-shm` (the WAL may hold its last commits,
/// and must never meet the new file) to `<name>.damaged-<unix seconds>[-wal|-shm]`.
fn keep(path: &Path) -> Result<PathBuf> {
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let kept = with_suffix(path, &format!(".damaged-{stamp}"));
    if kept.exists() {
        return Err(StoreError::new(
            "keep the damaged file",
            Cause::Exists(kept),
        ));
    }
    // The sidecars first: the new file must never find the old WAL beside it.
    for sidecar in ["-wal", "-shm", ""] {
        let from = with_suffix(path, sidecar);
        if sidecar.is_empty() || from.exists() {
            std::fs::rename(&from, with_suffix(&kept, sidecar))
                .map_err(|e| StoreError::file("keep the damaged file", &from, e))?;
        }
    }
    Ok(kept)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(suffix);
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::store::db::Db;
    use crate::store::{MessageKind, NewMessage};

    /// A database of `sessions` sessions with one turn of two messages each.
    fn fill(path: &Path, sessions: usize) {
        let (mut db, _) = Db::open_writer(path).unwrap();
        for n in 0..sessions {
            let (s, t) = (format!("s{n}"), format!("t{n}"));
            db.create_session(&s, None, "/", "m", None).unwrap();
            db.begin_turn(&s, &t, &"x".repeat(500)).unwrap();
            let text = NewMessage {
                turn_id: Some(t.clone()),
                text: Some(format!("answer {n}")),
                ..NewMessage::default()
            };
            db.append(&s, MessageKind::Assistant, &text).unwrap();
            db.finish_turn(&t, "end_turn", None, None).unwrap();
        }
    }

    #[test]
    fn a_healthy_database_recovers_whole_and_the_old_file_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.db");
        fill(&path, 30);
        assert_eq!(check(&path).unwrap(), Vec::<String>::new());
        let before = std::fs::read(&path).unwrap();
        let recovery = recover(&path).unwrap();
        assert_eq!(std::fs::read(&recovery.kept).unwrap(), before);
        let copied: Vec<_> = recovery
            .tables
            .iter()
            .map(|t| (t.name, t.copied, t.unreadable, t.to_the_end))
            .collect();
        assert_eq!(
            copied,
            [
                ("sessions", 30, 0, true),
                ("turns", 30, 0, true),
                ("messages", 60, 0, true),
                ("attachments", 0, 0, true),
                ("checkpoints", 0, 0, true),
                ("rewinds", 0, 0, true)
            ]
        );
        assert_eq!(recovery.orphans, 0);
        let (db, _) = Db::open_writer(&path).unwrap();
        assert_eq!(db.count_sessions().unwrap(), 30);
        assert_eq!(
            db.history("s7").unwrap()[1].text.as_deref(),
            Some("answer 7")
        );
    }

    /// Overwrites, with garbage, the first leaf page of the messages table (its oldest rows).
    fn smash_first_message_page(path: &Path) {
        let conn = Connection::open(path).unwrap();
        let (page, size): (i64, i64) = conn
            .query_row(
                "SELECT pageno, pgsize FROM dbstat WHERE name = 'messages' AND pagetype = 'leaf' ORDER BY path LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        drop(conn);
        let mut bytes = std::fs::read(path).unwrap();
        let (start, size) = (
            usize::try_from((page - 1) * size).unwrap(),
            usize::try_from(size).unwrap(),
        );
        bytes[start..start + size].fill(0xA5);
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn a_damaged_page_is_found_at_open_and_recovery_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.db");
        fill(&path, 30);
        smash_first_message_page(&path);
        let refused = Db::open_writer(&path).err().unwrap().to_string();
        assert!(
            refused.contains("damaged") && refused.contains("zeroclaw store recover"),
            "{refused}"
        );
        assert!(!check(&path).unwrap().is_empty());
        let recovery = recover(&path).unwrap();
        let messages = &recovery.tables[2];
        assert!(
            messages.unreadable > 0 && messages.to_the_end,
            "{recovery:?}"
        );
        assert!(messages.copied > 30 && messages.copied < 60, "{recovery:?}");
        assert_eq!(recovery.tables[0].copied, 30, "{recovery:?}");
        assert!(check(&path).unwrap().is_empty());
        let (db, _) = Db::open_writer(&path).unwrap();
        assert_eq!(db.history("s29").unwrap().len(), 2);
        assert!(db.history("s0").unwrap().is_empty());
    }

    /// Damage a clean close vouches for, because it changed none of the file's attributes
    /// (the disk's own decay; here the marker is rewritten after the damage to stand for
    /// it), is not looked for at open: the first statement that reads it says so, with the
    /// same way to recover.
    #[test]
    #[cfg(unix)]
    fn damage_at_rest_behind_a_clean_close_is_met_by_the_first_read_with_the_recover_hint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.db");
        fill(&path, 30);
        let (db, opened) = Db::open_writer(&path).unwrap();
        assert!(opened.checked, "fill's writer was dropped, not closed");
        db.close().unwrap();
        smash_first_message_page(&path);
        assert!(
            Db::open_writer(&path).is_err(),
            "written from outside: checked, and refused"
        );
        assert!(super::super::clean_close::record(&path).unwrap());
        let (db, opened) = Db::open_writer(&path).unwrap();
        assert!(!opened.checked);
        assert_eq!(db.history("s29").unwrap().len(), 2);
        let read = db.history("s0").err().unwrap().to_string();
        assert!(
            read.contains("damaged") && read.contains("zeroclaw store recover"),
            "{read}"
        );
    }

    #[test]
    fn empty_and_newer_files_are_refused_and_named_by_check() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, b"").unwrap();
        let refused = Db::open_writer(&empty).err().unwrap().to_string();
        assert!(
            refused.contains("empty") && refused.contains("zeroclaw store recover"),
            "{refused}"
        );
        assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
        assert!(check(&empty).unwrap()[0].contains("empty"));
        let recovery = recover(&empty).unwrap();
        assert!(recovery.was_empty);
        assert_eq!(std::fs::metadata(&recovery.kept).unwrap().len(), 0);
        assert_eq!(
            Db::open_writer(&empty).unwrap().0.count_sessions().unwrap(),
            0
        );

        let newer = dir.path().join("newer.db");
        fill(&newer, 1);
        Connection::open(&newer)
            .unwrap()
            .pragma_update(None, "user_version", 99)
            .unwrap();
        let refused = Db::open_writer(&newer).err().unwrap().to_string();
        assert!(
            refused.contains("99") && refused.contains(&format!("({})", schema::VERSION)),
            "{refused}"
        );
        assert!(check(&newer).unwrap()[0].contains("99"));
        assert!(recover(&newer).err().unwrap().to_string().contains("99"));
    }

    #[test]
    fn a_backup_is_a_database_that_checks_clean() {
        let dir = tempfile::tempdir().unwrap();
        let (path, copy) = (dir.path().join("z.db"), dir.path().join("copy.db"));
        fill(&path, 5);
        backup(&path, &copy).unwrap();
        assert!(check(&copy).unwrap().is_empty());
        assert_eq!(
            Db::open_writer(&copy).unwrap().0.count_sessions().unwrap(),
            5
        );
        let again = backup(&path, &copy).unwrap_err().to_string();
        assert!(again.contains("already exists"), "{again}");
    }
}

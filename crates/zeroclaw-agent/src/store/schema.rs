//! The schema, as versioned migrations, and the settings every connection opens with.

use super::{Cause, Result, StoreError};
use rusqlite::Connection;
use std::time::Duration;

/// Schema migrations, applied in order; `PRAGMA user_version` records how many ran.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,
    title        TEXT,
    cwd          TEXT NOT NULL,
    model        TEXT NOT NULL,
    always_allow TEXT NOT NULL DEFAULT '[]',
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE TABLE turns (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    status        TEXT NOT NULL,
    error         TEXT,
    input_tokens  INTEGER,
    output_tokens INTEGER,
    started_at    INTEGER NOT NULL,
    ended_at      INTEGER
);
CREATE INDEX turns_by_session ON turns(session_id, started_at);
CREATE TABLE messages (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn_id      TEXT REFERENCES turns(id) ON DELETE CASCADE,
    step         INTEGER NOT NULL DEFAULT 0,
    kind         TEXT NOT NULL,
    text         TEXT,
    tool_call_id TEXT,
    tool_name    TEXT,
    data         TEXT,
    is_error     INTEGER NOT NULL DEFAULT 0,
    cancelled    INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL
);
CREATE INDEX messages_by_session ON messages(session_id, id);
"#,
    // 2: `session/list` pages in its order (most recently updated first, then by id) straight
    // from this index, without reading the sessions before the page.
    r#"
CREATE INDEX sessions_by_update ON sessions(updated_at DESC, id);
"#,
    // 3: the gateway's tokens, only their SHA-256.
    r#"
CREATE TABLE tokens (
    name         TEXT PRIMARY KEY,
    sha256       BLOB NOT NULL UNIQUE,
    scope        TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    expires_at   INTEGER
);
"#,
    // 4: unattended runs (webhooks, schedules), and the session each `session = "shared"`
    // hook or schedule runs in. A run names its session and turn without a foreign key:
    // the record outlives a deleted session.
    r#"
CREATE TABLE runs (
    id          TEXT PRIMARY KEY,
    source      TEXT NOT NULL,
    name        TEXT NOT NULL,
    delivery_id TEXT,
    session_id  TEXT,
    turn_id     TEXT,
    status      TEXT NOT NULL,
    error       TEXT,
    tick        INTEGER,
    prompt      TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    finished_at INTEGER
);
CREATE INDEX runs_by_delivery ON runs(source, name, delivery_id);
CREATE INDEX runs_by_time ON runs(created_at DESC, id);
CREATE TABLE run_sessions (
    source     TEXT NOT NULL,
    name       TEXT NOT NULL,
    session_id TEXT NOT NULL,
    PRIMARY KEY (source, name)
);
"#,
    // 5: the SHA-256 of each signed body a webhook (GitHub scheme) accepted, with its run and
    // when it was first seen: the same body within the hook's replay window is a repeat
    // whatever its unsigned delivery id. Rows older than the window are deleted.
    r#"
CREATE TABLE webhook_bodies (
    name    TEXT NOT NULL,
    sha256  BLOB NOT NULL,
    run_id  TEXT NOT NULL,
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (name, sha256)
);
CREATE INDEX webhook_bodies_by_time ON webhook_bodies(name, seen_at);
"#,
    // 6: dashboard sessions live beside the tokens (one name space, so `token revoke NAME`
    // finds either): `kind` tells them apart, `proof_sha256` is the SHA-256 of a session's
    // proof (the page's second secret), NULL for a token. The dashboard tokens of earlier
    // versions were cookies that also worked as bearer tokens: they are deleted (their
    // browsers sign in again).
    r#"
ALTER TABLE tokens ADD COLUMN kind TEXT NOT NULL DEFAULT 'token';
ALTER TABLE tokens ADD COLUMN proof_sha256 BLOB;
DELETE FROM tokens WHERE name GLOB 'dashboard-[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T*Z';
"#,
    // 7: a session's own sandbox (`session/new {sandbox}`, an unattended entry's), as JSON
    // `{"mode": "read-only", "network": false}`; NULL: it follows `[sandbox]`.
    r#"
ALTER TABLE sessions ADD COLUMN sandbox TEXT;
"#,
    // 8: checkpoints (issue 31). One row per turn: the snapshot of the session's cwd taken
    // before it (`snapshot`, NULL when it failed: `error` says why) and after it
    // (`end_snapshot`), what the turn changed (`changed`, JSON) and what the snapshot left
    // out (`omitted`, JSON). `rewinds` records each rewind and unrewind: the snapshot of
    // the state it found (`found`, its undo) and the one it left (`left_state`), so the
    // edits made outside the agent can be told from the daemon's own. A rewound
    // conversation's messages and checkpoints stay, marked with the rewind that hid them
    // (`hidden_by`); the model is never sent them.
    r#"
ALTER TABLE messages ADD COLUMN hidden_by TEXT;
CREATE TABLE checkpoints (
    id           TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn_id      TEXT NOT NULL,
    turn         INTEGER NOT NULL,
    message_id   INTEGER,
    prompt       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    snapshot     TEXT,
    end_snapshot TEXT,
    changed      TEXT,
    omitted      TEXT,
    error        TEXT,
    hidden_by    TEXT
);
CREATE INDEX checkpoints_by_session ON checkpoints(session_id, created_at);
CREATE TABLE rewinds (
    id              TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    checkpoint_id   TEXT,
    kind            TEXT NOT NULL,
    found           TEXT,
    left_state      TEXT,
    messages_hidden INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    undone          INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX rewinds_by_session ON rewinds(session_id, created_at);
"#,
    // 9: a session's permission mode (`session/set_mode`): `plan`, `default`,
    // `accept-edits` or `auto`; sessions from before start in `default`.
    r#"
ALTER TABLE sessions ADD COLUMN mode TEXT NOT NULL DEFAULT 'default';
"#,
    // 10: subagents (issue 33): a child session names the session and the `task` call that
    // made it; `session/list` leaves such sessions out unless asked (`includeChildren`).
    // No foreign key: a child outlives its deleted parent, as a record of what it did.
    r#"
ALTER TABLE sessions ADD COLUMN parent_session_id TEXT;
ALTER TABLE sessions ADD COLUMN parent_tool_call_id TEXT;
"#,
    // 11: usage and cost (issue 34), written after each model call so a crash keeps them:
    // the cached part of `input_tokens`, the cost (NULL without `[provider.pricing]`),
    // whether any count was estimated, and the last call's input tokens (`contextUsed`).
    r#"
ALTER TABLE turns ADD COLUMN cached_input_tokens INTEGER;
ALTER TABLE turns ADD COLUMN cost REAL;
ALTER TABLE turns ADD COLUMN usage_estimated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN context_tokens INTEGER;
"#,
    // 12: provider resilience (issue 34): an unattended run's `provider_retry` and
    // `provider_fallback` events, a JSON array; NULL when there were none.
    r#"
ALTER TABLE runs ADD COLUMN provider_events TEXT;
"#,
    // 13: budgets (issue 34): the budget an unattended run's turn stopped at, a JSON
    // `{limit, used}`; NULL when none stopped it.
    r#"
ALTER TABLE runs ADD COLUMN budget TEXT;
"#,
    // 14: images in prompts (issue 34): each beside its message (`store/attachments.rs`),
    // so history pages never carry the bytes; deleted with the message or the session.
    r#"
CREATE TABLE attachments (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    mime_type  TEXT NOT NULL,
    data       BLOB NOT NULL,
    PRIMARY KEY (message_id, position)
);
CREATE INDEX attachments_by_session ON attachments(session_id, message_id);
"#,
    // 15: `session/list`'s search index (issue 36): every trigram of each session's title
    // and cwd, folded to one case, so a search reads the sessions holding its text instead
    // of every session (`store/search.rs`; a LIKE test still decides each match). External
    // content: the text stays in `sessions` alone, the index holds the trigrams, keyed by
    // the session's rowid; the triggers keep it in step with every insert, delete and
    // change of a title or cwd (a recovery's copy goes through them too). No column sizes:
    // nothing ranks the matches. Filled here from the sessions already stored.
    r#"
CREATE VIRTUAL TABLE sessions_search USING fts5(
    title, cwd,
    content = 'sessions', columnsize = 0, tokenize = 'trigram case_sensitive 0'
);
CREATE TRIGGER sessions_search_insert AFTER INSERT ON sessions BEGIN
    INSERT INTO sessions_search (rowid, title, cwd) VALUES (new.rowid, new.title, new.cwd);
END;
CREATE TRIGGER sessions_search_delete AFTER DELETE ON sessions BEGIN
    INSERT INTO sessions_search (sessions_search, rowid, title, cwd)
        VALUES ('delete', old.rowid, old.title, old.cwd);
END;
CREATE TRIGGER sessions_search_update AFTER UPDATE OF title, cwd ON sessions BEGIN
    INSERT INTO sessions_search (sessions_search, rowid, title, cwd)
        VALUES ('delete', old.rowid, old.title, old.cwd);
    INSERT INTO sessions_search (rowid, title, cwd) VALUES (new.rowid, new.title, new.cwd);
END;
INSERT INTO sessions_search (sessions_search) VALUES ('rebuild');
"#,
    // 16: the turns a stopped daemon left running, found at start-up without reading every
    // turn: only running turns are in this index, and marking them `interrupted` takes them
    // out.
    r#"
CREATE INDEX turns_running ON turns(status) WHERE status = 'running';
"#,
    // 17: `session/list {cwd}` (an ACP editor lists the sessions of its project): the
    // sessions of one working directory in list order, so a page of them reads its rows
    // and no others, however many sessions other directories have.
    r#"
CREATE INDEX sessions_by_cwd ON sessions(cwd, updated_at DESC, id);
"#,
];

/// The schema version this build writes: how many migrations it has.
pub const VERSION: usize = MIGRATIONS.len();

/// The settings of every connection, the writer's and the reader's.
pub fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(Duration::from_secs(5))
        .map_err(StoreError::ctx("configure the database"))?;
    // WAL: readers never block the writer (the reader thread's connection runs beside the
    // writer's); NORMAL sync is durable against process crashes (the case that matters for
    // a daemon), and only loses the last commits on power loss.
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(StoreError::ctx("enable WAL"))?;
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(StoreError::ctx("configure the database"))?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(StoreError::ctx("configure the database"))
}

/// The schema version recorded in the file; a version newer than ours is refused, since
/// this build cannot know what a later migration changed.
pub fn version(conn: &Connection) -> Result<usize> {
    let found: i64 = conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(StoreError::ctx("read the schema version"))?;
    match usize::try_from(found) {
        Ok(version) if version <= VERSION => Ok(version),
        _ => Err(StoreError::new(
            "read the schema version",
            Cause::Newer {
                found,
                ours: VERSION,
            },
        )),
    }
}

/// What `PRAGMA <pragma>` (`quick_check` or `integrity_check`) found wrong: nothing when
/// it answers `ok`. A check that stops on damage it cannot step over ends the list with it.
pub fn damage(conn: &Connection, pragma: &str) -> Result<Vec<String>> {
    let check = StoreError::ctx("check the database");
    let mut stmt = conn.prepare(&format!("PRAGMA {pragma}")).map_err(check)?;
    let mut rows = stmt
        .query([])
        .map_err(StoreError::ctx("check the database"))?;
    let mut found = Vec::new();
    loop {
        match rows.next() {
            Ok(Some(row)) => {
                let text: String = row.get(0).map_err(StoreError::ctx("check the database"))?;
                // One row may hold several findings, under a "*** in database main ***" line.
                let lines = text.lines().filter(|l| !l.starts_with("*** in database"));
                found.extend(lines.map(str::to_owned));
            }
            Ok(None) => break,
            Err(e) if super::is_damage(&e) => {
                found.push(e.to_string());
                break;
            }
            Err(e) => return Err(StoreError::ctx("check the database")(e)),
        }
    }
    Ok(if found == ["ok"] { Vec::new() } else { found })
}

/// Applies the migrations this database has not had yet.
pub fn migrate(conn: &mut Connection) -> Result<()> {
    let version = version(conn)?;
    for (i, migration) in MIGRATIONS.iter().enumerate().skip(version) {
        let tx = conn
            .transaction()
            .map_err(StoreError::ctx("migrate the database"))?;
        tx.execute_batch(migration)
            .map_err(StoreError::ctx("migrate the database"))?;
        tx.pragma_update(None, "user_version", i + 1)
            .map_err(StoreError::ctx("migrate the database"))?;
        tx.commit()
            .map_err(StoreError::ctx("migrate the database"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn version_15_indexes_the_sessions_already_stored_and_keeps_the_index_in_step() {
        let mut conn = Connection::open_in_memory().unwrap();
        for migration in &MIGRATIONS[..14] {
            conn.execute_batch(migration).unwrap();
        }
        conn.pragma_update(None, "user_version", 14).unwrap();
        for (id, title, cwd) in [
            ("a", Some("Fix the Parser"), "/src/alpha"),
            ("b", None, "/src/Parsers"),
            ("c", Some("chores"), "/src/gamma"),
        ] {
            conn.execute(
                "INSERT INTO sessions (id, title, cwd, model, created_at, updated_at) VALUES (?1, ?2, ?3, 'm', 1, 1)",
                rusqlite::params![id, title, cwd],
            )
            .unwrap();
        }
        migrate(&mut conn).unwrap();
        let found = |conn: &Connection, query: &str| -> Vec<String> {
            conn.prepare(
                "SELECT s.id FROM sessions_search JOIN sessions s ON s.rowid = sessions_search.rowid \
                 WHERE sessions_search MATCH ?1 ORDER BY s.id",
            )
            .unwrap()
            .query_map([query], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
        };
        assert_eq!(found(&conn, "\"PARSER\""), ["a", "b"]);
        conn.execute_batch(
            "UPDATE sessions SET title = 'parser too' WHERE id = 'c'; \
             UPDATE sessions SET cwd = '/src/beta' WHERE id = 'b'; DELETE FROM sessions WHERE id = 'a';",
        )
        .unwrap();
        assert_eq!(found(&conn, "\"parser\""), ["c"]);
        // The index against the sessions' text, every row re-read (rank 1: the full check).
        conn.execute(
            "INSERT INTO sessions_search (sessions_search, rank) VALUES ('integrity-check', 1)",
            [],
        )
        .unwrap();
    }

    #[test]
    fn version_6_keeps_tokens_and_deletes_the_old_dashboard_cookies_that_were_tokens() {
        let mut conn = Connection::open_in_memory().unwrap();
        for migration in &MIGRATIONS[..4] {
            conn.execute_batch(migration).unwrap();
        }
        conn.pragma_update(None, "user_version", 4).unwrap();
        for (name, hash) in [
            ("ci", 1u8),
            ("dashboard-2026-12-01T10:00:00.123Z", 2),
            ("dashboard-by-hand", 3),
        ] {
            conn.execute(
                "INSERT INTO tokens (name, sha256, scope, created_at) VALUES (?1, ?2, 'operate', 1)",
                rusqlite::params![name, vec![hash; 32]],
            )
            .unwrap();
        }
        migrate(&mut conn).unwrap();
        assert_eq!(version(&conn).unwrap(), VERSION);
        let rows: Vec<(String, String)> = conn
            .prepare("SELECT name, kind FROM tokens ORDER BY name")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<std::result::Result<_, _>>()
            .unwrap();
        assert_eq!(
            rows,
            [
                ("ci".to_owned(), "token".to_owned()),
                ("dashboard-by-hand".to_owned(), "token".to_owned())
            ]
        );
    }
}

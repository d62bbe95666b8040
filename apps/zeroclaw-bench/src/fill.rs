//! Fills a stopped daemon's database straight through SQLite (the schema in
//! `crates/zeroclaw-agent/src/store/schema.rs`), so the growth scenarios can start from a
//! store with 100,000 messages or 10,000 sessions in seconds instead of running that many
//! turns. The daemon must be stopped while this writes; it created the file (and its schema)
//! when it first started.

use rusqlite::{Connection, params};
use std::path::Path;

/// The messages of one stored turn, in order: a prompt, a `bash` call and its output, an
/// answer. Sizes are those of a modest coding-agent turn.
const TURN_KINDS: [&str; 4] = ["user", "tool_call", "tool_result", "assistant"];

/// Bytes of text (or of stored JSON for tool rows) of each of [`TURN_KINDS`]: ~1.1 kB a turn.
const PROMPT: &str = "Please look at the failing test in the parser module and tell me why the \
     second case breaks after the last change.";
const ANSWER: &str = "The second case breaks because the tokenizer now keeps the trailing \
     newline, so the parser sees an empty statement at the end. Trimming the input before \
     tokenizing, or skipping empty statements in the parser, fixes it; the first is the \
     smaller change and I made it in tokenizer.rs.";

/// The daemon's own estimate of what a stored message costs in tokens (about four bytes a
/// token, plus four for the message; `turn/compact.rs`).
pub fn tokens_of(text_bytes: usize) -> usize {
    text_bytes.div_ceil(4) + 4
}

/// A session id shaped like the daemon's (a UUID), from a number.
pub fn session_id(prefix: u32, n: usize) -> String {
    format!("{prefix:08x}-0000-4000-8000-{n:012}")
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// One stored message of turn `turn`, at `step` (0..4): its kind, text, tool fields and data.
struct Message {
    kind: &'static str,
    text: Option<String>,
    tool_call_id: Option<String>,
    tool_name: Option<&'static str>,
    data: Option<String>,
}

fn message(turn: usize, step: usize) -> Message {
    let kind = TURN_KINDS[step % 4];
    let call = || Some(format!("call_{turn}"));
    match kind {
        "user" => Message {
            kind,
            text: Some(format!("{turn}: {PROMPT}")),
            tool_call_id: None,
            tool_name: None,
            data: None,
        },
        "tool_call" => Message {
            kind,
            text: None,
            tool_call_id: call(),
            tool_name: Some("bash"),
            data: Some(format!(
                "{{\"command\":\"cargo test -p parser -- case_{turn} 2>&1 | tail -n 20\"}}"
            )),
        },
        "tool_result" => {
            let mut out = String::from("\"running 1 test\\n");
            for line in 0..8 {
                out.push_str(&format!(
                    "test parser::tests::case_{turn}_{line} ... FAILED at src/parser.rs:{}\\n",
                    100 + line
                ));
            }
            out.push('"');
            Message {
                kind,
                text: None,
                tool_call_id: call(),
                tool_name: Some("bash"),
                data: Some(out),
            }
        }
        _ => Message {
            kind,
            text: Some(ANSWER.to_owned()),
            tool_call_id: None,
            tool_name: None,
            data: None,
        },
    }
}

impl Message {
    fn bytes(&self) -> usize {
        self.text.as_ref().map_or(0, String::len) + self.data.as_ref().map_or(0, String::len)
    }
}

/// What [`history`] wrote.
#[derive(Debug, Clone, Copy, Default)]
pub struct Written {
    pub messages: usize,
    /// The daemon's estimate of the history's tokens.
    pub tokens: usize,
}

/// What one session's history is to hold.
#[derive(Debug, Clone, Copy)]
pub enum Size {
    Messages(usize),
    /// Whole turns until the estimate reaches this.
    Tokens(usize),
}

pub fn open(db: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(db)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    Ok(conn)
}

/// A session `id` in `cwd` with a history of `size`, in turns of four messages (the last
/// turn cut short when a message count is asked), all in one transaction.
pub fn session_with_history(
    conn: &mut Connection,
    id: &str,
    cwd: &str,
    size: Size,
) -> rusqlite::Result<Written> {
    let now = now_ms();
    let tx = conn.transaction()?;
    tx.execute(
        "INSERT INTO sessions (id, title, cwd, model, created_at, updated_at) VALUES (?1, ?2, ?3, 'fake', ?4, ?4)",
        params![id, format!("growth {id}"), cwd, now],
    )?;
    let mut written = Written::default();
    {
        let mut turn_row = tx.prepare(
            "INSERT INTO turns (id, session_id, status, started_at, ended_at) VALUES (?1, ?2, 'end_turn', ?3, ?3)",
        )?;
        let mut insert = tx.prepare(
            "INSERT INTO messages (session_id, turn_id, step, kind, text, tool_call_id, tool_name, data, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
        let mut turn = 0;
        loop {
            let done = match size {
                Size::Messages(n) => written.messages >= n,
                Size::Tokens(t) => written.tokens >= t && written.messages % 4 == 0,
            };
            if done {
                break;
            }
            let step = written.messages % 4;
            if step == 0 {
                turn = written.messages / 4;
                turn_row.execute(params![format!("{id}-t{turn}"), id, now])?;
            }
            let m = message(turn, step);
            insert.execute(params![
                id,
                format!("{id}-t{turn}"),
                if step < 3 { 1 } else { 2 },
                m.kind,
                m.text,
                m.tool_call_id,
                m.tool_name,
                m.data,
                now
            ])?;
            written.messages += 1;
            written.tokens += tokens_of(m.bytes());
        }
    }
    tx.commit()?;
    Ok(written)
}

/// Sessions `from..to` for `session/list`: each with one turn of a prompt and an answer, a
/// distinct `updated_at`, a cwd among 37 projects, and "flaky" in the title of every
/// hundredth (what the search looks for).
pub fn many_sessions(conn: &mut Connection, from: usize, to: usize) -> rusqlite::Result<()> {
    let base = now_ms() - 10_000_000;
    let tx = conn.transaction()?;
    {
        let mut session = tx.prepare(
            "INSERT INTO sessions (id, title, cwd, model, created_at, updated_at) VALUES (?1, ?2, ?3, 'fake', ?4, ?4)",
        )?;
        let mut turn = tx.prepare(
            "INSERT INTO turns (id, session_id, status, started_at, ended_at) VALUES (?1, ?2, 'end_turn', ?3, ?3)",
        )?;
        let mut message = tx.prepare(
            "INSERT INTO messages (session_id, turn_id, step, kind, text, created_at) VALUES (?1, ?2, 0, ?3, ?4, ?5)",
        )?;
        for i in from..to {
            let id = session_id(0x115, i);
            let title = if i % 100 == 0 {
                format!("Fix the flaky test in module {i}")
            } else {
                format!("Refactor module {i} for the new parser")
            };
            let at = base + i as i64;
            session.execute(params![
                id,
                title,
                format!("/home/dev/src/project-{}", i % 37),
                at
            ])?;
            let turn_id = format!("{id}-t0");
            turn.execute(params![turn_id, id, at])?;
            message.execute(params![id, turn_id, "user", PROMPT, at])?;
            message.execute(params![id, turn_id, "assistant", ANSWER, at])?;
        }
    }
    tx.commit()
}

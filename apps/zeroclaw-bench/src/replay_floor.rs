//! The replay floor: the least a server can do to send a stored session's history over
//! NDJSON. It runs as a child process of the bench (this binary with `--replay-floor-server
//! SOCKET --replay-floor-db FILE`), one blocking thread per connection, reading the daemon's
//! own SQLite file (read-only) with rusqlite.
//!
//! Per connection: open the database, then for every line answer
//! `{"jsonrpc":"2.0","result":{},"id":<id>}`, except `session/load {sessionId}`, which first
//! steps through one `SELECT` of that session's messages in id order (the daemon's
//! `messages_by_session` index) and writes one `session/update` line per row, shaped like the
//! daemon's replay events (`user_message_chunk`, `agent_message_chunk`, `tool_call`,
//! `tool_result`; a tool row's stored JSON spliced in as it is), through a 64 KiB buffer.
//! No paging, no validation, no session state.

use rusqlite::{Connection, OpenFlags};
use serde_json::Value;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const WRITE_BUF: usize = 64 * 1024;

pub fn serve(socket: &Path, db: &Path) -> ExitCode {
    let _ = std::fs::remove_file(socket);
    let listener = match UnixListener::bind(socket) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("replay floor: bind {}: {e}", socket.display());
            return ExitCode::FAILURE;
        }
    };
    for stream in listener.incoming() {
        match stream {
            Ok(stream) => {
                let db = db.to_path_buf();
                std::thread::spawn(move || {
                    if let Err(e) = connection(stream, &db) {
                        eprintln!("replay floor: {e}");
                    }
                });
            }
            Err(e) => eprintln!("replay floor: accept failed: {e}"),
        }
    }
    ExitCode::SUCCESS
}

fn connection(stream: UnixStream, db: &PathBuf) -> io::Result<()> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(io::Error::other)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut out = BufWriter::with_capacity(WRITE_BUF, stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let Ok(request) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        if request.get("method").and_then(Value::as_str) == Some("session/load") {
            let session = request
                .pointer("/params/sessionId")
                .and_then(Value::as_str)
                .unwrap_or("");
            replay(&conn, session, &mut out)?;
        }
        out.write_all(b"{\"jsonrpc\":\"2.0\",\"result\":{},\"id\":")?;
        serde_json::to_writer(&mut out, request.get("id").unwrap_or(&Value::Null))?;
        out.write_all(b"}\n")?;
        out.flush()?;
    }
}

/// One `session/update` line per stored message of `session`, oldest first.
fn replay(conn: &Connection, session: &str, out: &mut impl Write) -> io::Result<()> {
    let mut stmt = conn
        .prepare(
            "SELECT turn_id, kind, text, tool_call_id, tool_name, data, is_error \
             FROM messages WHERE session_id = ?1 ORDER BY id",
        )
        .map_err(io::Error::other)?;
    let mut rows = stmt.query([session]).map_err(io::Error::other)?;
    let session = serde_json::to_string(session)?;
    while let Some(row) = rows.next().map_err(io::Error::other)? {
        let text = |i| row.get_ref(i).ok().and_then(|v| v.as_str().ok());
        let turn = text(0);
        let kind = text(1).unwrap_or("");
        out.write_all(
            b"{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":",
        )?;
        out.write_all(session.as_bytes())?;
        if let Some(turn) = turn {
            out.write_all(b",\"turnId\":")?;
            serde_json::to_writer(&mut *out, turn)?;
        }
        match kind {
            "user" | "assistant" | "thought" => {
                let kind = match kind {
                    "user" => "user_message_chunk",
                    "assistant" => "agent_message_chunk",
                    _ => "agent_thought_chunk",
                };
                write!(out, ",\"type\":\"{kind}\",\"text\":")?;
                serde_json::to_writer(&mut *out, text(2).unwrap_or(""))?;
            }
            "tool_call" | "tool_result" => {
                write!(out, ",\"type\":\"{kind}\",\"toolCallId\":")?;
                serde_json::to_writer(&mut *out, text(3).unwrap_or(""))?;
                out.write_all(b",\"name\":")?;
                serde_json::to_writer(&mut *out, text(4).unwrap_or(""))?;
                out.write_all(if kind == "tool_call" {
                    b",\"rawInput\":"
                } else {
                    b",\"rawOutput\":"
                })?;
                // The stored data is JSON text already.
                out.write_all(text(5).unwrap_or("null").as_bytes())?;
                if kind == "tool_result" {
                    let error: i64 = row.get(6).unwrap_or(0);
                    write!(out, ",\"isError\":{}", error != 0)?;
                }
            }
            other => {
                write!(out, ",\"type\":")?;
                serde_json::to_writer(&mut *out, other)?;
            }
        }
        out.write_all(b"}}\n")?;
    }
    Ok(())
}

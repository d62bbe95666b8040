//! A session with 100,000 stored messages: `session/load` replays every one, in order,
//! while the daemon reads and sends the history a page at a time, so its memory stays far
//! below the history's size; `session/messages` pages through it.

use crate::common::*;
use serde_json::json;

const MESSAGES: usize = 100_000;
/// Each message's text: its number, then filler, so the history is ~100 MB.
const TEXT_BYTES: usize = 1_000;

fn text_of(i: usize) -> String {
    let mut text = format!("{i:06} ");
    text.push_str(&"x".repeat(TEXT_BYTES - text.len()));
    text
}

/// Writes `MESSAGES` messages (user and assistant, alternately, in one finished turn)
/// straight into the stopped daemon's database file.
fn fill(env: &Env, session: &str) {
    let mut db = rusqlite::Connection::open(env.dir.data_dir().join("zeroclaw.db")).unwrap();
    let tx = db.transaction().unwrap();
    tx.execute(
        "INSERT INTO turns (id, session_id, status, started_at, ended_at) VALUES ('t-big', ?1, 'end_turn', 1, 2)",
        [session],
    )
    .unwrap();
    {
        let mut insert = tx
            .prepare(
                "INSERT INTO messages (session_id, turn_id, step, kind, text, created_at) VALUES (?1, 't-big', ?2, ?3, ?4, 1)",
            )
            .unwrap();
        for i in 0..MESSAGES {
            let kind = if i % 2 == 0 { "user" } else { "assistant" };
            insert
                .execute(rusqlite::params![session, i as i64, kind, text_of(i)])
                .unwrap();
        }
    }
    tx.commit().unwrap();
}

#[cfg(target_os = "linux")]
#[test]
fn a_100000_message_history_replays_whole_and_in_order_in_bounded_memory() {
    let mut env = Env::new("", "");
    let session = env.daemon.client().new_session(&env.work);
    env.daemon.stop();
    fill(&env, &session);
    env.daemon = env.dir.start(&[]);

    let mut conn = env.daemon.initialized();
    conn.send(&json!({"jsonrpc": "2.0", "method": "session/load",
        "params": {"sessionId": session, "replay": true}, "id": 1}));
    // Checked one frame at a time and dropped, so this test holds no more than the daemon.
    let mut next = 0;
    let answer = loop {
        let frame = conn.recv();
        if frame.get("id").is_some() {
            break frame;
        }
        let params = &frame["params"];
        assert_eq!(params["turnId"], "t-big", "{frame}");
        let expected = if next % 2 == 0 {
            "user_message_chunk"
        } else {
            "agent_message_chunk"
        };
        assert_eq!(params["type"], expected, "message {next}");
        assert_eq!(
            params["text"].as_str().unwrap(),
            text_of(next),
            "message {next}"
        );
        next += 1;
    };
    assert!(answer.get("error").is_none(), "{answer}");
    assert_eq!(next, MESSAGES, "every message, once, in order");

    // The history is ~100 MB as stored and more as frames; the daemon held a page of it.
    let (peak_kib, _) = env.daemon.memory_kib();
    eprintln!("daemon peak RSS after the replay: {peak_kib} KiB");
    assert!(
        peak_kib < 64 * 1024,
        "the daemon's peak RSS was {peak_kib} KiB for a {} MB history",
        MESSAGES * TEXT_BYTES / 1_000_000
    );

    // `session/messages` pages back from the newest.
    let page = conn.call(
        "session/messages",
        json!({"sessionId": session, "limit": 10}),
    );
    assert_eq!(page["total"], MESSAGES as u64);
    let messages = page["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 10);
    assert_eq!(messages[9]["text"].as_str().unwrap(), text_of(MESSAGES - 1));
    let before = messages[0]["id"].clone();
    let older = conn.call(
        "session/messages",
        json!({"sessionId": session, "limit": 10, "before": before}),
    );
    assert_eq!(
        older["messages"][9]["text"].as_str().unwrap(),
        text_of(MESSAGES - 11)
    );
}

//! Many turns at once (issue 16): 50 sessions each streaming a turn to its own client while
//! one observer is attached to all of them. Every client and the observer get every chunk
//! of every turn, in order, and every turn completes.

use crate::common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Barrier};
use zeroclaw_testkit::openai;

const SESSIONS: usize = 50;
const CHUNKS: usize = 200;
const CHUNK: &str = "0123456789";

#[test]
fn fifty_turns_stream_at_once_to_their_clients_and_one_observer_of_all() {
    let env = Env::new("", "");
    for _ in 0..SESSIONS {
        env.fake.push(openai::many_chunks(CHUNKS, CHUNK));
    }
    let mut clients: Vec<(Client, String)> = (0..SESSIONS)
        .map(|_| {
            let mut client = env.daemon.client();
            let session = client.new_session(&env.work);
            (client, session)
        })
        .collect();
    let mut observer = env.daemon.client();
    for (_, session) in &clients {
        observer.call("session/load", serde_json::json!({ "sessionId": session }));
    }

    // The observer reads as the turns run: a client that stops reading is detached.
    let observer = std::thread::spawn(move || {
        let mut seen: HashMap<String, String> = HashMap::new();
        let mut completed = 0;
        while completed < SESSIONS {
            let frame = observer.read();
            if !is_update(&frame) {
                continue;
            }
            let params: &Value = &frame["params"];
            let session = params["sessionId"].as_str().unwrap().to_owned();
            match params["type"].as_str().unwrap() {
                "agent_message_chunk" => seen
                    .entry(session)
                    .or_default()
                    .push_str(params["text"].as_str().unwrap()),
                "turn_complete" => {
                    assert_eq!(
                        seen.get(&session).map(String::len),
                        Some(CHUNK.len() * CHUNKS),
                        "the observer got all of {session} before its end"
                    );
                    completed += 1;
                }
                _ => {}
            }
        }
        seen.len()
    });
    let start = Arc::new(Barrier::new(SESSIONS));
    let turns: Vec<_> = clients
        .drain(..)
        .map(|(mut client, session)| {
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                let turn = client.prompt(&session, "stream", no_questions);
                assert_eq!(turn.result()["stopReason"], "end_turn", "{session}");
                let text: String = turn
                    .of_type("agent_message_chunk")
                    .iter()
                    .map(|e| e["text"].as_str().unwrap())
                    .collect();
                (session, text)
            })
        })
        .collect();
    for turn in turns {
        let (session, text) = turn.join().unwrap();
        assert_eq!(text, CHUNK.repeat(CHUNKS), "session {session}'s own client");
    }

    // The observer saw every session's whole stream, each ending with its turn_complete.
    assert_eq!(observer.join().unwrap(), SESSIONS);
}

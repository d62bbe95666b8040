//! Event pacing: a turn keeps to its clients' pace, within a grace. A slow reader loses no
//! chunk; a client that stops reading is detached and the turn completes without it.

use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::openai;

/// Chunks in the streamed answer: far more than the socket buffers and the queue hold.
const STREAMED: usize = 20_000;

/// The fake provider streams far faster than the client reads, through an 8-frame queue.
/// The turn waits for the client whenever its queue is nearly full, so every chunk arrives.
/// (Before pacing, the first full queue detached the client.)
#[test]
fn a_client_reading_a_fast_stream_through_a_tiny_queue_loses_no_chunk() {
    let env = Env::new("", "[daemon]\noutbound_queue = 8");
    env.fake.push(openai::many_chunks(STREAMED, "t"));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "stream a lot");
    let turn = client.drive(&prompt, no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let chunks = turn.of_type("agent_message_chunk");
    assert_eq!(chunks.len(), STREAMED);
    assert!(chunks.iter().all(|c| c["text"] == "t"));
    assert_eq!(turn.result()["text"].as_str().unwrap().len(), STREAMED);
    assert!(!env.daemon.log_text().contains("not reading its events"));
}

/// A client that stops reading holds the turn up for the grace (5 s) at most: it is then
/// detached and closed, and the turn streams on to its end for everyone else.
#[test]
fn a_client_that_stops_reading_its_events_is_detached_and_the_turn_completes() {
    let env = Env::new("", "[daemon]\noutbound_queue = 8");
    env.fake.push(openai::many_chunks(STREAMED, "t"));
    let mut stalled = env.daemon.client();
    let session = stalled.new_session(&env.work);
    let _prompt = stalled.start_prompt(&session, "stream a lot");
    // `stalled` never reads again; its socket buffers fill, then its queue.
    let line = env.daemon.wait_for_log("client is not reading its events");
    assert!(line.contains(&session), "{line}");
    env.daemon.wait_for_log("turn ended");
    let mut other = env.daemon.client();
    assert_eq!(other.call("status", json!({}))["sessions"]["running"], 0);
    let messages = other.messages(&session);
    let reply = messages.last().unwrap();
    assert_eq!(reply["kind"], "assistant");
    let text = reply["text"].as_str().unwrap();
    assert!(text.len() == STREAMED && text.bytes().all(|b| b == b't'));
    drop(stalled);
}

//! Server-sent events: a prompt streamed to its `result`, a session's live events with
//! replay, and a client that goes away mid-turn without stopping the turn.

use crate::harness::*;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use futures_util::StreamExt;
use serde_json::{Value, json};
use zeroclaw_testkit::{Gate, openai};

/// Reads SSE events (`event`, parsed `data`) until `stop` says so or the stream ends.
async fn events(
    response: reqwest::Response,
    mut stop: impl FnMut(&str, &Value) -> bool,
) -> Vec<(String, Value)> {
    let mut body = response.bytes_stream();
    let mut buffer = String::new();
    let mut out = Vec::new();
    while let Some(chunk) = body.next().await {
        buffer.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let mut name = String::from("message");
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    name = v.trim().to_owned();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            if data.is_empty() {
                continue; // a comment (heartbeat)
            }
            let value: Value = serde_json::from_str(&data).unwrap();
            let done = stop(&name, &value);
            out.push((name, value));
            if done {
                return out;
            }
        }
    }
    out
}

/// `GET /sessions/{id}/events` with `token`, answered 200 (the stream is open).
fn open_events(gw: &Gw, token: &str, id: &str) -> reqwest::Response {
    let response = block(
        http()
            .get(gw.api(&format!("/sessions/{id}/events")))
            .bearer_auth(token)
            .send(),
    )
    .unwrap();
    assert_eq!(response.status(), 200);
    response
}

#[test]
fn a_prompt_streams_its_updates_then_one_result_event_then_ends() {
    let gw = Gw::new();
    let token = gw.token("ops", "operate");
    gw.env.fake.push(openai::text(&["Hel", "lo"]));
    let id = new_session(&gw, &token);
    block(async {
        let response = http()
            .post(gw.api(&format!("/sessions/{id}/prompt")))
            .bearer_auth(&token)
            .header("accept", "text/event-stream")
            .json(&json!({"prompt": "hi"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        let got = events(response, |_, _| false).await;
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["update", "update", "update", "update", "result"],
            "{got:?}"
        );
        assert_eq!(got[0].1["type"], "agent_message_chunk");
        assert_eq!(got[0].1["sessionId"], json!(id));
        // The model call's usage, after its answer was read.
        assert_eq!(got[2].1["type"], "usage_update");
        assert_eq!(got[2].1["outputTokens"], 2);
        assert_eq!(got[3].1["type"], "turn_complete");
        assert_eq!(got[4].1["text"], "Hello");
    });
}

#[test]
fn a_streamed_prompt_carries_its_content_to_the_provider() {
    let gw = Gw::new();
    let token = gw.token("ops", "operate");
    gw.env.fake.push(openai::text(&["a pixel"]));
    let id = new_session(&gw, &token);
    let png = STANDARD.encode(zeroclaw_testkit::PNG);
    block(async {
        let response = http()
            .post(gw.api(&format!("/sessions/{id}/prompt")))
            .bearer_auth(&token)
            .header("accept", "text/event-stream")
            .json(&json!({"prompt": "what?", "content": [
                {"type": "image", "mimeType": "image/png", "data": png},
            ]}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let got = events(response, |_, _| false).await;
        let (name, result) = got.last().unwrap();
        assert_eq!(
            (name.as_str(), &result["text"]),
            ("result", &json!("a pixel"))
        );
    });
    let body = &gw.env.fake.requests()[0].body;
    let user = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(
        user["content"][1]["image_url"]["url"],
        json!(format!("data:image/png;base64,{png}")),
        "{body}"
    );
}

#[test]
fn the_events_stream_replays_the_history_then_follows_the_session_live() {
    let gw = Gw::new();
    let token = gw.token("ops", "operate");
    let read = gw.token("watcher", "read");
    gw.env.fake.push(openai::text(&["first"]));
    gw.env.fake.push(openai::text(&["second"]));
    let id = new_session(&gw, &token);
    block(async {
        let prompt = |text: &'static str| {
            http()
                .post(gw.api(&format!("/sessions/{id}/prompt")))
                .bearer_auth(&token)
                .json(&json!({"prompt": text}))
                .send()
        };
        assert_eq!(prompt("one").await.unwrap().status(), 200);
        // The answer's head comes once the stream is attached (and its replay sent).
        let response = http()
            .get(gw.api(&format!("/sessions/{id}/events?replay=true")))
            .bearer_auth(&read)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let watcher = tokio::spawn(events(response, |_, v| {
            v["type"] == "agent_message_chunk" && v["text"] == "second"
        }));
        assert_eq!(prompt("two").await.unwrap().status(), 200);
        let got = watcher.await.unwrap();
        assert!(got.iter().all(|(name, _)| name == "update"), "{got:?}");
        assert_eq!(got[0].1["type"], "user_message_chunk", "{got:?}");
        assert_eq!(got[0].1["text"], "one");
        let answers: Vec<&Value> = got
            .iter()
            .filter(|(_, v)| v["type"] == "agent_message_chunk")
            .map(|(_, v)| &v["text"])
            .collect();
        assert_eq!(answers, [&json!("first"), &json!("second")]);
    });
}

#[test]
fn a_client_that_goes_away_mid_turn_does_not_stop_the_turn() {
    let gw = Gw::new();
    let token = gw.token("ops", "operate");
    let gate = Gate::new();
    gw.env.fake.push(
        openai::Builder::new()
            .wait_for(&gate)
            .text("finished anyway")
            .build(),
    );
    let id = new_session(&gw, &token);
    let response = block(
        http()
            .post(gw.api(&format!("/sessions/{id}/prompt")))
            .bearer_auth(&token)
            .header("accept", "text/event-stream")
            .json(&json!({"prompt": "work alone"}))
            .send(),
    )
    .unwrap();
    gw.env.fake.wait_for_requests(1);
    drop(response);
    // The prompt's stream has ended in the daemon.
    gw.env.daemon.wait_for_log("stream closed peer=http:");
    gate.open();
    let line = gw.env.daemon.wait_for_log("turn ended");
    assert!(line.contains("end_turn"), "{line}");
    block(async {
        let (_, page) = json_of(
            http()
                .get(gw.api(&format!("/sessions/{id}/messages")))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(page["messages"][1]["text"], "finished anyway");
    });
}

#[test]
fn revoking_a_token_ends_its_open_events_stream_with_an_error_event() {
    let gw = Gw::new();
    let token = gw.token("ops", "operate");
    let watcher = gw.token("watcher", "read");
    let id = new_session(&gw, &token);
    let response = open_events(&gw, &watcher, &id);
    gw.revoke("watcher");
    let got = block(events(response, |_, _| false));
    let (name, data) = got.last().unwrap();
    assert_eq!(name, "error", "{got:?}");
    assert!(
        [-32020, -32603].contains(&data["error"]["code"].as_i64().unwrap()),
        "{data}"
    );
}

#[test]
fn a_quiet_events_stream_sends_heartbeat_comments() {
    let gw = Gw::with("sse_heartbeat_secs = 1", "");
    let token = gw.token("ops", "operate");
    let id = new_session(&gw, &token);
    let response = open_events(&gw, &token, &id);
    // Nothing happens in the session: the first thing to arrive is a heartbeat, then
    // another (the stream stays open and keeps saying so).
    let text = block(async {
        let mut body = response.bytes_stream();
        let mut text = String::new();
        while text.lines().filter(|l| l.starts_with(':')).count() < 2 {
            let chunk = body.next().await.expect("the stream ended").unwrap();
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        text
    });
    assert!(
        text.lines().all(|l| l.is_empty() || l.starts_with(':')),
        "only heartbeats in a quiet stream: {text:?}"
    );
}

#[test]
fn a_daemon_stopping_ends_open_streams_with_an_error_event_and_exits() {
    let mut gw = Gw::new();
    let token = gw.token("ops", "operate");
    let id = new_session(&gw, &token);
    let response = open_events(&gw, &token, &id);
    // The stream is open (its session answers over the socket); now stop the daemon.
    let status = gw.env.daemon.stop();
    assert!(status.success(), "{status:?}");
    let got = block(events(response, |_, _| false));
    let (name, data) = got.last().expect("an event before the end");
    assert_eq!(name, "error", "{got:?}");
    assert_eq!(data["error"]["code"], -32603, "{data}");
}

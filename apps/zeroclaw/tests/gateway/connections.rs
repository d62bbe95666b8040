//! The connection cap: when `max_connections` is reached, the connection idle longest (one
//! that has sent nothing yet, or a keep-alive one between requests) is shed for the
//! newcomer, so idle or slow sockets cannot keep a real client out; a connection in the
//! middle of a request, a streaming response or a WebSocket is never shed, and when every
//! slot holds one, the newcomer gets 503 with `Retry-After`.

use crate::harness::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A keep-alive connection that has completed one request and waits for the next.
async fn kept_alive(addr: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(format!("GET /api/v1/health HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 1024];
    while !String::from_utf8_lossy(&answer).ends_with("{\"status\":\"ok\"}") {
        let n = stream.read(&mut buffer).await.unwrap();
        assert!(n > 0, "closed: {}", String::from_utf8_lossy(&answer));
        answer.extend_from_slice(&buffer[..n]);
    }
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200"));
    stream
}

/// Whether the server closed `stream` (end of file or a reset), reading what it sent.
async fn closed_by_server(stream: &mut TcpStream) -> bool {
    let mut rest = Vec::new();
    match stream.read_to_end(&mut rest).await {
        Ok(_) => rest.is_empty(),
        Err(_) => true,
    }
}

#[test]
fn with_max_connections_idle_sockets_held_a_real_request_is_served_and_the_longest_idle_is_shed() {
    // The header timeout is an hour: only shedding can make room within the test.
    let gw = Gw::with("max_connections = 4\nheader_timeout_secs = 3600", "");
    let addr = gw.addr();
    block(async {
        // Silent sockets (never a byte) and keep-alive ones, oldest first.
        let mut silent_first = TcpStream::connect(&addr).await.unwrap();
        let mut kept = kept_alive(&addr).await;
        let _silent = TcpStream::connect(&addr).await.unwrap();
        let _kept = kept_alive(&addr).await;

        // Real clients, each on a connection of its own that stays open (pooled).
        let first = http();
        let (status, body) = json_of(first.get(gw.api("/health")).send().await.unwrap()).await;
        assert_eq!((status, body), (200, json!({"status": "ok"})));
        // The one idle longest made room: closed without an answer.
        assert!(closed_by_server(&mut silent_first).await);

        // Another newcomer sheds the next longest idle, here the first keep-alive one.
        let second = http();
        let (status, _) = json_of(second.get(gw.api("/health")).send().await.unwrap()).await;
        assert_eq!(status, 200);
        assert!(closed_by_server(&mut kept).await);
    });
}

#[test]
fn a_websocket_and_a_streaming_response_are_never_shed_and_past_them_a_newcomer_gets_503() {
    let gw = Gw::with("max_connections = 2\nheader_timeout_secs = 3600", "");
    let token = gw.token("ops", "operate");
    let addr = gw.addr();
    block(async {
        let mut socket = ws(&gw.ws_url(), &token).await;
        initialize(&mut socket, json!({})).await;
        // A session, made over the WebSocket (a REST call would need a third connection).
        let created = call(&mut socket, 2, "session/new", json!({"cwd": gw.work()})).await;
        let id = created["result"]["sessionId"].as_str().unwrap().to_owned();
        let events = http()
            .get(gw.api(&format!("/sessions/{id}/events")))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(events.status(), 200);

        let answer = raw(
            &addr,
            &format!("GET /api/v1/health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(answer.contains("retry-after: 1"), "{answer}");

        // The WebSocket was not shed: it still answers.
        let status = call(&mut socket, 3, "status", json!({})).await;
        assert!(status.get("result").is_some(), "{status}");
        drop(events);
    });
}

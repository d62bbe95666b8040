#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `PeerHandle::send_all`: a burst of notifications (a replay's page) longer than the
//! outbound queue leaves whole and in order, the sender waiting for room as the connection
//! writes; a closed connection fails the burst instead of hanging it.

use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader, DuplexStream};
use tokio::task::JoinHandle;
use zeroclaw_rpc::{
    BoxFuture, HandlerResult, Notification, NotifyError, Peer, PeerConfig, PeerHandle, Service,
    StreamTransport,
};

/// Only a guard against hangs; nothing here asserts on timing.
const HANG_GUARD: Duration = Duration::from_secs(10);

/// Answers every request `null`; these tests send none.
struct Nothing;

impl Service for Nothing {
    fn request(&self, _method: String, _params: Option<Value>) -> BoxFuture<HandlerResult> {
        Box::pin(async { Ok(Value::Null.into()) })
    }
}

/// A running peer whose outbound queue holds 4 frames, and the other end of its stream.
fn small_queue_peer() -> (PeerHandle, JoinHandle<()>, DuplexStream) {
    let (ours, theirs) = tokio::io::duplex(256);
    let transport = StreamTransport::new(ours, "test", 1 << 20);
    let config = PeerConfig {
        outbound_queue: 4,
        ..PeerConfig::default()
    };
    let (peer, handle) = Peer::new(transport, config);
    let run = tokio::spawn(peer.run(Arc::new(Nothing)));
    (handle, run, theirs)
}

fn notes(n: usize) -> Vec<Notification> {
    (0..n)
        .map(|i| Notification::new("session/update", &json!({ "seq": i })).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_longer_than_the_queue_arrives_whole_and_in_order() {
    let (handle, _run, theirs) = small_queue_peer();
    let burst = notes(300);
    let sender = tokio::spawn(async move { handle.send_all(burst).await });
    let mut lines = BufReader::new(theirs).lines();
    for i in 0..300 {
        let line = tokio::time::timeout(HANG_GUARD, lines.next_line())
            .await
            .expect("hang guard")
            .unwrap()
            .expect("the peer closed");
        let frame: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(frame["params"]["seq"], i, "{line}");
    }
    sender.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_to_a_closed_connection_fails_instead_of_waiting() {
    let (handle, run, theirs) = small_queue_peer();
    drop(theirs);
    run.await.unwrap();
    let sent = tokio::time::timeout(HANG_GUARD, handle.send_all(notes(300)))
        .await
        .expect("hang guard");
    assert!(matches!(sent, Err(NotifyError::Closed)), "{sent:?}");
}

#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Peer-level behaviour over an in-memory duplex: two peers talking to each other, or one
//! peer against a raw NDJSON end that writes bytes and reads lines by hand.
//!
//! Ordering comes from barriers, oneshots and the reader's in-order processing (a request
//! the raw end sends after some frames is answered only after those frames were handled),
//! never from sleeps. `tokio::time::timeout` appears only as a hang guard.

use serde_json::{Value, json};
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::sync::{Barrier, Semaphore, mpsc, oneshot};
use tokio::task::JoinHandle;
use zeroclaw_rpc::codec::{FrameReader, FrameWriter};
use zeroclaw_rpc::transport::{FrameSink, RpcTransport};
use zeroclaw_rpc::{
    BoxFuture, CallError, HandlerResult, Peer, PeerConfig, PeerHandle, RpcError, Service,
    StreamTransport, codes,
};

/// Only a guard against hangs; nothing here asserts on timing.
const HANG_GUARD: Duration = Duration::from_secs(10);
/// A request timeout that never fires during a test.
const LONG: Duration = Duration::from_secs(3600);
const MAX_FRAME: usize = 1 << 20;

async fn guard<F: Future>(f: F) -> F::Output {
    tokio::time::timeout(HANG_GUARD, f)
        .await
        .expect("no progress within the hang guard")
}

/// A service made of one closure for requests; notifications are ignored.
struct FnService<F>(F);

impl<F> Service for FnService<F>
where
    F: Fn(String, Option<Value>) -> BoxFuture<HandlerResult> + Send + Sync + 'static,
{
    fn request(&self, method: String, params: Option<Value>) -> BoxFuture<HandlerResult> {
        (self.0)(method, params)
    }
}

/// `ping` answers `{"pong": params}` at once; anything else is method-not-found.
fn ping_service() -> FnService<impl Fn(String, Option<Value>) -> BoxFuture<HandlerResult>> {
    FnService(
        |method: String, params: Option<Value>| -> BoxFuture<HandlerResult> {
            Box::pin(async move {
                match method.as_str() {
                    "ping" => Ok(json!({ "pong": params }).into()),
                    other => Err(RpcError::method_not_found(other)),
                }
            })
        },
    )
}

fn spawn_peer<S: Service>(
    stream: DuplexStream,
    max_frame_bytes: usize,
    config: PeerConfig,
    service: S,
) -> (PeerHandle, JoinHandle<()>) {
    let transport = StreamTransport::new(stream, "test", max_frame_bytes);
    let (peer, handle) = Peer::new(transport, config);
    let run = tokio::spawn(peer.run(Arc::new(service)));
    (handle, run)
}

/// The hand-driven end of a connection: raw bytes out, parsed lines in.
struct RawEnd {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    write: WriteHalf<DuplexStream>,
}

impl RawEnd {
    fn new(stream: DuplexStream) -> Self {
        let (read, write) = tokio::io::split(stream);
        Self {
            lines: BufReader::new(read).lines(),
            write,
        }
    }

    async fn send_bytes(&mut self, bytes: &[u8]) {
        self.write.write_all(bytes).await.unwrap();
        self.write.flush().await.unwrap();
    }

    async fn send(&mut self, frame: &Value) {
        let mut line = serde_json::to_vec(frame).unwrap();
        line.push(b'\n');
        self.send_bytes(&line).await;
    }

    /// Sends `ping` with `id` and asserts that the very next line is its answer: proof
    /// that every frame sent before it was handled and that none of them was answered.
    async fn sync(&mut self, id: &str) {
        self.send(&json!({"jsonrpc": "2.0", "method": "ping", "params": [id], "id": id}))
            .await;
        let answer = self.recv().await;
        assert_eq!(
            answer,
            json!({"jsonrpc": "2.0", "result": {"pong": [id]}, "id": id}),
            "the next line after the frames under test must be the answer to the sync ping"
        );
    }

    async fn recv(&mut self) -> Value {
        let line = guard(self.lines.next_line())
            .await
            .unwrap()
            .expect("the peer closed the connection");
        serde_json::from_str(&line).unwrap()
    }
}

/// A peer running `service` on one end of a duplex, and a [`RawEnd`] on the other.
fn raw_peer<S: Service>(
    max_frame_bytes: usize,
    config: PeerConfig,
    service: S,
) -> (PeerHandle, JoinHandle<()>, RawEnd) {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (handle, run) = spawn_peer(ours, max_frame_bytes, config, service);
    (handle, run, RawEnd::new(theirs))
}

/// [`raw_peer`] for a service that needs the peer's own handle (set in `slot` before the
/// peer runs).
fn raw_peer_with_handle<S: Service>(
    slot: &OnceLock<PeerHandle>,
    service: S,
) -> (JoinHandle<()>, RawEnd) {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let transport = StreamTransport::new(ours, "test", MAX_FRAME);
    let (peer, handle) = Peer::new(transport, PeerConfig::default());
    slot.set(handle).unwrap();
    let run = tokio::spawn(peer.run(Arc::new(service)));
    (run, RawEnd::new(theirs))
}

fn spawn_request(
    handle: &PeerHandle,
    method: &'static str,
    params: Value,
    timeout: Duration,
) -> JoinHandle<Result<Value, CallError>> {
    let handle = handle.clone();
    tokio::spawn(async move { handle.request(method, params, timeout).await })
}

fn response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "result": result, "id": id})
}

// ---------------------------------------------------------------------------------------
// 1. Directional correlation
// ---------------------------------------------------------------------------------------

/// Forwards NDJSON lines from one stream to another, copying each parsed frame to `tap`.
fn relay(
    from: ReadHalf<DuplexStream>,
    mut to: WriteHalf<DuplexStream>,
    tap: mpsc::UnboundedSender<Value>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut lines = BufReader::new(from).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tap.send(serde_json::from_str(&line).unwrap()).unwrap();
            to.write_all(line.as_bytes()).await.unwrap();
            to.write_all(b"\n").await.unwrap();
            to.flush().await.unwrap();
        }
        let _ = to.shutdown().await;
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn same_id_in_flight_both_ways_resolves_each_caller_with_the_other_sides_answer() {
    // a <-> relay <-> b, so the test can see the ids on the wire.
    let (a_io, a_wire) = tokio::io::duplex(1 << 16);
    let (b_io, b_wire) = tokio::io::duplex(1 << 16);
    let (a_wire_read, a_wire_write) = tokio::io::split(a_wire);
    let (b_wire_read, b_wire_write) = tokio::io::split(b_wire);
    let (a_to_b_tap, mut a_to_b) = mpsc::unbounded_channel();
    let (b_to_a_tap, mut b_to_a) = mpsc::unbounded_channel();
    let _relay_ab = relay(a_wire_read, b_wire_write, a_to_b_tap);
    let _relay_ba = relay(b_wire_read, a_wire_write, b_to_a_tap);

    // Each side's handler answers only once both handlers are running, so both requests
    // are provably pending on both sides at the same time.
    let barrier = Arc::new(Barrier::new(2));
    let service = |name: &'static str| {
        let barrier = barrier.clone();
        FnService(move |method: String, _params| -> BoxFuture<HandlerResult> {
            let barrier = barrier.clone();
            Box::pin(async move {
                barrier.wait().await;
                Ok(json!({ "answeredBy": name, "method": method }).into())
            })
        })
    };
    let (a, _a_run) = spawn_peer(a_io, MAX_FRAME, PeerConfig::default(), service("a"));
    let (b, _b_run) = spawn_peer(b_io, MAX_FRAME, PeerConfig::default(), service("b"));

    let (from_b, from_a) = guard(async {
        tokio::join!(
            a.request("who", json!({"caller": "a"}), LONG),
            b.request("who", json!({"caller": "b"}), LONG),
        )
    })
    .await;
    assert_eq!(from_b.unwrap(), json!({"answeredBy": "b", "method": "who"}));
    assert_eq!(from_a.unwrap(), json!({"answeredBy": "a", "method": "who"}));

    // The wire: each direction carried a request with id zc-out-0 and a response with id
    // zc-out-0, and each response went to the side whose request it answers.
    let (request_ab, response_ab) = (a_to_b.recv().await.unwrap(), a_to_b.recv().await.unwrap());
    let (request_ba, response_ba) = (b_to_a.recv().await.unwrap(), b_to_a.recv().await.unwrap());
    assert_eq!(request_ab["id"], "zc-out-0");
    assert_eq!(request_ab["params"], json!({"caller": "a"}));
    assert_eq!(request_ba["id"], "zc-out-0");
    assert_eq!(request_ba["params"], json!({"caller": "b"}));
    assert_eq!(response_ab["id"], "zc-out-0");
    assert_eq!(response_ab["result"]["answeredBy"], "a");
    assert_eq!(response_ba["id"], "zc-out-0");
    assert_eq!(response_ba["result"]["answeredBy"], "b");
}

// ---------------------------------------------------------------------------------------
// 2, 3. What completes a pending request
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_response_with_a_pending_id_neither_completes_it_nor_is_answered() {
    let (handle, _run, mut raw) = raw_peer(MAX_FRAME, PeerConfig::default(), ping_service());
    let call = spawn_request(&handle, "question", json!({"q": 1}), LONG);
    let request = raw.recv().await;
    assert_eq!(request["method"], "question");
    let id = request["id"].clone();
    assert_eq!(id, "zc-out-0");

    let malformed = [
        json!({"jsonrpc": "2.0", "result": "bad: both", "error": {"code": 1, "message": "m"}, "id": id}),
        json!({"jsonrpc": "2.0", "error": {"message": "no code"}, "id": id}),
        json!({"jsonrpc": "2.0", "error": {"code": 1}, "id": id}),
        json!({"jsonrpc": "2.0", "error": {"code": 1.5, "message": "fractional code"}, "id": id}),
        json!({"jsonrpc": "2.0", "error": {"code": -1, "message": 7}, "id": id}),
        json!({"jsonrpc": "2.0", "error": "not an object", "id": id}),
        json!({"jsonrpc": "1.0", "result": "bad: version 1.0", "id": id}),
        json!({"result": "bad: no version", "id": id}),
    ];
    for frame in &malformed {
        raw.send(frame).await;
    }
    // Every malformed frame has been handled, none was answered...
    raw.sync("sync-1").await;
    // ...and none completed the request (were one to, the outcome below would differ).
    assert!(!call.is_finished());

    raw.send(&response(&id, json!({"answer": 42}))).await;
    assert_eq!(guard(call).await.unwrap(), Ok(json!({"answer": 42})));
    // The valid response is not answered either.
    raw.sync("sync-2").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn null_result_is_success_and_error_object_is_rpc_error_with_code_message_data() {
    let (handle, _run, mut raw) = raw_peer(MAX_FRAME, PeerConfig::default(), ping_service());

    let call = spawn_request(&handle, "nothing", json!({}), LONG);
    let id = raw.recv().await["id"].clone();
    raw.send(&response(&id, Value::Null)).await;
    assert_eq!(guard(call).await.unwrap(), Ok(Value::Null));

    let call = spawn_request(&handle, "fails", json!({}), LONG);
    let id = raw.recv().await["id"].clone();
    raw.send(&json!({
        "jsonrpc": "2.0",
        "error": {"code": -32004, "message": "no provider", "data": {"fix": "configure one"}},
        "id": id,
    }))
    .await;
    assert_eq!(
        guard(call).await.unwrap(),
        Err(CallError::Rpc(
            RpcError::new(-32004, "no provider").with_data(json!({"fix": "configure one"}))
        ))
    );

    // An error without data resolves with `data: None`.
    let call = spawn_request(&handle, "fails", json!({}), LONG);
    let id = raw.recv().await["id"].clone();
    raw.send(&json!({"jsonrpc": "2.0", "error": {"code": -5, "message": "plain"}, "id": id}))
        .await;
    assert_eq!(
        guard(call).await.unwrap(),
        Err(CallError::Rpc(RpcError::new(-5, "plain")))
    );
}

// ---------------------------------------------------------------------------------------
// 4. Closing
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_requests_fail_closed_when_the_raw_end_goes_away_and_later_requests_fail_at_once() {
    let (handle, run, mut raw) = raw_peer(MAX_FRAME, PeerConfig::default(), ping_service());
    let calls: Vec<_> = (0..3)
        .map(|i| spawn_request(&handle, "wait", json!({"n": i}), LONG))
        .collect();
    for _ in 0..3 {
        assert_eq!(raw.recv().await["method"], "wait");
    }
    drop(raw);

    for call in calls {
        assert_eq!(guard(call).await.unwrap(), Err(CallError::Closed));
    }
    guard(run).await.unwrap();
    assert!(handle.is_closed());
    guard(handle.closed()).await;
    assert_eq!(
        guard(handle.request("after", json!({}), LONG)).await,
        Err(CallError::Closed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_request_fails_closed_when_the_other_peer_closes() {
    let (a_io, b_io) = tokio::io::duplex(1 << 16);
    let (started_tx, started_rx) = oneshot::channel::<()>();
    let started_tx = Mutex::new(Some(started_tx));
    let b_service = FnService(move |_method, _params| -> BoxFuture<HandlerResult> {
        if let Some(tx) = started_tx.lock().unwrap().take() {
            let _ = tx.send(());
        }
        Box::pin(std::future::pending())
    });
    let (a, a_run) = spawn_peer(a_io, MAX_FRAME, PeerConfig::default(), ping_service());
    let (b, b_run) = spawn_peer(b_io, MAX_FRAME, PeerConfig::default(), b_service);

    let call = spawn_request(&a, "never", json!({}), LONG);
    guard(started_rx).await.unwrap();
    b.close();
    guard(b_run).await.unwrap();

    assert_eq!(guard(call).await.unwrap(), Err(CallError::Closed));
    guard(a_run).await.unwrap();
    assert!(a.is_closed());
    assert_eq!(
        guard(a.request("after", json!({}), LONG)).await,
        Err(CallError::Closed)
    );
    assert_eq!(
        guard(b.request("after", json!({}), LONG)).await,
        Err(CallError::Closed)
    );
}

// ---------------------------------------------------------------------------------------
// 5. Timeouts
// ---------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn timed_out_request_is_resolved_once_and_its_late_answer_is_ignored() {
    let (handle, _run, mut raw) = raw_peer(MAX_FRAME, PeerConfig::default(), ping_service());
    let timeout = Duration::from_millis(50);
    let call = spawn_request(&handle, "slow", json!({}), timeout);
    let request = raw.recv().await;
    assert_eq!(request["id"], "zc-out-0");
    // The raw end does not answer; the paused clock advances to the deadline.
    assert_eq!(call.await.unwrap(), Err(CallError::Timeout(timeout)));

    // Late answers for the timed-out id, in both shapes: ignored, not answered.
    raw.send(&response(&request["id"], json!("late"))).await;
    raw.send(
        &json!({"jsonrpc": "2.0", "error": {"code": -1, "message": "late"}, "id": "zc-out-0"}),
    )
    .await;
    raw.sync("sync-1").await;

    // The connection is unaffected and the counter moved on.
    let call = spawn_request(&handle, "next", json!({}), LONG);
    let request = raw.recv().await;
    assert_eq!(request["id"], "zc-out-1");
    assert_eq!(request["method"], "next");
    raw.send(&response(&request["id"], json!("fresh"))).await;
    assert_eq!(call.await.unwrap(), Ok(json!("fresh")));
    assert!(!handle.is_closed());
}

// ---------------------------------------------------------------------------------------
// 6. The reader never waits on a handler
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reader_keeps_reading_while_a_handler_waits_for_a_later_request() {
    let (release_tx, release_rx) = oneshot::channel::<()>();
    let release_tx = Arc::new(Mutex::new(Some(release_tx)));
    let release_rx = Arc::new(Mutex::new(Some(release_rx)));
    let service = FnService(move |method: String, _params| -> BoxFuture<HandlerResult> {
        match method.as_str() {
            "slow" => {
                let rx = release_rx.lock().unwrap().take();
                Box::pin(async move {
                    rx.expect("slow called twice").await.unwrap();
                    Ok(json!("slow done").into())
                })
            }
            "release" => {
                let tx = release_tx.lock().unwrap().take();
                Box::pin(async move {
                    tx.expect("release called twice").send(()).unwrap();
                    Ok(json!("released").into())
                })
            }
            other => {
                let error = RpcError::method_not_found(other);
                Box::pin(async move { Err(error) })
            }
        }
    });
    let (_handle, _run, mut raw) = raw_peer(MAX_FRAME, PeerConfig::default(), service);

    raw.send(&json!({"jsonrpc": "2.0", "method": "slow", "id": 1}))
        .await;
    raw.send(&json!({"jsonrpc": "2.0", "method": "release", "id": 2}))
        .await;
    let mut answers = [raw.recv().await, raw.recv().await];
    answers.sort_by_key(|a| a["id"].as_i64());
    assert_eq!(
        answers,
        [
            json!({"jsonrpc": "2.0", "result": "slow done", "id": 1}),
            json!({"jsonrpc": "2.0", "result": "released", "id": 2}),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn response_to_our_own_request_is_read_while_a_handler_awaits_it() {
    let peer_handle: Arc<OnceLock<PeerHandle>> = Arc::new(OnceLock::new());
    let service = {
        let peer_handle = peer_handle.clone();
        FnService(move |method: String, params| -> BoxFuture<HandlerResult> {
            let handle = peer_handle.get().cloned();
            Box::pin(async move {
                match method.as_str() {
                    "ask" => {
                        let handle = handle.expect("handle set before run");
                        let answer = handle
                            .request("question", json!({"from": "handler"}), LONG)
                            .await
                            .map_err(RpcError::internal)?;
                        Ok(json!({ "asked": answer }).into())
                    }
                    "ping" => Ok(json!({ "pong": params }).into()),
                    other => Err(RpcError::method_not_found(other)),
                }
            })
        })
    };
    let (_run, mut raw) = raw_peer_with_handle(&peer_handle, service);

    raw.send(&json!({"jsonrpc": "2.0", "method": "ask", "id": "raw-ask"}))
        .await;
    let question = raw.recv().await;
    assert_eq!(question["method"], "question");
    assert_eq!(question["id"], "zc-out-0");
    // While "ask" is pending, other requests are still served.
    raw.sync("sync-1").await;
    raw.send(&response(&question["id"], json!("forty-two")))
        .await;
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc": "2.0", "result": {"asked": "forty-two"}, "id": "raw-ask"})
    );
}

// ---------------------------------------------------------------------------------------
// 7. Envelope rules at the peer
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_with_unknown_ids_are_ignored_and_not_answered() {
    let (handle, _run, mut raw) = raw_peer(MAX_FRAME, PeerConfig::default(), ping_service());
    for frame in [
        // Not pending yet: this peer has sent nothing.
        response(&json!("zc-out-0"), json!("stray")),
        response(&json!("zc-out-99"), json!("stray")),
        response(&json!(0), json!("numeric id")),
        response(&Value::Null, json!("null id")),
        json!({"jsonrpc": "2.0", "error": {"code": -1, "message": "stray"}, "id": "nobody"}),
    ] {
        raw.send(&frame).await;
    }
    raw.sync("sync-1").await;

    // A stray answer for "zc-out-0" before it was sent does not pre-empt the real one.
    let call = spawn_request(&handle, "real", json!({}), LONG);
    let request = raw.recv().await;
    assert_eq!(request["id"], "zc-out-0");
    raw.send(&response(&request["id"], json!("real answer")))
        .await;
    assert_eq!(guard(call).await.unwrap(), Ok(json!("real answer")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_request_with_a_valid_id_is_answered_invalid_request_with_that_id() {
    let (_handle, _run, mut raw) = raw_peer(MAX_FRAME, PeerConfig::default(), ping_service());
    let cases = [
        (
            json!({"jsonrpc": "1.0", "method": "ping", "id": "r-7"}),
            json!("r-7"),
        ),
        (
            json!({"jsonrpc": "2.0", "method": "ping", "params": 3, "id": 8}),
            json!(8),
        ),
        (
            json!({"jsonrpc": "2.0", "method": 5, "id": "r-9"}),
            json!("r-9"),
        ),
        // An id that is itself invalid is not echoed.
        (
            json!({"jsonrpc": "2.0", "method": "ping", "id": {"x": 1}}),
            Value::Null,
        ),
    ];
    for (frame, id) in cases {
        raw.send(&frame).await;
        let answer = raw.recv().await;
        assert_eq!(answer["id"], id, "{frame}");
        assert_eq!(answer["error"]["code"], codes::INVALID_REQUEST, "{frame}");
        assert!(answer.get("result").is_none(), "{frame}");
    }
    // An invalid notification is dropped without an answer.
    raw.send(&json!({"jsonrpc": "1.0", "method": "ping"})).await;
    raw.sync("sync-1").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_frame_gets_one_invalid_request_with_null_id_and_the_limit_and_the_connection_stays_usable()
 {
    let limit = 1024;
    let (_handle, _run, mut raw) = raw_peer(limit, PeerConfig::default(), ping_service());
    let big = serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "method": "ping",
        "params": {"pad": "x".repeat(10 * limit)},
        "id": "big",
    }))
    .unwrap();
    // In pieces, so the peer sees the frame cross the limit before its newline arrives.
    for chunk in big.chunks(700) {
        raw.send_bytes(chunk).await;
    }
    raw.send_bytes(b"\n").await;

    let answer = raw.recv().await;
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], codes::INVALID_REQUEST);
    assert_eq!(answer["error"]["data"], json!({"limit": limit}));
    // Exactly one error for the frame; the next answer is the next request's.
    raw.sync("sync-1").await;

    // A frame that arrives whole and over the limit gets the same single answer.
    let mut whole = big.clone();
    whole.push(b'\n');
    raw.send_bytes(&whole).await;
    let answer = raw.recv().await;
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], codes::INVALID_REQUEST);
    assert_eq!(answer["error"]["data"], json!({"limit": limit}));
    raw.sync("sync-2").await;
}

/// `echo` answers its params twice over (at once; `echo-later` after a yield, so as its
/// own task).
fn echo_service() -> FnService<impl Fn(String, Option<Value>) -> BoxFuture<HandlerResult>> {
    FnService(
        |method: String, params: Option<Value>| -> BoxFuture<HandlerResult> {
            Box::pin(async move {
                if method == "echo-later" {
                    tokio::task::yield_now().await;
                }
                Ok(json!([params, params]).into())
            })
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_the_frame_cap_is_replaced_by_an_error_naming_the_cap() {
    let limit = 1024;
    let (handle, _run, mut raw) = raw_peer(limit, PeerConfig::default(), echo_service());
    // The request fits; its answer (the params plus the envelope) does not.
    let pad = "x".repeat(limit * 6 / 10);
    for method in ["echo", "echo-later"] {
        raw.send(&json!({"jsonrpc": "2.0", "method": method, "params": [pad], "id": method}))
            .await;
        let answer = raw.recv().await;
        assert_eq!(answer["id"], method);
        assert_eq!(answer["error"]["code"], codes::INTERNAL_ERROR, "{answer}");
        assert_eq!(answer["error"]["data"]["limit"], limit, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("frame cap")
        );
    }
    // A notification over the cap is never written; the next line is the next answer.
    handle.notify("big", json!([pad, pad])).await.unwrap();
    raw.send(&json!({"jsonrpc": "2.0", "method": "echo", "params": [1], "id": 1}))
        .await;
    assert_eq!(raw.recv().await["result"], json!([[1], [1]]));
    // Our own request over the cap fails at once, unsent.
    let err = handle.request("big", json!([pad, pad]), LONG).await;
    assert!(
        matches!(&err, Err(CallError::Rpc(e)) if e.message.contains("frame cap")),
        "{err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_answer_to_a_pending_request_resolves_it_at_once() {
    let limit = 1024;
    let (handle, _run, mut raw) = raw_peer(limit, PeerConfig::default(), ping_service());
    let call = {
        let handle = handle.clone();
        tokio::spawn(async move { handle.request("get", json!({}), LONG).await })
    };
    let request = raw.recv().await;
    let id = request["id"].as_str().unwrap().to_owned();
    // A nested object ending in the same id is not mistaken for the answer's own member.
    let nested = format!(
        r#"{{"jsonrpc":"2.0","method":"note","params":{{"pad":"{}","id":"{id}"}}}}"#,
        "y".repeat(2 * limit)
    );
    raw.send_bytes(format!("{nested}\n").as_bytes()).await;
    let answer = format!(
        r#"{{"jsonrpc":"2.0","result":"{}","id":"{id}"}}"#,
        "x".repeat(4 * limit)
    );
    for chunk in answer.as_bytes().chunks(700) {
        raw.send_bytes(chunk).await;
    }
    raw.send_bytes(b"\n").await;
    // The guard is far below the request's own timeout (an hour): resolved by the tail.
    let outcome = guard(call).await.unwrap();
    match outcome {
        Err(CallError::Rpc(e)) => {
            assert_eq!(e.code, codes::INTERNAL_ERROR);
            assert_eq!(e.data, Some(json!({"limit": limit})));
            assert!(e.message.contains("frame cap"), "{}", e.message);
        }
        other => panic!("expected the oversized-answer error, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// 8. max_in_flight
// ---------------------------------------------------------------------------------------

/// `block` waits for a permit that the `release` notification hands out.
struct Blocking {
    gate: Arc<Semaphore>,
}

impl Service for Blocking {
    fn request(&self, method: String, params: Option<Value>) -> BoxFuture<HandlerResult> {
        let gate = self.gate.clone();
        Box::pin(async move {
            match method.as_str() {
                "block" => {
                    gate.acquire().await.unwrap().forget();
                    Ok(json!("unblocked").into())
                }
                "ping" => Ok(json!({ "pong": params }).into()),
                other => Err(RpcError::method_not_found(other)),
            }
        })
    }

    fn notification(&self, method: String, params: Option<Value>) {
        if method == "release" {
            let n = params.and_then(|p| p["n"].as_u64()).unwrap_or(0);
            self.gate.add_permits(usize::try_from(n).unwrap());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_beyond_max_in_flight_is_answered_limit_reached_at_once() {
    let config = PeerConfig {
        max_in_flight: 2,
        ..PeerConfig::default()
    };
    let service = Blocking {
        gate: Arc::new(Semaphore::new(0)),
    };
    let (_handle, _run, mut raw) = raw_peer(MAX_FRAME, config, service);

    raw.send(&json!({"jsonrpc": "2.0", "method": "block", "id": 1}))
        .await;
    raw.send(&json!({"jsonrpc": "2.0", "method": "block", "id": 2}))
        .await;
    // Two handlers are blocked: any third request, blocking or not, is refused at once.
    for (id, method) in [(3, "block"), (4, "ping")] {
        raw.send(&json!({"jsonrpc": "2.0", "method": method, "id": id}))
            .await;
        let answer = raw.recv().await;
        assert_eq!(answer["id"], id);
        assert_eq!(answer["error"]["code"], codes::OVERLOADED);
        assert_eq!(answer["error"]["data"], json!({"limit": 2}));
    }

    raw.send(&json!({"jsonrpc": "2.0", "method": "release", "params": {"n": 2}}))
        .await;
    let mut answers = [raw.recv().await, raw.recv().await];
    answers.sort_by_key(|a| a["id"].as_i64());
    assert_eq!(
        answers,
        [
            json!({"jsonrpc": "2.0", "result": "unblocked", "id": 1}),
            json!({"jsonrpc": "2.0", "result": "unblocked", "id": 2}),
        ]
    );
    // Their slots are free again.
    raw.sync("sync-1").await;
}

// ---------------------------------------------------------------------------------------
// 9. Ids
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outbound_ids_count_zc_out_0_1_2_per_connection() {
    let (handle, _run, mut raw) = raw_peer(MAX_FRAME, PeerConfig::default(), ping_service());
    for n in 0..3 {
        let call = spawn_request(&handle, "count", json!({"n": n}), LONG);
        let request = raw.recv().await;
        assert_eq!(
            request,
            json!({"jsonrpc": "2.0", "method": "count", "params": {"n": n}, "id": format!("zc-out-{n}")})
        );
        raw.send(&response(&request["id"], json!(n))).await;
        assert_eq!(guard(call).await.unwrap(), Ok(json!(n)));
    }
    // Notifications carry no id and do not use up one.
    handle.notify("note", json!({})).await.unwrap();
    let note = raw.recv().await;
    assert!(note.get("id").is_none());
    let call = spawn_request(&handle, "count", json!({"n": 3}), LONG);
    let request = raw.recv().await;
    assert_eq!(request["id"], "zc-out-3");
    raw.send(&response(&request["id"], json!(3))).await;
    assert_eq!(guard(call).await.unwrap(), Ok(json!(3)));

    // Concurrent requests get distinct ids.
    let calls: Vec<_> = (0..4)
        .map(|n| spawn_request(&handle, "count", json!({"n": n}), LONG))
        .collect();
    let mut ids = Vec::new();
    for _ in 0..4 {
        let request = raw.recv().await;
        ids.push(request["id"].as_str().unwrap().to_owned());
        raw.send(&response(&request["id"], request["params"]["n"].clone()))
            .await;
    }
    ids.sort();
    assert_eq!(ids, ["zc-out-4", "zc-out-5", "zc-out-6", "zc-out-7"]);
    for (n, call) in calls.into_iter().enumerate() {
        assert_eq!(guard(call).await.unwrap(), Ok(json!(n)));
    }

    // A new connection starts its own counter.
    let (other, _other_run, mut other_raw) =
        raw_peer(MAX_FRAME, PeerConfig::default(), ping_service());
    let call = spawn_request(&other, "count", json!({}), LONG);
    let request = other_raw.recv().await;
    assert_eq!(request["id"], "zc-out-0");
    other_raw.send(&response(&request["id"], json!("ok"))).await;
    assert_eq!(guard(call).await.unwrap(), Ok(json!("ok")));
}

// ---------------------------------------------------------------------------------------
// Timeout covers a full outbound queue
// ---------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn request_times_out_even_when_the_outbound_queue_is_full() {
    // A tiny pipe the raw end never reads, and a one-frame queue: the writer blocks on the
    // pipe, the queue fills, and a request cannot even be queued.
    let (ours, theirs) = tokio::io::duplex(64);
    let config = PeerConfig {
        outbound_queue: 1,
        ..PeerConfig::default()
    };
    let (handle, _run) = spawn_peer(ours, MAX_FRAME, config, ping_service());
    let filler = json!({"pad": "x".repeat(256)});
    // The first frames go to the writer (blocked on the pipe), then the queue fills.
    let mut queued = 0;
    while queued < 16 {
        match handle.try_notify("fill", filler.clone()) {
            Ok(()) => queued += 1,
            Err(zeroclaw_rpc::NotifyError::Full) => break,
            Err(e) => panic!("unexpected {e:?}"),
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(
        handle.try_notify("fill", filler.clone()),
        Err(zeroclaw_rpc::NotifyError::Full)
    );

    let timeout = Duration::from_millis(50);
    assert_eq!(
        guard(handle.request("stuck", json!({}), timeout)).await,
        Err(CallError::Timeout(timeout))
    );
    assert!(!handle.is_closed());

    // The connection still works once the other side reads: the timed-out request was
    // never sent, and the next one gets an answer.
    let mut raw = RawEnd::new(theirs);
    let call = spawn_request(&handle, "after", json!({}), LONG);
    let request = loop {
        let frame = raw.recv().await;
        if frame["method"] != "fill" {
            break frame;
        }
    };
    assert_eq!(request["method"], "after");
    raw.send(&response(&request["id"], json!("ok"))).await;
    assert_eq!(guard(call).await.unwrap(), Ok(json!("ok")));
}

// ---------------------------------------------------------------------------------------
// Order: what a handler queued leaves before its answer
// ---------------------------------------------------------------------------------------

/// A handler answered inline writes its answer into the connection's own buffer, not the
/// queue; the notifications it queued first (a session replay's events) must still reach
/// the other side before that answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_a_handler_queued_arrive_before_its_inline_answer() {
    let peer_handle: Arc<OnceLock<PeerHandle>> = Arc::new(OnceLock::new());
    let service = {
        let peer_handle = peer_handle.clone();
        FnService(move |method: String, params| -> BoxFuture<HandlerResult> {
            let handle = peer_handle.get().cloned().expect("handle set before run");
            Box::pin(async move {
                match method.as_str() {
                    "replay" => {
                        for n in 0..3 {
                            handle.notify("event", json!({ "n": n })).await.unwrap();
                        }
                        Ok(json!("replayed").into())
                    }
                    "ping" => Ok(json!({ "pong": params }).into()),
                    other => Err(RpcError::method_not_found(other)),
                }
            })
        })
    };
    let (_run, mut raw) = raw_peer_with_handle(&peer_handle, service);

    raw.send(&json!({"jsonrpc": "2.0", "method": "replay", "id": 1}))
        .await;
    for n in 0..3 {
        assert_eq!(
            raw.recv().await,
            json!({"jsonrpc": "2.0", "method": "event", "params": { "n": n }})
        );
    }
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc": "2.0", "result": "replayed", "id": 1})
    );
}

// ---------------------------------------------------------------------------------------
// Waiting for queue room (how a streaming turn keeps to a reader's pace)
// ---------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn wait_for_room_times_out_on_a_stalled_reader_and_returns_once_it_reads() {
    let config = PeerConfig {
        outbound_queue: 4,
        ..PeerConfig::default()
    };
    let (handle, _run, mut raw) = raw_peer(MAX_FRAME, config, ping_service());
    let filler = json!({"pad": "x".repeat(4096)});
    // The duplex (64 KiB) and the output buffer fill first, then the queue.
    let mut sent = 0;
    loop {
        match handle.try_notify("fill", filler.clone()) {
            Ok(()) => sent += 1,
            Err(zeroclaw_rpc::NotifyError::Full) => break,
            Err(e) => panic!("unexpected {e:?}"),
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(handle.queue_room(), 0);
    let soon = tokio::time::Instant::now() + Duration::from_secs(5);
    assert!(!handle.wait_for_room(2, soon).await, "nobody reads");
    // Reading everything lets the connection drain its queue.
    let waiter = {
        let handle = handle.clone();
        tokio::spawn(async move {
            handle
                .wait_for_room(4, tokio::time::Instant::now() + LONG)
                .await
        })
    };
    for _ in 0..sent {
        assert_eq!(raw.recv().await["method"], "fill");
    }
    assert!(guard(waiter).await.unwrap());
    assert_eq!(handle.queue_room(), handle.queue_capacity());
}

// ---------------------------------------------------------------------------------------
// Fairness: queued frames go out while input never stops
// ---------------------------------------------------------------------------------------

/// Counts the notifications it is sent.
struct Counting(Arc<std::sync::atomic::AtomicUsize>);

impl Service for Counting {
    fn request(&self, method: String, _params: Option<Value>) -> BoxFuture<HandlerResult> {
        Box::pin(std::future::ready(Err(RpcError::method_not_found(&method))))
    }

    fn notification(&self, _method: String, _params: Option<Value>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A sink that notes, at each write, how many notifications the service had seen.
struct NotingSink {
    inner: FrameWriter<WriteHalf<DuplexStream>>,
    seen: Arc<std::sync::atomic::AtomicUsize>,
    at_write: Arc<Mutex<Vec<usize>>>,
}

impl FrameSink for NotingSink {
    async fn write_some(&mut self, lines: &[u8]) -> std::io::Result<usize> {
        let seen = self.seen.load(std::sync::atomic::Ordering::Relaxed);
        self.at_write.lock().unwrap().push(seen);
        self.inner.write_bytes(lines).await
    }

    async fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().await
    }

    async fn close(&mut self) -> std::io::Result<()> {
        self.inner.shutdown().await
    }
}

struct NotingTransport {
    stream: DuplexStream,
    seen: Arc<std::sync::atomic::AtomicUsize>,
    at_write: Arc<Mutex<Vec<usize>>>,
}

impl RpcTransport for NotingTransport {
    type Source = FrameReader<ReadHalf<DuplexStream>>;
    type Sink = NotingSink;

    fn peer_label(&self) -> &str {
        "test"
    }

    fn max_frame_bytes(&self) -> usize {
        MAX_FRAME
    }

    fn into_halves(self) -> (Self::Source, Self::Sink) {
        let (read, write) = tokio::io::split(self.stream);
        let sink = NotingSink {
            inner: FrameWriter::new(write),
            seen: self.seen,
            at_write: self.at_write,
        };
        (FrameReader::new(read, MAX_FRAME), sink)
    }
}

/// A long run of notifications (answered with nothing) is already buffered when a frame is
/// queued: the frame is written after a few of them, not after the whole run.
#[tokio::test]
async fn a_queued_frame_goes_out_while_input_never_stops() {
    use std::sync::atomic::AtomicUsize;
    const RUN: usize = 20_000;
    let seen = Arc::new(AtomicUsize::new(0));
    let at_write = Arc::new(Mutex::new(Vec::new()));
    let line = br#"{"jsonrpc":"2.0","method":"noise"}
"#;
    let (ours, theirs) = tokio::io::duplex(line.len() * RUN + 1024);
    let RawEnd {
        mut lines,
        mut write,
    } = RawEnd::new(theirs);
    write.write_all(&line.repeat(RUN)).await.unwrap();
    let transport = NotingTransport {
        stream: ours,
        seen: seen.clone(),
        at_write: at_write.clone(),
    };
    let (peer, handle) = Peer::new(transport, PeerConfig::default());
    handle.try_notify("queued", json!({})).unwrap();
    let _run = tokio::spawn(peer.run(Arc::new(Counting(seen.clone()))));
    let first = guard(lines.next_line()).await.unwrap().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&first).unwrap(),
        json!({"jsonrpc": "2.0", "method": "queued", "params": {}})
    );
    // At most 64 frames are read while output is owed (and the frame is taken from the
    // queue after the first read). Without either rule it waited for the runtime's budget.
    let first_write = at_write.lock().unwrap()[0];
    assert!(
        first_write <= 66,
        "the queued frame waited for {first_write} of {RUN} notifications"
    );
}

/// A handle with no connection behind it takes every notification at once (a sender never
/// waits on it), refuses requests as a closed connection does, and closes like any other.
#[tokio::test]
async fn a_discarding_handle_drops_what_is_sent_without_waiting_and_refuses_requests() {
    let handle = PeerHandle::discarding("rest".into(), MAX_FRAME);
    let room = handle.queue_room();
    assert!(room >= 1);
    for n in 0..1000 {
        guard(handle.notify("session/update", json!({ "n": n })))
            .await
            .unwrap();
        handle
            .try_notify("session/update", json!({ "n": n }))
            .unwrap();
    }
    assert_eq!(handle.queue_room(), room);
    let deadline = tokio::time::Instant::now() + LONG;
    assert!(guard(handle.wait_for_room(room, deadline)).await);
    assert!(matches!(
        guard(handle.request("elicitation/create", json!({}), LONG)).await,
        Err(CallError::Closed)
    ));
    handle.close();
    assert!(handle.is_closed());
    assert!(handle.try_notify("session/update", json!({})).is_err());
    assert!(
        guard(handle.notify("session/update", json!({})))
            .await
            .is_err()
    );
}

/// A channel handle's frames reach its reader as they were sent; a sender waiting for room
/// is woken as the reader takes frames; once closed, the reader gets what was queued, then
/// the end; requests fail at once, nobody being there to answer them.
#[tokio::test]
async fn a_channel_handle_is_read_by_its_caller_with_the_queues_pacing_and_close() {
    let (handle, mut outbound) = PeerHandle::channel("sse".into(), MAX_FRAME, 2);
    handle
        .try_notify("session/update", json!({ "n": 1 }))
        .unwrap();
    handle
        .try_notify("session/update", json!({ "n": 2 }))
        .unwrap();
    assert!(matches!(
        handle.try_notify("session/update", json!({ "n": 3 })),
        Err(zeroclaw_rpc::NotifyError::Full)
    ));
    assert_eq!(handle.queue_room(), 0);
    let waiter = {
        let handle = handle.clone();
        tokio::spawn(async move {
            let deadline = tokio::time::Instant::now() + LONG;
            handle.wait_for_room(2, deadline).await
        })
    };
    let mut frames = Vec::new();
    assert_eq!(guard(outbound.recv_many(&mut frames, 8)).await, 2);
    assert!(guard(waiter).await.unwrap());
    assert_eq!(
        &frames[0][..],
        br#"{"jsonrpc":"2.0","method":"session/update","params":{"n":1}}"#
    );
    assert!(matches!(
        guard(handle.request("elicitation/create", json!({}), LONG)).await,
        Err(CallError::Closed)
    ));
    guard(handle.notify("session/update", json!({ "n": 4 })))
        .await
        .unwrap();
    handle.close();
    frames.clear();
    assert_eq!(guard(outbound.recv_many(&mut frames, 8)).await, 1);
    assert_eq!(guard(outbound.recv_many(&mut frames, 8)).await, 0);
    // Dropping the reader closes the handle for its senders.
    let (handle, outbound) = PeerHandle::channel("sse".into(), MAX_FRAME, 2);
    drop(outbound);
    assert!(handle.is_closed());
}

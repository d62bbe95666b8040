//! Property tests of the protocol layer: framing under arbitrary chunking, the envelope
//! table on arbitrary JSON, one answer per request through a real `Peer`, and
//! resolve-exactly-once for requests crossing in both directions, plus the regression test
//! for two peers flooding each other (which used to wedge the connection).
//!
//! Time-dependent cases run on a paused tokio clock, so timeouts fire deterministically and
//! nothing here waits in real time or asserts on timing; the one `sleep` is a handler that
//! answers after its caller's deadline, on that virtual clock.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod oracle;

use bytes::Bytes;
use oracle::envelope::{Expected, expected, verdict};
use oracle::framing::{chunked, decode_chunked, decode_whole, frames, oversized_end};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use zeroclaw_rpc::codec::{Frame, FrameReader, FrameWriter};
use zeroclaw_rpc::envelope::{Envelope, classify};
use zeroclaw_rpc::{
    BoxFuture, CallError, DEFAULT_MAX_FRAME_BYTES, HandlerResult, Peer, PeerConfig, PeerHandle,
    RpcError, Service, StreamTransport, codes,
};

// ---------------------------------------------------------------------------------------
// Generators

/// Floats are multiples of 1/4, which print and parse back exactly.
fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-4000i32..4000).prop_map(|n| json!(f64::from(n) / 4.0)),
        "\\PC{0,8}".prop_map(Value::String),
        prop_oneof![Just("2.0"), Just("status"), Just("")].prop_map(|s| json!(s)),
    ]
}

fn json_key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop_oneof![
            Just("jsonrpc"), Just("method"), Just("params"), Just("id"), Just("result"),
            Just("error"), Just("code"), Just("message"), Just("data"),
        ]
        .prop_map(str::to_owned),
        1 => "\\PC{0,4}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((json_key(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn opt(s: impl Strategy<Value = Value>) -> impl Strategy<Value = Option<Value>> {
    prop_oneof![1 => Just(None), 3 => s.prop_map(Some)]
}

/// Objects with a `method` key, mostly valid, sometimes wrong in one or more members, now
/// and then carrying `result`/`error` too.
fn request_shaped(id: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    let version = prop_oneof![
        6 => Just(Some(json!("2.0"))),
        1 => Just(None),
        1 => prop_oneof![Just(json!("1.0")), Just(json!(2.0)), json_value()].prop_map(Some),
    ];
    let method = prop_oneof![
        6 => "[a-z/]{0,12}".prop_map(Value::String),
        1 => json_value(),
    ];
    let params = prop_oneof![
        2 => Just(None),
        2 => prop::collection::vec((json_key(), json_value()), 0..4)
            .prop_map(|kv| Some(Value::Object(kv.into_iter().collect()))),
        2 => prop::collection::vec(json_value(), 0..4).prop_map(|v| Some(Value::Array(v))),
        1 => json_leaf().prop_map(Some),
    ];
    let extra = prop::collection::vec(
        (
            prop_oneof![Just("result"), Just("error"), Just("x")].prop_map(str::to_owned),
            json_value(),
        ),
        0..2,
    );
    (
        version,
        method,
        params,
        opt(id),
        extra,
        prop::bool::weighted(0.1),
    )
        .prop_map(|(version, method, params, id, extra, use_extra)| {
            let mut map = Map::new();
            if let Some(v) = version {
                map.insert("jsonrpc".into(), v);
            }
            map.insert("method".into(), method);
            if let Some(p) = params {
                map.insert("params".into(), p);
            }
            if let Some(id) = id {
                map.insert("id".into(), id);
            }
            if use_extra {
                map.extend(extra);
            }
            Value::Object(map)
        })
}

fn any_id() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => any::<i64>().prop_map(Value::from),
        3 => "\\PC{0,6}".prop_map(Value::String),
        1 => Just(Value::Null),
        1 => json_value(),
    ]
}

// ---------------------------------------------------------------------------------------
// Framing

#[derive(Debug, Clone)]
enum Line {
    Frame(Vec<u8>),
    Blank(&'static str),
}

#[derive(Debug, Clone)]
struct Stream {
    lines: Vec<(Line, bool)>,
    final_newline: bool,
    max: usize,
    chunks: Vec<usize>,
}

impl Stream {
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let n = self.lines.len();
        for (i, (line, crlf)) in self.lines.iter().enumerate() {
            match line {
                Line::Frame(f) => out.extend_from_slice(f),
                Line::Blank(b) => out.extend_from_slice(b.as_bytes()),
            }
            if i + 1 < n || self.final_newline {
                out.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
            }
        }
        out
    }

    fn expected(&self) -> Vec<Frame> {
        self.lines
            .iter()
            .flat_map(|(line, _)| match line {
                Line::Frame(f) if f.len() > self.max => {
                    vec![Frame::Oversized { limit: self.max }, oversized_end(f)]
                }
                Line::Frame(f) => vec![Frame::Line(Bytes::copy_from_slice(f))],
                Line::Blank(_) => vec![],
            })
            .collect()
    }
}

fn stream() -> impl Strategy<Value = Stream> {
    let line = prop_oneof![
        4 => json_value().prop_map(|v| Line::Frame(serde_json::to_vec(&v).unwrap())),
        1 => request_shaped(any_id()).prop_map(|v| Line::Frame(serde_json::to_vec(&v).unwrap())),
        1 => prop_oneof![Just(""), Just(" "), Just("\t"), Just("  \t "), Just("\r")]
            .prop_map(Line::Blank),
    ];
    (
        prop::collection::vec((line, any::<bool>()), 0..24),
        any::<bool>(),
        prop_oneof![
            Just(16usize),
            Just(64),
            Just(4096),
            Just(DEFAULT_MAX_FRAME_BYTES)
        ],
        prop::collection::vec(1usize..80, 1..12),
    )
        .prop_map(|(lines, final_newline, max, chunks)| Stream {
            lines,
            final_newline,
            max,
            chunks,
        })
}

fn current_thread(paused: bool) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(paused)
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn decoder_frames_do_not_depend_on_chunking(s in stream()) {
        let data = s.bytes();
        let want = s.expected();
        prop_assert_eq!(&decode_whole(s.max, &data), &want);
        prop_assert_eq!(&decode_chunked(s.max, &data, &s.chunks), &want);
        // The line-by-line model the fuzzer judges by agrees with the generated lines.
        prop_assert_eq!(&frames(s.max, &data), &want);
    }

    #[test]
    fn classify_agrees_with_the_envelope_table(
        v in prop_oneof![json_value(), request_shaped(any_id())],
    ) {
        let frame = serde_json::to_vec(&v).unwrap();
        let got = classify(&frame);
        prop_assert_eq!(verdict(&got), expected(&frame), "{:?}", got);
        if let Envelope::Reply { error, .. } = &got {
            prop_assert!(error.code == codes::PARSE_ERROR || error.code == codes::INVALID_REQUEST);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn frame_reader_over_a_duplex_sees_the_same_frames(
        s in stream(),
        pipe in 1usize..64,
    ) {
        let data = s.bytes();
        let want = s.expected();
        let got = current_thread(false).block_on(async move {
            let (mut tx, rx) = tokio::io::duplex(pipe);
            let chunks = s.chunks.clone();
            let writer = tokio::spawn(async move {
                for chunk in chunked(&data, &chunks) {
                    tx.write_all(chunk).await.unwrap();
                    tx.flush().await.unwrap();
                }
                tx.shutdown().await.unwrap();
            });
            let mut reader = FrameReader::new(rx, s.max);
            let mut got = Vec::new();
            while let Some(frame) = reader.next_frame().await.unwrap() {
                got.push(frame);
            }
            writer.await.unwrap();
            got
        });
        prop_assert_eq!(got, want);
    }
}

// ---------------------------------------------------------------------------------------
// One answer per request-shaped frame

struct Echo;

impl Service for Echo {
    fn request(&self, method: String, params: Option<Value>) -> BoxFuture<HandlerResult> {
        Box::pin(std::future::ready(Ok(
            json!({ "method": method, "params": params }).into(),
        )))
    }
}

/// One inbound line; `tagged` frames get a distinct valid id so their answer can be found.
#[derive(Debug, Clone)]
enum Inbound {
    Tagged(Value),
    Untagged(Value),
    Raw(Vec<u8>),
}

fn inbound() -> impl Strategy<Value = Inbound> {
    prop_oneof![
        4 => request_shaped(Just(Value::Null)).prop_map(Inbound::Tagged),
        2 => request_shaped(any_id()).prop_map(Inbound::Untagged),
        1 => json_value().prop_map(Inbound::Untagged),
        1 => prop::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..24)
            .prop_map(Inbound::Raw),
        1 => prop_oneof![
            Just(json!({"jsonrpc":"2.0","result":1,"id":"zc-out-0"})),
            Just(json!({"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":7})),
            Just(json!({"jsonrpc":"2.0","error":{"code":1},"id":7})),
        ]
        .prop_map(Inbound::Untagged),
    ]
}

/// What the peer owes a line: `Some((id, Ok(result) | Err(code)))` or nothing.
fn owed(line: &[u8]) -> Option<(Value, Result<Value, i64>)> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    match expected(line) {
        Expected::Reply(code, id) => Some((id, Err(code))),
        Expected::Request => {
            let v: Value = serde_json::from_slice(line).unwrap();
            let result = json!({ "method": v["method"], "params": v.get("params") });
            Some((v["id"].clone(), Ok(result)))
        }
        Expected::Notification | Expected::Response | Expected::Drop => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_request_shaped_frame_is_answered_exactly_once(
        frames in prop::collection::vec(inbound(), 1..40),
    ) {
        let mut lines = Vec::new();
        for (i, f) in frames.into_iter().enumerate() {
            lines.push(match f {
                Inbound::Tagged(mut v) => {
                    let id = if i % 2 == 0 { json!(format!("t{i}")) } else { json!(100_000 + i) };
                    v["id"] = id;
                    serde_json::to_vec(&v).unwrap()
                }
                Inbound::Untagged(v) => serde_json::to_vec(&v).unwrap(),
                Inbound::Raw(b) => b,
            });
        }
        let mut by_id: HashMap<String, Result<Value, i64>> = HashMap::new();
        let mut untagged: Vec<Result<Value, i64>> = Vec::new();
        for line in &lines {
            if let Some((id, outcome)) = owed(line) {
                match &id {
                    Value::String(s) if s.starts_with('t') => { by_id.insert(s.clone(), outcome); }
                    Value::Number(n) if n.as_u64().is_some_and(|n| n >= 100_000) => {
                        by_id.insert(n.to_string(), outcome);
                    }
                    _ => untagged.push(outcome),
                }
            }
        }

        let answers = current_thread(false).block_on(async move {
            let (client, server) = tokio::io::duplex(256);
            let (peer, _handle) = Peer::new(
                StreamTransport::new(server, "prop", DEFAULT_MAX_FRAME_BYTES),
                PeerConfig::default(),
            );
            let served = tokio::spawn(peer.run(Arc::new(Echo)));
            let (read, write) = tokio::io::split(client);
            let writer = tokio::spawn(async move {
                let mut w = FrameWriter::new(write);
                w.write_frames(&lines).await.unwrap();
                w.shutdown().await.unwrap();
            });
            let mut reader = FrameReader::new(read, DEFAULT_MAX_FRAME_BYTES);
            let mut answers = Vec::new();
            while let Some(frame) = reader.next_frame().await.unwrap() {
                let Frame::Line(line) = frame else { panic!("oversized answer") };
                answers.push(classify(&line));
            }
            writer.await.unwrap();
            served.await.unwrap();
            answers
        });

        let mut got_by_id: HashMap<String, Result<Value, i64>> = HashMap::new();
        let mut got_untagged = Vec::new();
        for answer in answers {
            let Envelope::Response { id, outcome } = answer else {
                panic!("the peer sent a non-response: {answer:?}");
            };
            let outcome = outcome.map_err(|e| e.code);
            let key = match &id.to_value() {
                Value::String(s) if s.starts_with('t') => Some(s.clone()),
                Value::Number(n) if n.as_u64().is_some_and(|n| n >= 100_000) => Some(n.to_string()),
                _ => None,
            };
            match key {
                Some(key) => {
                    prop_assert!(got_by_id.insert(key.clone(), outcome).is_none(), "{} answered twice", key);
                }
                None => got_untagged.push(outcome),
            }
        }
        prop_assert_eq!(got_by_id, by_id);
        let sort = |v: &mut Vec<Result<Value, i64>>| v.sort_by_key(|o| format!("{o:?}"));
        sort(&mut got_untagged);
        sort(&mut untagged);
        prop_assert_eq!(got_untagged, untagged);
    }
}

// ---------------------------------------------------------------------------------------
// Requests crossing in both directions

#[derive(Debug, Clone)]
enum Plan {
    /// Answer at once with this value.
    Now(i64),
    /// Answer at once with this error code.
    Fail(i64),
    /// Never answer; the caller times out.
    Never,
    /// Answer only after the caller has timed out; the answer must be ignored.
    Late,
    /// Ask the other side (with this plan) first, then answer with what came back.
    Nested(Box<Plan>),
}

const MAX_DEPTH: u32 = 3;

/// Deeper calls time out sooner, so a nested call always resolves before its parent's.
fn timeout_at(depth: u32) -> Duration {
    Duration::from_secs(10 * 3u64.pow(MAX_DEPTH - depth))
}

fn plan() -> impl Strategy<Value = Plan> {
    let leaf = prop_oneof![
        3 => any::<i64>().prop_map(Plan::Now),
        1 => (-32099i64..=-32000).prop_map(Plan::Fail),
        1 => Just(Plan::Never),
        1 => Just(Plan::Late),
    ];
    leaf.prop_recursive(MAX_DEPTH, 8, 1, |inner| {
        inner.prop_map(|p| Plan::Nested(Box::new(p)))
    })
}

fn encode(plan: &Plan) -> Value {
    match plan {
        Plan::Now(v) => json!({ "now": v }),
        Plan::Fail(c) => json!({ "fail": c }),
        Plan::Never => json!({ "never": true }),
        Plan::Late => json!({ "late": true }),
        Plan::Nested(p) => json!({ "nested": encode(p) }),
    }
}

fn decode(v: &Value) -> Plan {
    if let Some(n) = v.get("now") {
        Plan::Now(n.as_i64().unwrap())
    } else if let Some(c) = v.get("fail") {
        Plan::Fail(c.as_i64().unwrap())
    } else if v.get("never").is_some() {
        Plan::Never
    } else if v.get("late").is_some() {
        Plan::Late
    } else {
        Plan::Nested(Box::new(decode(&v["nested"])))
    }
}

fn count(plan: &Plan, late: bool) -> usize {
    let here = usize::from(!late || matches!(plan, Plan::Late));
    match plan {
        Plan::Nested(p) => here + count(p, late),
        _ => here,
    }
}

/// How an outcome is reported inside a nested answer.
fn summary(outcome: &Result<Value, CallError>) -> Value {
    match outcome {
        Ok(v) => json!({ "ok": v }),
        Err(CallError::Rpc(e)) => json!({ "err": e.code }),
        Err(CallError::Timeout(_)) => json!("timeout"),
        Err(CallError::Closed) => json!("closed"),
    }
}

fn predicted(plan: &Plan, depth: u32) -> Result<Value, CallError> {
    match plan {
        Plan::Now(v) => Ok(json!(v)),
        Plan::Fail(c) => Err(CallError::Rpc(RpcError::new(*c, "planned"))),
        Plan::Never | Plan::Late => Err(CallError::Timeout(timeout_at(depth))),
        Plan::Nested(p) => Ok(json!({ "inner": summary(&predicted(p, depth + 1)) })),
    }
}

struct Planner {
    /// This side's own handle, for nested calls back to the other side.
    handle: Arc<std::sync::OnceLock<PeerHandle>>,
    handled: Arc<AtomicUsize>,
    late_done: mpsc::UnboundedSender<()>,
}

impl Service for Planner {
    fn request(&self, method: String, params: Option<Value>) -> BoxFuture<HandlerResult> {
        self.handled.fetch_add(1, Ordering::SeqCst);
        let params = params.unwrap_or_default();
        let depth = u32::try_from(params["depth"].as_u64().unwrap()).unwrap();
        assert_eq!(method, "plan");
        let handle = self.handle.get().unwrap().clone();
        let late_done = self.late_done.clone();
        match decode(&params["plan"]) {
            Plan::Now(v) => Box::pin(std::future::ready(Ok(json!(v).into()))),
            Plan::Fail(c) => Box::pin(std::future::ready(Err(RpcError::new(c, "planned")))),
            Plan::Never => Box::pin(std::future::pending()),
            Plan::Late => Box::pin(async move {
                tokio::time::sleep(timeout_at(depth) * 2).await;
                let _ = late_done.send(());
                Ok(json!("late").into())
            }),
            Plan::Nested(inner) => Box::pin(async move {
                let outcome = handle
                    .request(
                        "plan",
                        json!({ "plan": encode(&inner), "depth": depth + 1 }),
                        timeout_at(depth + 1),
                    )
                    .await;
                Ok(json!({ "inner": summary(&outcome) }).into())
            }),
        }
    }
}

struct Side {
    handle: PeerHandle,
    handled: Arc<AtomicUsize>,
    run: tokio::task::JoinHandle<()>,
}

fn side(
    stream: tokio::io::DuplexStream,
    label: &str,
    config: PeerConfig,
    late_done: mpsc::UnboundedSender<()>,
) -> Side {
    let (peer, handle) = Peer::new(
        StreamTransport::new(stream, label, DEFAULT_MAX_FRAME_BYTES),
        config,
    );
    let cell = Arc::new(std::sync::OnceLock::new());
    cell.set(handle.clone()).unwrap();
    let handled = Arc::new(AtomicUsize::new(0));
    let service = Planner {
        handle: cell,
        handled: handled.clone(),
        late_done,
    };
    Side {
        handle,
        handled,
        run: tokio::spawn(peer.run(Arc::new(service))),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn crossing_requests_resolve_exactly_once(
        calls in prop::collection::vec((any::<bool>(), plan()), 1..24),
        pipe in prop_oneof![Just(64usize), Just(4096)],
    ) {
        let expected_late: usize = calls.iter().map(|(_, p)| count(p, true)).sum();
        let expected_handled: usize = calls.iter().map(|(_, p)| count(p, false)).sum();
        let body = async move {
            let (a_io, b_io) = tokio::io::duplex(pipe);
            let (late_tx, mut late_rx) = mpsc::unbounded_channel();
            let mut a = side(a_io, "a", PeerConfig::default(), late_tx.clone());
            let mut b = side(b_io, "b", PeerConfig::default(), late_tx);

            let mut set = tokio::task::JoinSet::new();
            for (i, (a_to_b, plan)) in calls.iter().enumerate() {
                let caller = if *a_to_b { a.handle.clone() } else { b.handle.clone() };
                let params = json!({ "plan": encode(plan), "depth": 0 });
                set.spawn(async move { (i, caller.request("plan", params, timeout_at(0)).await) });
            }
            let mut outcomes: Vec<Option<Result<Value, CallError>>> = vec![None; calls.len()];
            while let Some(joined) = set.join_next().await {
                let (i, outcome) = joined.unwrap();
                assert!(outcomes[i].replace(outcome).is_none(), "call {i} resolved twice");
            }
            for (i, ((_, plan), outcome)) in calls.iter().zip(&outcomes).enumerate() {
                assert_eq!(outcome.as_ref(), Some(&predicted(plan, 0)), "call {i}: {plan:?}");
            }

            // Every late handler has answered (after its caller gave up); those answers
            // reach a side with no pending entry for them and must change nothing.
            for _ in 0..expected_late {
                late_rx.recv().await.unwrap();
            }
            for (n, (from, to)) in [(&a, &b), (&b, &a), (&a, &b)].into_iter().enumerate() {
                let n = i64::try_from(n).unwrap();
                let fresh = from
                    .handle
                    .request("plan", json!({ "plan": encode(&Plan::Now(n)), "depth": 0 }), timeout_at(0))
                    .await;
                assert_eq!(fresh, Ok(json!(n)), "a fresh request after the storm");
                assert!(!to.handle.is_closed());
            }
            let handled = a.handled.load(Ordering::SeqCst) + b.handled.load(Ordering::SeqCst);
            assert_eq!(handled, expected_handled + 3, "each request is delivered exactly once");

            a.handle.close();
            (&mut a.run).await.unwrap();
            (&mut b.run).await.unwrap();
            for side in [&a, &b] {
                let after = side.handle.request("plan", json!({}), timeout_at(0)).await;
                assert_eq!(after, Err(CallError::Closed));
            }
        };
        current_thread(true).block_on(async {
            tokio::time::timeout(Duration::from_secs(1_000_000), body)
                .await
                .expect("the exchange never settled");
        });
    }
}

// ---------------------------------------------------------------------------------------
// Regression: mutual backpressure used to wedge a connection for good
// ---------------------------------------------------------------------------------------

/// Two peers with the default config flood each other with requests. Each reader answers
/// inline and waits for room in its own outbound queue; each writer waits for the other
/// side's reader. Before `PeerConfig::max_outstanding`, the queues filled with each side's
/// own requests, every reader then waited on its own writer, which waited on the other
/// reader: every caller timed out, and the connection never carried another frame.
#[test]
fn a_request_storm_in_both_directions_does_not_wedge_the_connection() {
    const STORM: usize = 1500;
    let configs = [
        PeerConfig::default(),
        PeerConfig {
            outbound_queue: 8,
            max_in_flight: 4,
        },
        PeerConfig {
            outbound_queue: 1,
            ..PeerConfig::default()
        },
    ];
    for config in configs {
        storm(STORM, config);
    }
}

fn storm(n: usize, config: PeerConfig) {
    current_thread(true).block_on(async {
        let (a_io, b_io) = tokio::io::duplex(4096);
        let (late_tx, _late_rx) = mpsc::unbounded_channel();
        let a = side(a_io, "a", config.clone(), late_tx.clone());
        let b = side(b_io, "b", config.clone(), late_tx);
        let params = json!({ "plan": encode(&Plan::Now(1)), "depth": 0, "pad": "x".repeat(100) });
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..n {
            for h in [a.handle.clone(), b.handle.clone()] {
                let params = params.clone();
                set.spawn(async move { h.request("plan", params, timeout_at(0)).await });
            }
        }
        while let Some(joined) = set.join_next().await {
            // Each caller gets exactly one outcome; under the storm that may be a timeout.
            let outcome = joined.unwrap();
            assert!(
                matches!(outcome, Ok(_) | Err(CallError::Timeout(_))),
                "{outcome:?}"
            );
        }
        // Whatever the storm did, the connection must carry new requests afterwards.
        for (from, value) in [(&a, 7), (&b, 8)] {
            let fresh = from
                .handle
                .request(
                    "plan",
                    json!({ "plan": encode(&Plan::Now(value)), "depth": 0 }),
                    timeout_at(0),
                )
                .await;
            assert_eq!(
                fresh,
                Ok(json!(value)),
                "the connection is wedged ({config:?})"
            );
        }
    });
}

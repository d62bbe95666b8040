#![allow(clippy::unwrap_used, clippy::expect_used)]
// What only the Unix-only tests use.
#![cfg_attr(windows, allow(unused_imports, dead_code))]
//! The wire protocol over a real socket: framing, the envelope rules, the handshake gate,
//! error codes and id echoing, frame caps, and one connection never stalling another.
//!
//! "No answer" is always proven the same way: after the frame under test, a `status`
//! request with a fresh id is sent, and the very next frame received must be its answer.
//! The daemon reads one connection's frames in order and answers ready handlers inline,
//! so anything owed to the first frame would have arrived first.

mod common;

use common::*;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::io::Write;
#[cfg(unix)]
use std::net::Shutdown;
use std::sync::mpsc;
use std::time::Duration;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const NOT_INITIALIZED: i64 = -32010;
const VERSION_MISMATCH: i64 = -32011;

const MIB: usize = 1024 * 1024;
/// The smallest frame cap the daemon accepts (`daemon.max_frame_bytes`), with which the
/// handshake and its answer must still pass.
const MIN_CAP: usize = 4096;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// Asserts `answer` is a JSON-RPC error with exactly this code and exactly this id.
fn assert_error(answer: &Value, code: i64, id: &Value) {
    assert_eq!(answer["jsonrpc"], json!("2.0"), "{answer}");
    assert_eq!(error_code(answer), code, "wrong code: {answer}");
    assert_eq!(answer.get("id"), Some(id), "wrong id: {answer}");
    assert!(
        answer.get("result").is_none(),
        "both result and error: {answer}"
    );
    assert!(answer["error"]["message"].is_string(), "{answer}");
}

/// On an initialized connection: a fresh `status` request is answered next, with a result.
fn probe(conn: &mut Conn) {
    let result = conn.call("status", json!({}));
    assert_eq!(result["protocolVersion"], json!(1), "{result}");
}

/// On a connection that has not initialized: a fresh `status` is answered next, `-32010`.
fn probe_uninitialized(conn: &mut Conn) {
    // `request` asserts the answer carries the fresh id.
    let answer = conn.request("status", json!({}));
    let id = answer["id"].clone();
    assert_error(&answer, NOT_INITIALIZED, &id);
}

/// Sends `frame` and asserts it gets exactly one answer: an error with `code` and `id`.
fn answered_with(conn: &mut Conn, frame: &[u8], code: i64, id: &Value) -> Value {
    conn.send_line(frame);
    let answer = conn.recv();
    assert_error(&answer, code, id);
    probe(conn);
    answer
}

/// Sends `frame` and asserts nothing at all is sent back for it.
fn unanswered(conn: &mut Conn, frame: &[u8]) {
    conn.send_line(frame);
    probe(conn);
}

/// A `status` request of exactly `len` bytes (padding goes in an ignored param).
fn status_frame_of_len(len: usize, id: u64) -> Vec<u8> {
    let head = br#"{"jsonrpc":"2.0","method":"status","params":{"pad":""#;
    let tail = format!(r#""}},"id":{id}}}"#);
    let pad = len - head.len() - tail.len();
    let mut frame = head.to_vec();
    frame.resize(head.len() + pad, b'x');
    frame.extend_from_slice(tail.as_bytes());
    assert_eq!(frame.len(), len);
    serde_json::from_slice::<Value>(&frame).unwrap();
    frame
}

/// Starts a daemon whose config sets `daemon.max_frame_bytes`.
fn start_with_frame_cap(dir: &TestDir, cap: usize) -> Daemon {
    dir.write_config(&format!("[daemon]\nmax_frame_bytes = {cap}\n"));
    dir.start(&[])
}

fn assert_oversized(answer: &Value, limit: usize) {
    assert_error(answer, INVALID_REQUEST, &Value::Null);
    assert_eq!(
        answer["error"]["data"],
        json!({ "limit": limit }),
        "{answer}"
    );
}

// ---------------------------------------------------------------------------------------
// 1. The envelope table, row by row
// ---------------------------------------------------------------------------------------

#[test]
fn not_json_is_a_parse_error_with_null_id() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.initialized();
    for frame in [
        "{nope",
        "not json at all",
        r#"{"jsonrpc":"2.0","method":"status","id":1"#,
        r#"{"jsonrpc":"2.0","method":"status","id":1}}"#,
        r#"{"jsonrpc":"2.0","method":"status","id":1} trailing"#,
        "{\"jsonrpc\":\"2.0\",\"method\":\"st\u{1}atus\",\"id\":1}",
        r#"{"jsonrpc":"2.0","method":"\ud800","id":1}"#,
    ] {
        answered_with(&mut conn, frame.as_bytes(), PARSE_ERROR, &Value::Null);
    }
}

#[test]
fn json_that_is_not_an_object_is_an_invalid_request_with_null_id() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.initialized();
    for frame in [
        "1",
        "-2.5",
        r#""status""#,
        "null",
        "true",
        "[]",
        "[1,2]",
        // A batch: answered once, as a whole, never element by element.
        r#"[{"jsonrpc":"2.0","method":"status","id":1},{"jsonrpc":"2.0","method":"status","id":2}]"#,
    ] {
        answered_with(&mut conn, frame.as_bytes(), INVALID_REQUEST, &Value::Null);
    }
}

#[test]
fn valid_requests_are_dispatched_and_valid_notifications_get_no_answer() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.initialized();

    // Requests: with params object, params array, no params; string, number and null ids.
    for (frame, id) in [
        (
            r#"{"jsonrpc":"2.0","method":"status","params":{},"id":"s-1"}"#,
            json!("s-1"),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"status","params":[],"id":7}"#,
            json!(7),
        ),
        (r#"{"jsonrpc":"2.0","method":"status","id":8}"#, json!(8)),
        (r#"{"id":9,"method":"status","jsonrpc":"2.0"}"#, json!(9)),
        (
            r#"{"jsonrpc":"2.0","method":"status","params":{},"id":null}"#,
            Value::Null,
        ),
    ] {
        conn.send_line(frame.as_bytes());
        let answer = conn.recv();
        assert_eq!(answer.get("id"), Some(&id), "{answer}");
        assert!(answer.get("error").is_none(), "{answer}");
        assert_eq!(answer["result"]["protocolVersion"], json!(1), "{answer}");
    }

    // Notifications are never answered, not even for a method that does not exist.
    for frame in [
        r#"{"jsonrpc":"2.0","method":"status","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"status"}"#,
        r#"{"jsonrpc":"2.0","method":"no/such/method","params":[1]}"#,
        r#"{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":2}}"#,
    ] {
        unanswered(&mut conn, frame.as_bytes());
    }
}

#[test]
fn invalid_request_shaped_frames_are_answered_with_their_id_when_it_is_valid() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.initialized();
    for (frame, id) in [
        (r#"{"jsonrpc":"1.0","method":"status","id":7}"#, json!(7)),
        (r#"{"method":"status","id":7}"#, json!(7)),
        (r#"{"jsonrpc":2.0,"method":"status","id":"v"}"#, json!("v")),
        (r#"{"jsonrpc":null,"method":"status","id":"w"}"#, json!("w")),
        (r#"{"jsonrpc":"2.0","method":5,"id":"x"}"#, json!("x")),
        (r#"{"jsonrpc":"2.0","method":null,"id":1}"#, json!(1)),
        (r#"{"jsonrpc":"2.0","method":["status"],"id":2}"#, json!(2)),
        (
            r#"{"jsonrpc":"2.0","method":"status","params":3,"id":1.5}"#,
            json!(1.5),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"status","params":"s","id":-4}"#,
            json!(-4),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"status","params":true,"id":"t"}"#,
            json!("t"),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"status","params":null,"id":"n"}"#,
            json!("n"),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"status","params":"s","id":null}"#,
            Value::Null,
        ),
        // The id itself is invalid: it is not echoed.
        (
            r#"{"jsonrpc":"2.0","method":"status","id":{"a":1}}"#,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"status","id":[1]}"#,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"status","id":true}"#,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"status","id":false}"#,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"1.0","method":"status","id":true}"#,
            Value::Null,
        ),
        (r#"{"jsonrpc":"2.0","method":5,"id":{}}"#, Value::Null),
    ] {
        answered_with(&mut conn, frame.as_bytes(), INVALID_REQUEST, &id);
    }
}

#[test]
fn invalid_notifications_are_dropped_without_an_answer() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.initialized();
    for frame in [
        r#"{"jsonrpc":"1.0","method":"status"}"#,
        r#"{"method":"status"}"#,
        r#"{"jsonrpc":"2.0","method":1}"#,
        r#"{"jsonrpc":"2.0","method":null}"#,
        r#"{"jsonrpc":"2.0","method":"status","params":1}"#,
        r#"{"jsonrpc":"2.0","method":"status","params":"s"}"#,
        r#"{"jsonrpc":"2.0","method":"status","params":null}"#,
    ] {
        unanswered(&mut conn, frame.as_bytes());
    }
}

#[test]
fn invalid_response_shaped_frames_are_dropped_without_an_answer() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.initialized();
    for frame in [
        // No id.
        r#"{"jsonrpc":"2.0","result":1}"#,
        r#"{"jsonrpc":"2.0","error":{"code":1,"message":"m"}}"#,
        // Both members.
        r#"{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"m"},"id":1}"#,
        r#"{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"m"},"id":"zc-out-0"}"#,
        // `error` not {code:int, message:string, data?}.
        r#"{"jsonrpc":"2.0","error":{"message":"m"},"id":1}"#,
        r#"{"jsonrpc":"2.0","error":{"code":1.5,"message":"m"},"id":1}"#,
        r#"{"jsonrpc":"2.0","error":{"code":"1","message":"m"},"id":1}"#,
        r#"{"jsonrpc":"2.0","error":{"code":1},"id":1}"#,
        r#"{"jsonrpc":"2.0","error":{"code":1,"message":2},"id":1}"#,
        r#"{"jsonrpc":"2.0","error":{"code":1,"message":null},"id":1}"#,
        r#"{"jsonrpc":"2.0","error":"boom","id":1}"#,
        r#"{"jsonrpc":"2.0","error":null,"id":1}"#,
        // Bad `jsonrpc`.
        r#"{"result":1,"id":1}"#,
        r#"{"jsonrpc":"1.0","result":1,"id":1}"#,
        r#"{"jsonrpc":"2.1","error":{"code":1,"message":"m"},"id":1}"#,
        // Bad id type.
        r#"{"jsonrpc":"2.0","result":1,"id":{"a":1}}"#,
        r#"{"jsonrpc":"2.0","result":1,"id":[1]}"#,
        r#"{"jsonrpc":"2.0","result":1,"id":true}"#,
    ] {
        unanswered(&mut conn, frame.as_bytes());
    }
}

#[test]
fn valid_responses_to_ids_not_pending_are_ignored() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.initialized();
    for frame in [
        r#"{"jsonrpc":"2.0","result":1,"id":"zc-out-0"}"#,
        r#"{"jsonrpc":"2.0","result":null,"id":"zc-out-0"}"#,
        r#"{"jsonrpc":"2.0","result":{"action":"accept"},"id":"zc-out-99"}"#,
        r#"{"jsonrpc":"2.0","error":{"code":-1,"message":"m","data":[1]},"id":"zc-out-1"}"#,
        r#"{"jsonrpc":"2.0","result":1,"id":5}"#,
        r#"{"jsonrpc":"2.0","result":1,"id":null}"#,
        // The id of a request this client itself sent earlier: still not the daemon's.
        r#"{"jsonrpc":"2.0","result":1,"id":1001}"#,
    ] {
        unanswered(&mut conn, frame.as_bytes());
    }
}

#[test]
fn frames_of_neither_or_both_shapes_are_invalid_requests_with_null_id() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.initialized();
    for frame in [
        r#"{"jsonrpc":"2.0","id":3}"#,
        r#"{}"#,
        r#"{"jsonrpc":"2.0"}"#,
        r#"{"jsonrpc":"2.0","params":{},"id":"p"}"#,
        r#"{"jsonrpc":"2.0","method":"status","result":1,"id":3}"#,
        r#"{"jsonrpc":"2.0","method":"status","error":{"code":1,"message":"m"},"id":3}"#,
        r#"{"jsonrpc":"2.0","method":"status","result":null}"#,
    ] {
        answered_with(&mut conn, frame.as_bytes(), INVALID_REQUEST, &Value::Null);
    }
}

#[test]
fn envelope_errors_are_answered_before_the_handshake_gate() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.connect();
    conn.send_line(b"{nope");
    assert_error(&conn.recv(), PARSE_ERROR, &Value::Null);
    conn.send_line(b"[1]");
    assert_error(&conn.recv(), INVALID_REQUEST, &Value::Null);
    conn.send_line(br#"{"jsonrpc":"1.0","method":"status","id":"e"}"#);
    assert_error(&conn.recv(), INVALID_REQUEST, &json!("e"));
    conn.send_line(br#"{"jsonrpc":"2.0","result":1,"id":"zc-out-0"}"#);
    probe_uninitialized(&mut conn);
    conn.initialize();
    probe(&mut conn);
}

// ---------------------------------------------------------------------------------------
// 2. Unknown methods
// ---------------------------------------------------------------------------------------

#[test]
fn unknown_method_after_initialize_is_method_not_found_with_its_id() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.initialized();
    for (frame, id, method) in [
        (
            r#"{"jsonrpc":"2.0","method":"no/such","id":41}"#,
            json!(41),
            "no/such",
        ),
        (
            r#"{"jsonrpc":"2.0","method":"Status","params":{},"id":"u"}"#,
            json!("u"),
            "Status",
        ),
        (
            r#"{"jsonrpc":"2.0","method":"","id":null}"#,
            Value::Null,
            "",
        ),
    ] {
        let answer = answered_with(&mut conn, frame.as_bytes(), METHOD_NOT_FOUND, &id);
        assert_eq!(answer["error"]["data"]["method"], json!(method), "{answer}");
    }
    // Before `initialize`, the gate answers first.
    let mut fresh = daemon.connect();
    fresh.send_line(br#"{"jsonrpc":"2.0","method":"no/such","id":42}"#);
    assert_error(&fresh.recv(), NOT_INITIALIZED, &json!(42));
}

// ---------------------------------------------------------------------------------------
// 3. Handshake
// ---------------------------------------------------------------------------------------

#[test]
fn initialize_rejects_missing_or_non_integer_protocol_version_with_invalid_params() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.connect();
    for (frame, id) in [
        (
            r#"{"jsonrpc":"2.0","method":"initialize","id":1}"#,
            json!(1),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"initialize","params":{},"id":2}"#,
            json!(2),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"initialize","params":{"clientInfo":{"name":"t","version":"0"}},"id":"3"}"#,
            json!("3"),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"1"},"id":4}"#,
            json!(4),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1.5},"id":5}"#,
            json!(5),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":true},"id":6}"#,
            json!(6),
        ),
        (
            r#"{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":[1]},"id":7}"#,
            json!(7),
        ),
    ] {
        conn.send_line(frame.as_bytes());
        assert_error(&conn.recv(), INVALID_PARAMS, &id);
        // A failed handshake leaves the connection uninitialized.
        probe_uninitialized(&mut conn);
    }
    conn.initialize();
    probe(&mut conn);
}

#[test]
fn initialize_with_another_protocol_version_is_a_structured_mismatch() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.connect();
    for version in [2_i64, 0, -1] {
        conn.send(&json!({
            "jsonrpc": "2.0", "method": "initialize",
            "params": {"protocolVersion": version}, "id": format!("v{version}"),
        }));
        let answer = conn.recv();
        assert_error(&answer, VERSION_MISMATCH, &json!(format!("v{version}")));
        assert_eq!(
            answer["error"]["data"],
            json!({"supported": [1], "requested": version}),
            "{answer}"
        );
        probe_uninitialized(&mut conn);
    }
    conn.initialize();
    probe(&mut conn);
}

#[test]
fn before_initialize_requests_get_not_initialized_and_notifications_are_dropped() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.connect();
    conn.send_line(br#"{"jsonrpc":"2.0","method":"status","params":{},"id":"early"}"#);
    assert_error(&conn.recv(), NOT_INITIALIZED, &json!("early"));
    conn.send_line(br#"{"jsonrpc":"2.0","method":"shutdown","id":0}"#);
    assert_error(&conn.recv(), NOT_INITIALIZED, &json!(0));
    // Notifications before initialize: dropped, and the next answer is the next request's.
    conn.send_line(br#"{"jsonrpc":"2.0","method":"status","params":{}}"#);
    conn.send_line(br#"{"jsonrpc":"2.0","method":"shutdown"}"#);
    probe_uninitialized(&mut conn);
    // The daemon did not act on that `shutdown` notification.
    conn.initialize();
    probe(&mut conn);
}

#[test]
fn initialize_result_has_version_pid_and_methods_and_repeating_it_answers_the_same() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.connect();
    let first = conn.initialize();
    assert_eq!(first["protocolVersion"], json!(1), "{first}");
    assert!(
        first["serverVersion"]
            .as_str()
            .is_some_and(|v| !v.is_empty()),
        "{first}"
    );
    assert_eq!(first["pid"], json!(daemon.pid()), "{first}");
    let methods = first["capabilities"]["methods"].as_array().unwrap();
    for name in ["initialize", "status", "shutdown"] {
        assert!(methods.contains(&json!(name)), "{name} missing: {first}");
    }
    assert!(first["capabilities"]["events"].is_array(), "{first}");

    let second = conn.initialize();
    assert_eq!(second, first);
    let third = conn.call(
        "initialize",
        json!({"protocolVersion": 1, "clientInfo": {"name": "wire", "version": "1"}}),
    );
    assert_eq!(third, first);
    // Counted as one client, however many times it initialized.
    assert_eq!(conn.call("status", json!({}))["clients"], json!(1));
}

// ---------------------------------------------------------------------------------------
// 4. Gating is per connection
// ---------------------------------------------------------------------------------------

#[test]
fn the_handshake_gate_is_per_connection() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut a = daemon.initialized();
    let mut b = daemon.connect();
    probe_uninitialized(&mut b);
    probe(&mut a);
    probe_uninitialized(&mut b);
    assert_eq!(a.call("status", json!({}))["clients"], json!(1));
    b.initialize();
    probe(&mut b);
    assert_eq!(a.call("status", json!({}))["clients"], json!(2));
    // A fresh connection starts uninitialized again.
    let mut c = daemon.connect();
    probe_uninitialized(&mut c);
}

// ---------------------------------------------------------------------------------------
// 5.–7. Framing
// ---------------------------------------------------------------------------------------

#[test]
fn a_thousand_pipelined_requests_are_each_answered_exactly_once() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.initialized();
    const N: u64 = 1000;
    let mut burst = Vec::new();
    for i in 0..N {
        burst.extend_from_slice(
            format!(r#"{{"jsonrpc":"2.0","method":"status","params":{{}},"id":"p-{i}"}}"#)
                .as_bytes(),
        );
        burst.push(b'\n');
    }
    conn.send_raw(&burst);
    let mut seen = HashSet::new();
    for _ in 0..N {
        let answer = conn.recv();
        assert!(answer.get("error").is_none(), "{answer}");
        assert_eq!(answer["result"]["protocolVersion"], json!(1), "{answer}");
        let id = answer["id"].as_str().unwrap().to_owned();
        assert!(seen.insert(id.clone()), "{id} answered twice");
    }
    let expected: HashSet<String> = (0..N).map(|i| format!("p-{i}")).collect();
    assert_eq!(seen, expected);
    probe(&mut conn);
}

#[test]
fn a_frame_written_one_byte_at_a_time_is_answered() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.connect();
    for (frame, id) in [
        (
            &br#"{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1},"id":"b1"}"#
                [..],
            json!("b1"),
        ),
        (
            &br#"{"jsonrpc":"2.0","method":"status","params":{},"id":"b2"}"#[..],
            json!("b2"),
        ),
    ] {
        for byte in frame.iter().chain(b"\n") {
            conn.stream.write_all(&[*byte]).unwrap();
            conn.stream.flush().unwrap();
        }
        let answer = conn.recv();
        assert_eq!(answer.get("id"), Some(&id), "{answer}");
        assert_eq!(answer["result"]["protocolVersion"], json!(1), "{answer}");
    }
}

#[test]
fn crlf_lines_are_answered_and_blank_lines_are_skipped() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.connect();
    conn.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":1},\"id\":\"c1\"}\r\n");
    let answer = conn.recv();
    assert_eq!(answer["id"], json!("c1"), "{answer}");
    assert_eq!(answer["result"]["protocolVersion"], json!(1), "{answer}");
    conn.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"status\",\"id\":\"c2\"}\r\n");
    let answer = conn.recv();
    assert_eq!(answer["id"], json!("c2"), "{answer}");
    assert!(answer.get("result").is_some(), "{answer}");

    // Blank and whitespace-only lines, alone and in one burst: no answer for any of them.
    for blank in [&b"\n"[..], b"\r\n", b"   \n", b"\t \r\n", b" \t \x0c \r\n"] {
        conn.send_raw(blank);
        probe(&mut conn);
    }
    conn.send_raw(b"\n\n\r\n  \n\t\n");
    probe(&mut conn);
    // Whitespace around a JSON value is JSON whitespace, not a blank line.
    conn.send_raw(b"  {\"jsonrpc\":\"2.0\",\"method\":\"status\",\"id\":\"c3\"}  \r\n");
    assert_eq!(conn.recv()["id"], json!("c3"));
}

#[test]
#[cfg(unix)]
fn a_final_frame_without_newline_is_answered_at_end_of_stream() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.initialized();
    conn.send_raw(br#"{"jsonrpc":"2.0","method":"status","id":"last"}"#);
    conn.stream.shutdown(Shutdown::Write).unwrap();
    let answer = conn.recv();
    assert_eq!(answer["id"], json!("last"), "{answer}");
    assert!(answer.get("result").is_some(), "{answer}");
    assert!(conn.at_eof());
}

// ---------------------------------------------------------------------------------------
// 8.–9. Frame caps
// ---------------------------------------------------------------------------------------

/// An 80 MiB line against the default 16 MiB cap.
///
/// The memory bound: the decoder may hold up to the cap (16 MiB) of an unfinished line
/// before it knows the line is too long, and its buffer may transiently have grown past
/// that by doubling, so some growth is expected. What must not happen is buffering the
/// line: that would be at least 80 MiB. 64 MiB of growth in peak RSS (VmHWM) over the peak
/// before the line separates the two with room for allocator noise.
#[cfg(target_os = "linux")]
#[test]
fn an_80_mib_line_gets_one_error_and_is_discarded_without_buffering() {
    const LINE: usize = 80 * MIB;
    const DEFAULT_CAP: usize = 16 * MIB;
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut big = daemon.initialized();
    probe(&mut big);
    let peak_before = daemon.memory_kib().0;

    // A well-formed request, so that if it were ever parsed it would be answered as "big".
    let head = br#"{"jsonrpc":"2.0","method":"status","params":{"pad":""#;
    let tail = br#""},"id":"big"}"#;
    let pad = LINE - head.len() - tail.len();
    let mut writer = big.stream.try_clone().unwrap();
    writer.set_write_timeout(Some(HANG_GUARD)).unwrap();
    let (resume_tx, resume_rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel::<std::io::Result<()>>();
    std::thread::spawn(move || {
        let result = (|| {
            writer.write_all(head)?;
            let chunk = vec![b'a'; MIB];
            let mut left = pad;
            let mut written = 0;
            while left > 0 {
                // Halfway, wait until the test has used other connections, so that
                // "during the line" is an ordered fact and not a race.
                if written == 40 && resume_rx.recv_timeout(HANG_GUARD).is_err() {
                    return Err(std::io::ErrorKind::TimedOut.into());
                }
                let n = left.min(MIB);
                writer.write_all(&chunk[..n])?;
                left -= n;
                written += 1;
            }
            writer.write_all(tail)?;
            writer.write_all(b"\n")
        })();
        let _ = done_tx.send(result);
    });

    // The writer goes on alone to 40 MiB, well past the 16 MiB cap, so the error must
    // arrive while the line is still unfinished (the writer then waits for the test).
    let answer = big.recv();
    assert_oversized(&answer, DEFAULT_CAP);
    assert_eq!(answer["error"]["data"]["limit"], json!(16_777_216));

    // Mid-line on `big`, another connection is served.
    let mut during = daemon.initialized();
    probe(&mut during);

    resume_tx.send(()).unwrap();
    done_rx
        .recv_timeout(HANG_GUARD)
        .expect("the daemon stopped reading the long line")
        .unwrap();

    // Exactly one error for the line, nothing for its tail, and the connection still works.
    probe(&mut big);
    probe(&mut during);
    let mut after = daemon.initialized();
    probe(&mut after);

    let peak_after = daemon.memory_kib().0;
    let growth_kib = peak_after.saturating_sub(peak_before);
    assert!(
        growth_kib < 64 * 1024,
        "peak RSS grew by {growth_kib} KiB (from {peak_before} to {peak_after} KiB) for one \
         {LINE}-byte line; the oversized line must be discarded, not buffered"
    );
}

#[test]
fn a_configured_frame_cap_is_enforced_and_frames_within_it_work() {
    let dir = TestDir::new();
    let daemon = start_with_frame_cap(&dir, MIN_CAP);
    let mut conn = daemon.initialized();

    // Twice the cap: one error naming the limit, with id null (never the frame's own id).
    let long = status_frame_of_len(2 * MIN_CAP, 77);
    conn.send_line(&long);
    assert_oversized(&conn.recv(), MIN_CAP);
    probe(&mut conn);

    // A quarter of the cap: a normal frame.
    conn.send_line(status_frame_of_len(MIN_CAP / 4, 78));
    let answer = conn.recv();
    assert_eq!(answer["id"], json!(78), "{answer}");
    assert!(answer.get("result").is_some(), "{answer}");

    // The boundary: exactly the cap is accepted, one byte more is not.
    conn.send_line(status_frame_of_len(MIN_CAP, 79));
    let answer = conn.recv();
    assert_eq!(answer["id"], json!(79), "{answer}");
    assert!(answer.get("result").is_some(), "{answer}");
    conn.send_line(status_frame_of_len(MIN_CAP + 1, 80));
    assert_oversized(&conn.recv(), MIN_CAP);
    probe(&mut conn);

    // Several oversized lines back to back: one error each, in order, then service.
    let mut burst = Vec::new();
    for id in 0..3 {
        burst.extend_from_slice(&status_frame_of_len(MIN_CAP + MIN_CAP / 2, id));
        burst.push(b'\n');
    }
    burst.extend_from_slice(&status_frame_of_len(500, 99));
    burst.push(b'\n');
    conn.send_raw(&burst);
    for _ in 0..3 {
        assert_oversized(&conn.recv(), MIN_CAP);
    }
    assert_eq!(conn.recv()["id"], json!(99));
    probe(&mut conn);
}

/// Bytes this side has written that the daemon has not yet read (Linux `SIOCOUTQ`).
#[cfg(target_os = "linux")]
fn unread_by_peer(stream: &std::os::unix::net::UnixStream) -> std::ffi::c_int {
    const SIOCOUTQ: rustix::ioctl::Opcode = 0x5411;
    // SAFETY: SIOCOUTQ on a socket writes exactly one `int` through the pointer.
    unsafe {
        rustix::ioctl::ioctl(
            stream,
            rustix::ioctl::Getter::<SIOCOUTQ, std::ffi::c_int>::new(),
        )
    }
    .unwrap()
}

/// A frame whose content is exactly the cap, ended by CRLF, is within the cap whatever
/// way the bytes are split on the way in.
#[cfg(target_os = "linux")]
#[test]
fn a_cap_sized_crlf_frame_is_accepted_however_it_is_split() {
    let dir = TestDir::new();
    let daemon = start_with_frame_cap(&dir, MIN_CAP);
    let mut conn = daemon.initialized();

    // In one write: accepted (the `\r` is stripped before the length check).
    let mut whole = status_frame_of_len(MIN_CAP, 1);
    whole.extend_from_slice(b"\r\n");
    conn.send_raw(&whole);
    let answer = conn.recv();
    assert_eq!(answer["id"], json!(1), "{answer}");
    assert!(answer.get("result").is_some(), "{answer}");

    // The same bytes, with the daemon made to read the `\r` before the `\n` exists.
    let mut head = status_frame_of_len(MIN_CAP, 2);
    head.push(b'\r');
    conn.send_raw(&head);
    let deadline = std::time::Instant::now() + HANG_GUARD;
    while unread_by_peer(&conn.stream) > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the daemon never read the frame"
        );
        std::thread::yield_now();
    }
    conn.send_raw(b"\n");
    let answer = conn.recv();
    assert_eq!(answer["id"], json!(2), "{answer}");
    assert!(answer.get("result").is_some(), "{answer}");
}

// ---------------------------------------------------------------------------------------
// 10.–11. Bytes that are not JSON
// ---------------------------------------------------------------------------------------

#[test]
fn invalid_utf8_is_a_parse_error_and_the_connection_stays_usable() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.initialized();
    for frame in [
        &b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\xfe\",\"id\":1}"[..],
        b"{\"jsonrpc\":\"2.0\",\"method\":\"status\",\"id\":\"\xc3\x28\"}",
        // An overlong encoding of '/' and a UTF-16 surrogate encoded as UTF-8.
        b"{\"jsonrpc\":\"2.0\",\"method\":\"\xc0\xaf\",\"id\":2}",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"\xed\xa0\x80\",\"id\":3}",
        b"\xff\xfe",
        b"\xef\xbb\xbf\xff",
    ] {
        answered_with(&mut conn, frame, PARSE_ERROR, &Value::Null);
    }
}

#[test]
fn nesting_100000_deep_is_a_parse_error_and_the_connection_stays_usable() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.initialized();
    let arrays = "[".repeat(100_000) + &"]".repeat(100_000);
    answered_with(&mut conn, arrays.as_bytes(), PARSE_ERROR, &Value::Null);
    let objects = r#"{"a":"#.repeat(100_000);
    answered_with(&mut conn, objects.as_bytes(), PARSE_ERROR, &Value::Null);
    // Deep nesting inside an otherwise valid request, too.
    let inside = format!(
        r#"{{"jsonrpc":"2.0","method":"status","params":[{}1{}],"id":"deep"}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    answered_with(&mut conn, inside.as_bytes(), PARSE_ERROR, &Value::Null);
}

// ---------------------------------------------------------------------------------------
// 12. Isolation
// ---------------------------------------------------------------------------------------

#[test]
#[cfg(unix)]
fn a_client_that_never_reads_does_not_stall_another() {
    const FLOOD: usize = 200_000;
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let a = daemon.initialized();
    let mut b = daemon.initialized();

    let mut flood = Vec::new();
    for i in 0..FLOOD {
        flood.extend_from_slice(
            format!(r#"{{"jsonrpc":"2.0","method":"status","params":{{}},"id":{i}}}"#).as_bytes(),
        );
        flood.push(b'\n');
    }
    let total = flood.len();
    let mut writer = a.stream.try_clone().unwrap();
    // Not a timing assertion: a write that makes no progress for this long is how the
    // writer notices that the daemon has stopped taking its frames (backpressure), which
    // is the moment B's calls are meant to run in. Firing early only means B runs while
    // A is still being served, which the test must tolerate anyway.
    writer
        .set_write_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let (stalled_tx, stalled_rx) = mpsc::channel::<()>();
    let flooder = std::thread::spawn(move || {
        let mut written = 0;
        let mut told = false;
        while written < flood.len() {
            match writer.write(&flood[written..]) {
                Ok(0) => break,
                Ok(n) => written += n,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    if !told {
                        let _ = stalled_tx.send(());
                        told = true;
                    }
                }
                Err(_) => break,
            }
        }
        // If every byte went in, the daemon buffered the lot; say so rather than hang.
        let _ = stalled_tx.send(());
        written
    });

    stalled_rx
        .recv_timeout(HANG_GUARD)
        .expect("the flooding writer neither stalled nor finished");
    for _ in 0..100 {
        probe(&mut b);
    }
    assert!(
        !flooder.is_finished(),
        "all {total} bytes of A's requests were taken while A read none of its answers: \
         the daemon is buffering for a client that does not read"
    );

    // Hang up A: its blocked write fails, and the daemon drops the connection.
    let log_mark = daemon.log_len();
    a.stream.shutdown(Shutdown::Both).unwrap();
    let written = flooder.join().unwrap();
    assert!(written < total, "{written} of {total} bytes");
    daemon.wait_for_log_after(log_mark, "connection closed");
    drop(a);

    probe(&mut b);
    let mut c = daemon.initialized();
    probe(&mut c);
    assert_eq!(c.call("status", json!({}))["clients"], json!(2));
}

// ---------------------------------------------------------------------------------------
// 13. Output framing and id echo
// ---------------------------------------------------------------------------------------

#[test]
fn answers_are_single_lines_and_echo_ids_verbatim() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut conn = daemon.initialized();
    // Each id as sent; the answer must carry the same text, not just an equal value.
    for raw in [
        r#""abc""#,
        r#""""#,
        r#""zc-out-0""#,
        r#""é ☃ \"quoted\" \\ \n tab\t""#,
        "0",
        "-1",
        "-9007199254740993",
        "9007199254740993",
        "18446744073709551615",
        "1.5",
        "-0.25",
        "null",
    ] {
        conn.send_line(format!(
            r#"{{"jsonrpc":"2.0","method":"status","params":{{}},"id":{raw}}}"#
        ));
        let line = conn.recv_line().expect("connection closed");
        assert!(!line.contains('\n') && !line.contains('\r'), "{line:?}");
        let answer: Value = serde_json::from_str(&line).unwrap();
        let sent: Value = serde_json::from_str(raw).unwrap();
        assert_eq!(answer.get("id"), Some(&sent), "{line}");
        assert!(
            line.ends_with(&format!(r#""id":{raw}}}"#)),
            "id not verbatim: {line}"
        );
        assert!(answer.get("result").is_some(), "{line}");
    }
    // Errors too: a numeric id past 2^53 survives an error answer unrounded.
    conn.send_line(r#"{"jsonrpc":"1.0","method":"status","id":9007199254740993}"#);
    let line = conn.recv_line().unwrap();
    assert!(line.ends_with(r#""id":9007199254740993}"#), "{line}");
    assert_eq!(
        error_code(&serde_json::from_str(&line).unwrap()),
        INVALID_REQUEST
    );

    // Text from the client that contains newlines still comes back on one line.
    conn.send_line(r#"{"jsonrpc":"2.0","method":"line1\nline2\r\n","id":"nl"}"#);
    let line = conn.recv_line().unwrap();
    assert!(!line.contains('\n') && !line.contains('\r'), "{line:?}");
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_error(&answer, METHOD_NOT_FOUND, &json!("nl"));
    assert_eq!(answer["error"]["data"]["method"], json!("line1\nline2\r\n"));
    probe(&mut conn);
}

#[test]
fn numeric_ids_beyond_what_a_double_holds_are_echoed_byte_exactly() {
    let dir = TestDir::new();
    let daemon = dir.start(&[]);
    let mut fresh = daemon.connect();
    let mut conn = daemon.initialized();
    let ids = [
        "18446744073709551617",
        "-9223372036854775809",
        "1.2345e29",
        "-0",
        "1e2",
        "1E+2",
        "0.10",
        // Longer than the inline form an id is usually kept in.
        "123456789012345678901234567890.5e-3",
    ];
    for raw in ids {
        let echoed = |line: &str| line.ends_with(&format!(r#""id":{raw}}}"#));
        // A result, an envelope error and the handshake gate's error alike.
        conn.send_line(format!(
            r#"{{"jsonrpc":"2.0","method":"status","params":{{}},"id":{raw}}}"#
        ));
        let line = conn.recv_line().expect("connection closed");
        assert!(
            echoed(&line) && line.contains(r#""result":"#),
            "{raw}: {line}"
        );
        conn.send_line(format!(
            r#"{{"jsonrpc":"1.0","method":"status","id":{raw}}}"#
        ));
        let line = conn.recv_line().expect("connection closed");
        assert!(echoed(&line) && line.contains("-32600"), "{raw}: {line}");
        fresh.send_line(format!(
            r#"{{"jsonrpc":"2.0","method":"status","id":{raw}}}"#
        ));
        let line = fresh.recv_line().expect("connection closed");
        assert!(echoed(&line) && line.contains("-32010"), "{raw}: {line}");
    }
    // The same digits as a string id are a string, echoed as one.
    conn.send_line(r#"{"jsonrpc":"2.0","method":"status","id":"18446744073709551617"}"#);
    let line = conn.recv_line().unwrap();
    assert!(line.ends_with(r#""id":"18446744073709551617"}"#), "{line}");
    // A number no double can hold at all is a parse error, as anywhere else in a frame.
    answered_with(
        &mut conn,
        br#"{"jsonrpc":"2.0","method":"status","id":1e400}"#,
        PARSE_ERROR,
        &Value::Null,
    );
}

//! `classify` over arbitrary bytes: never panics, and agrees with an independent reading of
//! the envelope table in `docs/protocol.md`. What it accepts survives a re-encode, and what
//! it answers is itself a well-formed response.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use zeroclaw_rpc::codes;
use zeroclaw_rpc::envelope::{Envelope, classify};
use zeroclaw_rpc::message::{Answer, encode_request, encode_response};

fuzz_target!(|input: &[u8]| {
    let got = classify(input);
    check_against_table(input, &got);
    check_round_trip(&got);
});

/// What the table says a frame gets, leaving out the human messages.
#[derive(Debug, PartialEq)]
enum Expected {
    Reply(i64, Value),
    Request,
    Notification,
    Response,
    Drop,
}

fn valid_id(id: &Value) -> bool {
    matches!(id, Value::String(_) | Value::Number(_) | Value::Null)
}

fn expected(input: &[u8]) -> Expected {
    let Ok(value) = serde_json::from_slice::<Value>(input) else {
        return Expected::Reply(codes::PARSE_ERROR, Value::Null);
    };
    let Value::Object(map) = value else {
        return Expected::Reply(codes::INVALID_REQUEST, Value::Null);
    };
    let method = map.contains_key("method");
    let result = map.contains_key("result");
    let error = map.contains_key("error");
    match (method, result || error) {
        (true, false) => request_shaped(&map),
        (false, true) => response_shaped(&map, result, error),
        _ => Expected::Reply(codes::INVALID_REQUEST, Value::Null),
    }
}

fn version_ok(map: &Map<String, Value>) -> bool {
    map.get("jsonrpc") == Some(&Value::String("2.0".into()))
}

fn request_shaped(map: &Map<String, Value>) -> Expected {
    let valid = version_ok(map)
        && map.get("method").is_some_and(Value::is_string)
        && map
            .get("params")
            .is_none_or(|p| p.is_object() || p.is_array())
        && map.get("id").is_none_or(valid_id);
    match (valid, map.get("id")) {
        (true, Some(_)) => Expected::Request,
        (true, None) => Expected::Notification,
        (false, None) => Expected::Drop,
        (false, Some(id)) if valid_id(id) => Expected::Reply(codes::INVALID_REQUEST, id.clone()),
        (false, Some(_)) => Expected::Reply(codes::INVALID_REQUEST, Value::Null),
    }
}

fn response_shaped(map: &Map<String, Value>, result: bool, error: bool) -> Expected {
    if result && error || !version_ok(map) || !map.get("id").is_some_and(valid_id) {
        return Expected::Drop;
    }
    if error {
        let Some(Value::Object(e)) = map.get("error") else {
            return Expected::Drop;
        };
        let code_ok = e.get("code").is_some_and(|c| c.as_i64().is_some());
        let message_ok = e.get("message").is_some_and(Value::is_string);
        if !(code_ok && message_ok) {
            return Expected::Drop;
        }
    }
    Expected::Response
}

fn check_against_table(input: &[u8], got: &Envelope) {
    let want = expected(input);
    let seen = match got {
        Envelope::Reply { id, error } => {
            assert!(
                error.code == codes::PARSE_ERROR || error.code == codes::INVALID_REQUEST,
                "a reply must be -32700 or -32600, got {}",
                error.code
            );
            assert!(
                valid_id(id),
                "a reply's id must be string/number/null: {id}"
            );
            Expected::Reply(error.code, id.clone())
        }
        Envelope::Request { .. } => Expected::Request,
        Envelope::Notification { .. } => Expected::Notification,
        Envelope::Response { id, .. } => {
            assert!(valid_id(id));
            Expected::Response
        }
        Envelope::Drop { .. } => Expected::Drop,
    };
    assert_eq!(
        seen, want,
        "classify disagrees with the envelope table: {got:?}"
    );
}

/// serde_json's default float parsing is not bit-exact on a round trip, so values holding
/// floats are compared by shape only.
fn has_float(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_f64(),
        Value::Array(a) => a.iter().any(has_float),
        Value::Object(o) => o.values().any(has_float),
        _ => false,
    }
}

fn same(a: &Value, b: &Value) -> bool {
    if has_float(a) || has_float(b) {
        std::mem::discriminant(a) == std::mem::discriminant(b)
    } else {
        a == b
    }
}

fn same_opt(a: &Option<Value>, b: &Option<Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same(a, b),
        (None, None) => true,
        _ => false,
    }
}

fn check_round_trip(got: &Envelope) {
    match got {
        Envelope::Request { id, method, params } => {
            let again = classify(&encode_request(method, params.as_ref(), Some(id)));
            let Envelope::Request {
                id: id2,
                method: method2,
                params: params2,
            } = &again
            else {
                panic!("re-encoded request classified as {again:?}");
            };
            assert!(same(id, id2) && method == method2 && same_opt(params, params2));
        }
        Envelope::Notification { method, params } => {
            let again = classify(&encode_request(method, params.as_ref(), None));
            let Envelope::Notification {
                method: method2,
                params: params2,
            } = &again
            else {
                panic!("re-encoded notification classified as {again:?}");
            };
            assert!(method == method2 && same_opt(params, params2));
        }
        Envelope::Response { id, outcome } => {
            let again = classify(&encode_response(id, &outcome.clone().map(Answer::from)));
            let Envelope::Response {
                id: id2,
                outcome: outcome2,
            } = &again
            else {
                panic!("re-encoded response classified as {again:?}");
            };
            assert!(same(id, id2));
            match (outcome, outcome2) {
                (Ok(a), Ok(b)) => assert!(same(a, b)),
                (Err(a), Err(b)) => {
                    assert_eq!((a.code, &a.message), (b.code, &b.message));
                    assert!(same_opt(&a.data, &b.data));
                }
                _ => panic!("outcome changed on a round trip: {outcome:?} -> {outcome2:?}"),
            }
        }
        // What the peer sends back must reach the other side as a response to that id.
        Envelope::Reply { id, error } => {
            let frame = encode_response(id, &Err(error.clone()));
            assert!(!frame.contains(&b'\n'));
            match classify(&frame) {
                Envelope::Response {
                    id: id2,
                    outcome: Err(e),
                } => {
                    assert!(same(id, &id2));
                    assert_eq!(&e, error);
                }
                other => panic!("our own reply classifies as {other:?}"),
            }
        }
        Envelope::Drop { .. } => {}
    }
}

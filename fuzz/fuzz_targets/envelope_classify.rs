//! `classify` over arbitrary bytes: never panics, and agrees with an independent reading of
//! the envelope table in `docs/protocol.md` (the oracle the property tests use too). What it
//! accepts survives a re-encode, and what it answers is itself a well-formed response.
#![no_main]

/// The envelope table's oracle, shared with `crates/zeroclaw-rpc/tests/properties.rs`.
#[path = "../../crates/zeroclaw-rpc/tests/oracle/envelope.rs"]
mod envelope;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use zeroclaw_rpc::codes;
use zeroclaw_rpc::envelope::{Envelope, classify};
use zeroclaw_rpc::message::{Answer, encode_request, encode_response};

fuzz_target!(|input: &[u8]| {
    let got = classify(input);
    check_against_table(input, &got);
    check_round_trip(&got);
});

fn check_against_table(input: &[u8], got: &Envelope) {
    match got {
        Envelope::Reply { id, error } => {
            assert!(
                error.code == codes::PARSE_ERROR || error.code == codes::INVALID_REQUEST,
                "a reply must be -32700 or -32600, got {}",
                error.code
            );
            assert!(
                envelope::valid_id(&id.to_value()),
                "a reply's id must be string/number/null: {id:?}"
            );
        }
        Envelope::Response { id, .. } => assert!(envelope::valid_id(&id.to_value())),
        Envelope::Request { .. } | Envelope::Notification { .. } | Envelope::Drop { .. } => {}
    }
    assert_eq!(
        envelope::verdict(got),
        envelope::expected(input),
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
            assert!(id == id2 && method == method2 && same_opt(params, params2));
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
            assert_eq!(id, id2, "an id is echoed exactly");
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
                    assert_eq!(id, &id2, "an id is echoed exactly");
                    assert_eq!(&e, error);
                }
                other => panic!("our own reply classifies as {other:?}"),
            }
        }
        Envelope::Drop { .. } => {}
    }
}

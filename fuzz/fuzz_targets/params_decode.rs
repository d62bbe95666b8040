//! Every method in the daemon's table, with arbitrary params, through the real connection:
//! an in-memory daemon (`zeroclaw_daemon::testing`: in-memory store, a provider that is
//! never reached, the real gate and peer over a `tokio::io::duplex`). Each request must be
//! answered exactly once, with its own id, within a deadline, and the connection must still
//! answer `status` afterwards. Nothing may panic.
//!
//! Input layout: byte 0 picks the method (`b & 0x0f`, modulo the table plus one unknown
//! name), bit 6 sends no `params` at all, bit 7 sends the request before `initialize`
//! (it must then be refused with -32010 unless it is `initialize`). The rest is the params:
//! taken verbatim when it parses as JSON, otherwise built from the bytes with `arbitrary`,
//! biased towards the field names and values the methods read.
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Number, Value, json};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::runtime::Runtime;
use zeroclaw_protocol::{PROTOCOL_VERSION, codes};
use zeroclaw_rpc::codec::{Frame, FrameReader, FrameWriter};
use zeroclaw_rpc::envelope::{Envelope, classify};
use zeroclaw_rpc::message::{Id, encode_request};
use zeroclaw_daemon::config::{AgentSettings, Config, ProviderConfig};
use zeroclaw_daemon::testing::InMemoryDaemon;

/// Wall-clock bound on one input; far above what a healthy answer takes.
const DEADLINE: Duration = Duration::from_secs(10);
/// A fresh daemon state this often, so sessions created by `session/new` do not pile up.
const STATE_REUSE: u32 = 2000;

fuzz_target!(|input: &[u8]| {
    let Some((&head, rest)) = input.split_first() else {
        return;
    };
    let names = InMemoryDaemon::methods();
    let pick = usize::from(head & 0x0f) % (names.len() + 1);
    let method = names.get(pick).copied().unwrap_or("no/such-method");
    let params = if head & 0x40 != 0 {
        None
    } else {
        Some(params_from(rest))
    };
    let before_init = head & 0x80 != 0;
    runtime().block_on(async {
        let daemon = daemon();
        match tokio::time::timeout(DEADLINE, exchange(daemon, method, params, before_init)).await {
            Ok(()) => {}
            Err(_) => panic!("{method}: no answer within {DEADLINE:?}"),
        }
    });
});

fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    })
}

fn daemon() -> Arc<InMemoryDaemon> {
    static DAEMON: Mutex<Option<(Arc<InMemoryDaemon>, u32)>> = Mutex::new(None);
    let mut slot = DAEMON.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((daemon, uses)) = slot.as_mut()
        && *uses < STATE_REUSE
        && !daemon.is_shut_down()
    {
        *uses += 1;
        return daemon.clone();
    }
    let config = Config {
        // Port 9 (discard) on loopback, no retries: a turn, should one ever start, fails
        // fast instead of waiting on a model.
        agent: Arc::new(AgentSettings {
            provider: ProviderConfig {
                base_url: "http://127.0.0.1:9/v1".into(),
                max_retries: 0,
                connect_timeout_secs: 1,
                ..ProviderConfig::default()
            },
            ..AgentSettings::default()
        }),
        ..Config::default()
    };
    let dir = std::env::temp_dir().join("zeroclaw-fuzz-params");
    let daemon = Arc::new(InMemoryDaemon::start(config, &dir).expect("in-memory daemon"));
    *slot = Some((daemon.clone(), 1));
    daemon
}

async fn exchange(
    daemon: Arc<InMemoryDaemon>,
    method: &str,
    params: Option<Value>,
    before_init: bool,
) {
    let client = daemon.connect();
    let (read, write) = tokio::io::split(client);
    let mut reader = FrameReader::new(read, zeroclaw_rpc::DEFAULT_MAX_FRAME_BYTES);
    let mut writer = FrameWriter::new(write);
    let fuzzed = encode_request(method, params.as_ref(), Some(&Id::from("fz")));
    let init = encode_request(
        "initialize",
        Some(&json!({ "protocolVersion": PROTOCOL_VERSION })),
        Some(&Id::from("init")),
    );
    let status = encode_request("status", Some(&json!({})), Some(&Id::from("st")));
    let frames = if before_init {
        vec![fuzzed, init, status]
    } else {
        vec![init, fuzzed, status]
    };
    writer.write_frames(&frames).await.expect("write");

    let mut answers: Vec<(String, Result<Value, zeroclaw_rpc::RpcError>)> = Vec::new();
    while answers.len() < 3 {
        let frame = match reader.next_frame().await.expect("read") {
            Some(Frame::Line(line)) => line,
            Some(Frame::Oversized { .. } | Frame::OversizedEnd { .. }) => {
                panic!("the daemon sent an oversized frame")
            }
            None => panic!("{method}: connection ended with answers {answers:?}"),
        };
        match classify(&frame) {
            Envelope::Response {
                id: Id::String(id),
                outcome,
            } => {
                assert!(
                    !answers.iter().any(|(seen, _)| *seen == id),
                    "{method}: request {id} answered twice"
                );
                answers.push((id, outcome));
            }
            // Events for a session this connection attached to.
            Envelope::Notification { .. } => {}
            other => panic!("{method}: unexpected frame from the daemon: {other:?}"),
        }
    }
    let get = |id: &str| {
        answers
            .iter()
            .find(|(seen, _)| seen == id)
            .map(|(_, outcome)| outcome.clone())
            .unwrap_or_else(|| panic!("{method}: no answer for {id}"))
    };
    let fz = get("fz");
    assert!(get("init").is_ok(), "initialize failed: {:?}", get("init"));
    assert!(
        get("st").is_ok(),
        "status failed after {method}: {:?}",
        get("st")
    );
    if let Err(e) = &fz {
        // The envelope is checked before the gate: params that are neither object nor
        // array are -32600 whenever they arrive.
        let shaped = params
            .as_ref()
            .is_none_or(|p| p.is_object() || p.is_array());
        if before_init && method != "initialize" && shaped {
            assert_eq!(e.code, codes::NOT_INITIALIZED, "{method}: {e}");
        }
        let allowed = [
            codes::INVALID_REQUEST,
            codes::METHOD_NOT_FOUND,
            codes::INVALID_PARAMS,
            codes::NOT_INITIALIZED,
            codes::VERSION_MISMATCH,
            codes::SESSION_NOT_FOUND,
            codes::NOT_ALLOWED,
        ];
        assert!(
            allowed.contains(&e.code),
            "{method} {params:?}: unexpected error {e}"
        );
    } else {
        assert!(
            !(before_init && method != "initialize"),
            "{method} succeeded before initialize"
        );
    }

    writer.shutdown().await.expect("shutdown");
    // Drain until the daemon side closes, so its tasks end within this input. (A panic in
    // the daemon's connection task aborts the run: libfuzzer-sys's panic hook aborts.)
    while let Ok(Some(_)) = reader.next_frame().await {}
}

const KEYS: &[&str] = &[
    "protocolVersion",
    "clientInfo",
    "capabilities",
    "elicitation",
    "name",
    "version",
    "cwd",
    "title",
    "model",
    "sessionId",
    "replay",
    "limit",
    "before",
    "prompt",
    "requestId",
    "decision",
];

const STRINGS: &[&str] = &[
    "",
    " ",
    "/",
    "/tmp",
    "/nonexistent/dir",
    "relative/dir",
    "allow_once",
    "allow_always",
    "reject",
    "zc-out-0",
    "00000000-0000-0000-0000-000000000000",
    "llama3.2",
    "\u{0}",
    "\u{202e}",
];

fn params_from(bytes: &[u8]) -> Value {
    if let Ok(value) = serde_json::from_slice::<Value>(bytes) {
        return value;
    }
    let mut u = Unstructured::new(bytes);
    gen_value(&mut u, 4, true).unwrap_or(Value::Null)
}

fn gen_value(u: &mut Unstructured<'_>, depth: u32, top: bool) -> arbitrary::Result<Value> {
    // The top level is mostly an object, since that is what every method takes.
    let kind = if top && !u.ratio(1, 8)? {
        7
    } else {
        u.int_in_range(0..=7)?
    };
    Ok(match kind {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::from(u.int_in_range(-3i64..=3)?),
        3 => Value::from(u.arbitrary::<i64>()?),
        4 => Number::from_f64(u.arbitrary::<f64>()?).map_or(Value::Null, Value::Number),
        5 => Value::String(if u.arbitrary()? {
            (*u.choose(STRINGS)?).to_owned()
        } else {
            u.arbitrary::<String>()?
        }),
        6 if depth > 0 => {
            let n = u.int_in_range(0..=3)?;
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(gen_value(u, depth - 1, false)?);
            }
            Value::Array(items)
        }
        _ if depth > 0 => {
            let n = u.int_in_range(0..=4)?;
            let mut map = Map::new();
            for _ in 0..n {
                let key = if u.ratio(7, 8)? {
                    (*u.choose(KEYS)?).to_owned()
                } else {
                    u.arbitrary::<String>()?
                };
                map.insert(key, gen_value(u, depth - 1, false)?);
            }
            Value::Object(map)
        }
        _ => Value::Null,
    })
}

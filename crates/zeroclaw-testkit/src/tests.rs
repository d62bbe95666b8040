#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a panic is the right failure"
)]

use std::io;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::time::timeout;

use crate::{FakeProvider, Gate, NO_REPLY_LEFT, Reply, Step, anthropic, openai, script::Script};

/// A response read by hand from a raw socket.
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
    /// Whether the terminating `0\r\n\r\n` chunk was seen.
    ended: bool,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The next HTTP chunk's payload; `None` after the terminating chunk.
    /// An EOF or reset before it is an error.
    async fn next_chunk(&mut self) -> io::Result<Option<Vec<u8>>> {
        assert_eq!(self.header("transfer-encoding"), Some("chunked"));
        let mut line = String::new();
        if self.reader.read_line(&mut line).await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let size = usize::from_str_radix(line.trim_end(), 16)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, line.clone()))?;
        let mut data = vec![0; size + 2];
        self.reader.read_exact(&mut data).await?;
        assert_eq!(&data[size..], b"\r\n", "chunk must end with CRLF");
        data.truncate(size);
        if size == 0 {
            self.ended = true;
            return Ok(None);
        }
        Ok(Some(data))
    }

    /// All chunks, in order, up to the terminating chunk.
    async fn chunks(&mut self) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(chunk) = self.next_chunk().await.unwrap() {
            out.push(chunk);
        }
        out
    }

    /// The whole body (chunked or content-length).
    async fn body(&mut self) -> Vec<u8> {
        if let Some(len) = self.header("content-length") {
            let mut body = vec![0; len.parse().unwrap()];
            self.reader.read_exact(&mut body).await.unwrap();
            body
        } else {
            self.chunks().await.concat()
        }
    }
}

fn post_bytes(path: &str, body: &Value, extra_headers: &str) -> Vec<u8> {
    let body = body.to_string();
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{extra_headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

async fn send(fake: &FakeProvider, request: &[u8]) -> Response {
    let mut stream = TcpStream::connect(fake.addr()).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).await.unwrap();
    let mut parts = status_line.split_whitespace();
    assert_eq!(parts.next(), Some("HTTP/1.1"));
    let status = parts.next().unwrap().parse().unwrap();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).await.unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (n, v) = line.split_once(':').unwrap();
        headers.push((n.trim().to_ascii_lowercase(), v.trim().to_owned()));
    }
    Response {
        status,
        headers,
        reader,
        ended: false,
    }
}

async fn post(fake: &FakeProvider, body: &Value) -> Response {
    send(fake, &post_bytes("/v1/chat/completions", body, "")).await
}

/// Parses SSE text into `(event name, data)` pairs.
fn sse(bytes: &[u8]) -> Vec<(Option<String>, String)> {
    let text = std::str::from_utf8(bytes).unwrap();
    text.split("\n\n")
        .filter(|block| !block.is_empty())
        .map(|block| {
            let mut event = None;
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    event = Some(v.to_owned());
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data.push(v);
                } else {
                    panic!("unexpected SSE line {line:?}");
                }
            }
            (event, data.join("\n"))
        })
        .collect()
}

/// Each chunk must be exactly one SSE event; returns their data as JSON
/// (`[DONE]` as the string "[DONE]").
fn one_event_per_chunk(chunks: &[Vec<u8>]) -> Vec<(Option<String>, Value)> {
    chunks
        .iter()
        .map(|chunk| {
            let events = sse(chunk);
            assert_eq!(
                events.len(),
                1,
                "chunk {:?}",
                String::from_utf8_lossy(chunk)
            );
            let (name, data) = events.into_iter().next().unwrap();
            let value = if data == "[DONE]" {
                Value::String(data)
            } else {
                serde_json::from_str(&data).unwrap()
            };
            (name, value)
        })
        .collect()
}

fn delta(chunk: &Value) -> &Value {
    &chunk["choices"][0]["delta"]
}

#[tokio::test]
async fn openai_text_exact_events() {
    let fake = FakeProvider::start().await.unwrap();
    assert!(fake.base_url().starts_with("http://127.0.0.1:"));
    assert!(fake.base_url().ends_with("/v1"));
    fake.push(openai::text(&["Hel", "lo"]));
    let mut resp = post(&fake, &json!({"model": "m", "stream": true})).await;
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("content-type"), Some("text/event-stream"));
    assert_eq!(resp.header("cache-control"), Some("no-cache"));
    assert_eq!(resp.header("connection"), Some("close"));
    assert_eq!(resp.header("content-length"), None);
    let events = one_event_per_chunk(&resp.chunks().await);
    assert!(resp.ended);
    assert!(events.iter().all(|(name, _)| name.is_none()));
    let data: Vec<&Value> = events.iter().map(|(_, v)| v).collect();
    assert_eq!(data.len(), 6);
    assert_eq!(
        *data[0],
        json!({"id":"chatcmpl-fake","object":"chat.completion.chunk","created":1_700_000_000,"model":"fake-model",
               "choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]})
    );
    assert_eq!(*delta(data[1]), json!({"content": "Hel"}));
    assert_eq!(data[1]["choices"][0]["finish_reason"], Value::Null);
    assert_eq!(*delta(data[2]), json!({"content": "lo"}));
    assert_eq!(*delta(data[3]), json!({}));
    assert_eq!(data[3]["choices"][0]["finish_reason"], "stop");
    assert_eq!(data[4]["choices"], json!([]));
    assert_eq!(
        data[4]["usage"],
        json!({"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12})
    );
    assert_eq!(*data[5], "[DONE]");
}

#[tokio::test]
async fn openai_tool_call_arguments_reassemble() {
    let fake = FakeProvider::start().await.unwrap();
    let args = r#"{"command":"echo héllo wörld","timeout":30}"#;
    fake.push(
        openai::Builder::new()
            .text("Let me run that.")
            .tool_call(0, "call_1", "bash", args, 4)
            .tool_call(1, "call_2", "read", r#"{"path":"/tmp/x"}"#, 0)
            .usage(7, 9)
            .build(),
    );
    let mut resp = post(&fake, &json!({"stream": true})).await;
    let events = one_event_per_chunk(&resp.chunks().await);
    let data: Vec<&Value> = events.iter().map(|(_, v)| v).collect();
    assert_eq!(*delta(data[1]), json!({"content": "Let me run that."}));
    assert_eq!(
        *delta(data[2]),
        json!({"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":""}}]})
    );
    let mut reassembled = String::new();
    for chunk in &data[3..7] {
        let call = &delta(chunk)["tool_calls"][0];
        assert_eq!(call.as_object().unwrap().len(), 2, "only index + function");
        assert_eq!(call["index"], 0);
        assert_eq!(call["function"].as_object().unwrap().len(), 1);
        let piece = call["function"]["arguments"].as_str().unwrap();
        assert!(!piece.is_empty());
        reassembled.push_str(piece);
    }
    assert_eq!(reassembled, args);
    // split 0: everything in the first delta.
    assert_eq!(
        *delta(data[7]),
        json!({"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"read","arguments":"{\"path\":\"/tmp/x\"}"}}]})
    );
    assert_eq!(data[8]["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(data[9]["usage"]["total_tokens"], 16);
    assert_eq!(*data[10], "[DONE]");
    assert_eq!(data.len(), 11);
}

#[tokio::test]
async fn openai_reasoning_finish_variants_raw_and_no_done() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(
        openai::Builder::new()
            .model("deepseek-r1")
            .reasoning("think a")
            .reasoning_field("think b")
            .text("answer")
            .raw_line("data: {not json")
            .raw_line(": keep-alive comment")
            .finish(None)
            .no_done()
            .build(),
    );
    fake.push(openai::Builder::new().text("x").finish(Some("")).build());

    let mut resp = post(&fake, &json!({})).await;
    let chunks = resp.chunks().await;
    let texts: Vec<String> = chunks
        .iter()
        .map(|c| String::from_utf8(c.clone()).unwrap())
        .collect();
    assert_eq!(texts.len(), 7);
    let parse = |s: &str| -> Value {
        serde_json::from_str(s.strip_prefix("data: ").unwrap().trim_end()).unwrap()
    };
    assert_eq!(parse(&texts[0])["model"], "deepseek-r1");
    assert_eq!(
        *delta(&parse(&texts[1])),
        json!({"reasoning_content": "think a"})
    );
    assert_eq!(*delta(&parse(&texts[2])), json!({"reasoning": "think b"}));
    assert_eq!(*delta(&parse(&texts[3])), json!({"content": "answer"}));
    assert_eq!(texts[4], "data: {not json\n\n");
    assert_eq!(texts[5], ": keep-alive comment\n\n");
    let finish = parse(&texts[6]);
    assert!(
        finish["choices"][0]
            .as_object()
            .unwrap()
            .contains_key("finish_reason")
    );
    assert_eq!(finish["choices"][0]["finish_reason"], Value::Null);

    let mut resp = post(&fake, &json!({})).await;
    let events = one_event_per_chunk(&resp.chunks().await);
    assert_eq!(events.len(), 4);
    assert_eq!(events[2].1["choices"][0]["finish_reason"], "");
    assert_eq!(events[3].1, "[DONE]");
}

#[tokio::test]
async fn anthropic_events_and_input_json_pieces() {
    let fake = FakeProvider::start().await.unwrap();
    let args = r#"{"command":"ls -la","cwd":"/tmp/ü"}"#;
    fake.push(
        anthropic::Builder::new()
            .thinking("Let me ")
            .thinking("think.")
            .text("I'll list.")
            .tool_use("toolu_1", "bash", args, 5)
            .usage(25, 40)
            .build(),
    );
    let mut resp = send(
        &fake,
        &post_bytes("/v1/messages", &json!({"stream": true}), "x-api-key: k\r\n"),
    )
    .await;
    assert_eq!(resp.status, 200);
    let events = one_event_per_chunk(&resp.chunks().await);
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_deref().unwrap()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
    );
    // The data's "type" always equals the event name.
    for (name, data) in &events {
        assert_eq!(data["type"], name.as_deref().unwrap());
    }
    let data: Vec<&Value> = events.iter().map(|(_, v)| v).collect();
    assert_eq!(
        data[0]["message"]["usage"],
        json!({"input_tokens": 25, "output_tokens": 1})
    );
    assert_eq!(data[0]["message"]["content"], json!([]));
    assert_eq!(data[0]["message"]["role"], "assistant");
    assert_eq!(
        *data[2],
        json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}})
    );
    assert_eq!(
        *data[3],
        json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me "}})
    );
    assert_eq!(data[4]["delta"]["thinking"], "think.");
    assert_eq!(data[5]["delta"]["type"], "signature_delta");
    assert_eq!(*data[6], json!({"type":"content_block_stop","index":0}));
    assert_eq!(data[7]["content_block"], json!({"type":"text","text":""}));
    assert_eq!(
        *data[8],
        json!({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"I'll list."}})
    );
    assert_eq!(
        *data[10],
        json!({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"bash","input":{}}})
    );
    let mut json_text = String::new();
    for d in &data[11..16] {
        assert_eq!(d["index"], 2);
        assert_eq!(d["delta"]["type"], "input_json_delta");
        json_text.push_str(d["delta"]["partial_json"].as_str().unwrap());
    }
    assert_eq!(json_text, args);
    assert_eq!(
        *data[17],
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":40}})
    );
    assert_eq!(*data[18], json!({"type":"message_stop"}));
    let recorded = fake.requests();
    assert_eq!(recorded[0].path, "/v1/messages");
    assert_eq!(recorded[0].header("X-Api-Key"), Some("k"));
}

#[tokio::test]
async fn anthropic_text_stop_reason_and_errors() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(
        anthropic::Builder::new()
            .text("a")
            .text("b")
            .stop_reason("max_tokens")
            .build(),
    );
    fake.push(
        anthropic::Builder::new()
            .text("partial")
            .error("overloaded_error", "Overloaded")
            .text("never")
            .build(),
    );
    fake.push(anthropic::error("api_error", "boom"));
    fake.push(anthropic::error_status(
        529,
        "overloaded_error",
        "Overloaded",
    ));

    let events = one_event_per_chunk(&post(&fake, &json!({})).await.chunks().await);
    assert_eq!(events.len(), 8);
    assert_eq!(events[3].1["delta"]["text"], "a");
    assert_eq!(events[4].1["delta"]["text"], "b");
    assert_eq!(events[4].1["index"], 0);
    assert_eq!(events[6].1["delta"]["stop_reason"], "max_tokens");
    assert_eq!(events[6].1["usage"]["output_tokens"], 2);

    let events = one_event_per_chunk(&post(&fake, &json!({})).await.chunks().await);
    let last = events.last().unwrap();
    assert_eq!(last.0.as_deref(), Some("error"));
    assert_eq!(
        last.1,
        json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})
    );
    assert_eq!(
        events.len(),
        5,
        "message_start, ping, block start, delta, error"
    );

    let events = one_event_per_chunk(&post(&fake, &json!({})).await.chunks().await);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].1["error"]["type"], "api_error");

    let mut resp = post(&fake, &json!({})).await;
    assert_eq!(resp.status, 529);
    assert_eq!(resp.header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_slice(&resp.body().await).unwrap();
    assert_eq!(body["error"]["message"], "Overloaded");
}

#[tokio::test]
async fn stall_keeps_connection_open_until_server_drops() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(openai::Builder::new().text("partial").stall().build());
    let mut resp = post(&fake, &json!({})).await;
    let role = resp.next_chunk().await.unwrap().unwrap();
    assert!(
        String::from_utf8(role)
            .unwrap()
            .contains("\"role\":\"assistant\"")
    );
    let text = resp.next_chunk().await.unwrap().unwrap();
    assert!(
        String::from_utf8(text)
            .unwrap()
            .contains("\"content\":\"partial\"")
    );
    // Nothing more arrives, and the socket stays open.
    assert!(
        timeout(Duration::from_millis(200), resp.next_chunk())
            .await
            .is_err(),
        "a stalled stream must not send or close"
    );
    assert!(!resp.ended);
    // Dropping the server closes the stalled connection.
    drop(fake);
    let mut rest = Vec::new();
    let n = timeout(Duration::from_secs(5), resp.reader.read_to_end(&mut rest))
        .await
        .expect("closed after drop")
        .unwrap_or(0);
    assert_eq!(n, 0);
}

#[tokio::test]
async fn stall_does_not_block_other_connections() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(openai::Builder::new().stall().build());
    fake.push(openai::text(&["ok"]));
    let mut stalled = post(&fake, &json!({"n": 1})).await;
    stalled.next_chunk().await.unwrap();
    let events = one_event_per_chunk(&post(&fake, &json!({"n": 2})).await.chunks().await);
    assert_eq!(*delta(&events[1].1), json!({"content": "ok"}));
    assert!(
        timeout(Duration::from_millis(50), stalled.next_chunk())
            .await
            .is_err()
    );
}

#[tokio::test]
async fn reset_ends_without_terminating_chunk() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(
        openai::Builder::new()
            .text("partial")
            .pause(Duration::from_millis(50))
            .reset()
            .build(),
    );
    let mut resp = post(&fake, &json!({})).await;
    resp.next_chunk().await.unwrap().unwrap();
    let text = resp.next_chunk().await.unwrap().unwrap();
    assert!(String::from_utf8(text).unwrap().contains("partial"));
    let err = timeout(Duration::from_secs(5), resp.next_chunk())
        .await
        .expect("reset must end the read")
        .expect_err("no terminating chunk after a reset");
    assert!(
        matches!(
            err.kind(),
            io::ErrorKind::ConnectionReset | io::ErrorKind::UnexpectedEof
        ),
        "{err:?}"
    );
    assert!(!resp.ended);
}

#[tokio::test]
async fn anthropic_reset_and_stall_mid_block() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(anthropic::Builder::new().text("x").stall().build());
    fake.push(
        anthropic::Builder::new()
            .tool_use("t", "bash", "{}", 1)
            .reset()
            .build(),
    );
    let mut resp = post(&fake, &json!({})).await;
    let mut names = Vec::new();
    for _ in 0..4 {
        let chunk = resp.next_chunk().await.unwrap().unwrap();
        names.push(sse(&chunk)[0].0.clone().unwrap());
    }
    assert_eq!(
        names,
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta"
        ]
    );
    assert!(
        timeout(Duration::from_millis(200), resp.next_chunk())
            .await
            .is_err()
    );

    let mut resp = post(&fake, &json!({})).await;
    let mut got = Vec::new();
    let err = loop {
        match resp.next_chunk().await {
            Ok(Some(chunk)) => got.push(chunk),
            Ok(None) => panic!("terminating chunk after reset"),
            Err(e) => break e,
        }
    };
    assert!(matches!(
        err.kind(),
        io::ErrorKind::ConnectionReset | io::ErrorKind::UnexpectedEof
    ));
    assert!(got.len() <= 4);
}

#[tokio::test]
async fn fifo_order_then_500_when_empty() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(openai::text(&["first"]));
    fake.push(Reply::status(418, json!({"teapot": true})));
    fake.push(openai::text(&["third"]));
    assert_eq!(fake.pending_replies(), 3);

    let events = one_event_per_chunk(&post(&fake, &json!({"i": 1})).await.chunks().await);
    assert_eq!(delta(&events[1].1)["content"], "first");
    let mut resp = post(&fake, &json!({"i": 2})).await;
    assert_eq!(resp.status, 418);
    assert_eq!(
        serde_json::from_slice::<Value>(&resp.body().await).unwrap(),
        json!({"teapot": true})
    );
    let events = one_event_per_chunk(&post(&fake, &json!({"i": 3})).await.chunks().await);
    assert_eq!(delta(&events[1].1)["content"], "third");
    assert_eq!(fake.pending_replies(), 0);

    for i in 4..6 {
        let mut resp = post(&fake, &json!({"i": i})).await;
        assert_eq!(resp.status, 500);
        assert_eq!(resp.header("content-type"), Some("application/json"));
        let body: Value = serde_json::from_slice(&resp.body().await).unwrap();
        assert_eq!(body["error"]["message"], NO_REPLY_LEFT);
        assert_eq!(NO_REPLY_LEFT, "fake provider: no scripted reply left");
    }
    let order: Vec<i64> = fake
        .requests()
        .iter()
        .map(|r| r.body["i"].as_i64().unwrap())
        .collect();
    assert_eq!(order, [1, 2, 3, 4, 5]);
}

#[tokio::test]
async fn requests_record_method_path_headers_and_body() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(openai::text(&["a"]));
    fake.push(openai::text(&["b"]));
    let body =
        json!({"model": "gpt-x", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let _ = post_with_auth(&fake, &body).await.chunks().await;

    let first = fake.next_request().await;
    assert_eq!(first.method, "POST");
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(first.body, body);
    assert_eq!(first.header("authorization"), Some("Bearer sk-test"));
    assert!(
        first
            .headers
            .iter()
            .all(|(n, _)| *n == n.to_ascii_lowercase())
    );
    assert!(
        first
            .headers
            .contains(&("content-type".into(), "application/json".into()))
    );

    // Not JSON: body is Null, raw bytes kept.
    let raw = b"POST /v1/x?y=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello";
    let _ = send(&fake, raw).await.chunks().await;
    let second = fake.next_request().await;
    assert_eq!(second.path, "/v1/x?y=1");
    assert_eq!(second.body, Value::Null);
    assert_eq!(second.raw_body, b"hello");
    assert_eq!(fake.requests().len(), 2);
    assert_eq!(fake.requests()[0], first);
    assert!(
        fake.next_request_timeout(Duration::from_millis(50))
            .await
            .is_none()
    );
}

async fn post_with_auth(fake: &FakeProvider, body: &Value) -> Response {
    send(
        fake,
        &post_bytes(
            "/v1/chat/completions",
            body,
            "Authorization: Bearer sk-test\r\n",
        ),
    )
    .await
}

#[tokio::test]
async fn chunked_request_body_and_get_without_body() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Reply::json(json!({"ok": 1})));
    fake.push(Reply::json(json!({"ok": 2})));
    let body = br#"{"model":"m","stream":true}"#;
    let mut req =
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            .to_vec();
    req.extend_from_slice(format!("{:x};ext=1\r\n", 10).as_bytes());
    req.extend_from_slice(&body[..10]);
    req.extend_from_slice(b"\r\n");
    req.extend_from_slice(format!("{:X}\r\n", body.len() - 10).as_bytes());
    req.extend_from_slice(&body[10..]);
    req.extend_from_slice(b"\r\n0\r\nx-trailer: t\r\n\r\n");
    let mut resp = send(&fake, &req).await;
    assert_eq!(resp.status, 200);
    assert_eq!(
        serde_json::from_slice::<Value>(&resp.body().await).unwrap()["ok"],
        1
    );
    assert_eq!(
        fake.requests()[0].body,
        json!({"model": "m", "stream": true})
    );

    let mut resp = send(&fake, b"GET /v1/models HTTP/1.1\r\nHost: h\r\n\r\n").await;
    assert_eq!(resp.status, 200);
    resp.body().await;
    let get = &fake.requests()[1];
    assert_eq!(
        (get.method.as_str(), get.body.clone()),
        ("GET", Value::Null)
    );
}

#[tokio::test]
async fn malformed_request_gets_400_and_is_not_recorded() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(openai::text(&["kept"]));
    let mut resp = send(&fake, b"NONSENSE\r\n\r\n").await;
    assert_eq!(resp.status, 400);
    resp.body().await;
    assert_eq!(fake.request_count(), 0);
    assert_eq!(fake.pending_replies(), 1);
}

#[tokio::test]
async fn status_replies_and_error_helpers() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Reply::rate_limited(Some(2)));
    fake.push(Reply::openai_model_not_found("x"));
    fake.push(Reply::ollama_model_not_found("x"));
    fake.push(Reply::unauthorized());
    fake.push(Reply::server_error());

    let mut resp = post(&fake, &json!({})).await;
    assert_eq!(resp.status, 429);
    assert_eq!(resp.header("retry-after"), Some("2"));
    let body = resp.body().await;
    assert_eq!(
        resp.header("content-length"),
        Some(body.len().to_string().as_str())
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&body).unwrap()["error"]["code"],
        "rate_limit_exceeded"
    );

    let mut resp = post(&fake, &json!({})).await;
    assert_eq!(resp.status, 404);
    let body: Value = serde_json::from_slice(&resp.body().await).unwrap();
    assert_eq!(body["error"]["message"], "The model `x` does not exist");
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert_eq!(body["error"]["code"], "model_not_found");

    let mut resp = post(&fake, &json!({})).await;
    assert_eq!(resp.status, 404);
    let body: Value = serde_json::from_slice(&resp.body().await).unwrap();
    assert_eq!(
        body,
        json!({"error": "model \"x\" not found, try pulling it first"})
    );

    let mut resp = post(&fake, &json!({})).await;
    assert_eq!(resp.status, 401);
    resp.body().await;
    let mut resp = post(&fake, &json!({})).await;
    assert_eq!(resp.status, 500);
    resp.body().await;
}

#[tokio::test]
async fn gate_paces_the_stream() {
    let fake = FakeProvider::start().await.unwrap();
    let gate = Gate::new();
    fake.push(
        openai::Builder::new()
            .text("before")
            .wait_for(&gate)
            .text("after")
            .build(),
    );
    let mut resp = post(&fake, &json!({})).await;
    resp.next_chunk().await.unwrap();
    resp.next_chunk().await.unwrap();
    assert!(
        timeout(Duration::from_millis(100), resp.next_chunk())
            .await
            .is_err()
    );
    assert!(!gate.is_open());
    gate.open();
    let rest = one_event_per_chunk(&resp.chunks().await);
    assert_eq!(delta(&rest[0].1)["content"], "after");
    assert_eq!(rest.last().unwrap().1, "[DONE]");
}

#[tokio::test]
async fn fragmented_reply_reassembles() {
    let fake = FakeProvider::start().await.unwrap();
    let original = openai::text(&["añb", "ç"]);
    let whole: Vec<u8> = original
        .steps
        .iter()
        .flat_map(|s| match s {
            Step::Send(b) => b.clone(),
            _ => Vec::new(),
        })
        .collect();
    fake.push(original.fragmented(7).paced(Duration::from_millis(1)));
    let mut resp = post(&fake, &json!({})).await;
    let chunks = resp.chunks().await;
    assert!(chunks.iter().all(|c| c.len() <= 7));
    assert_eq!(chunks.concat(), whole);
    let events = sse(&whole);
    assert_eq!(events.len(), 6);
}

#[tokio::test]
async fn many_chunks_is_well_formed_and_packed() {
    let reply = openai::many_chunks(100_000, "x");
    // role + 100 packed sends + finish + usage + done
    assert_eq!(reply.steps.len(), 104);
    let fake = FakeProvider::start().await.unwrap();
    fake.push(openai::many_chunks(2_500, "tok"));
    let mut resp = post(&fake, &json!({})).await;
    let chunks = resp.chunks().await;
    assert_eq!(chunks.len(), 1 + 3 + 3);
    let events = sse(&chunks.concat());
    assert_eq!(events.len(), 1 + 2_500 + 3);
    let mut text = String::new();
    for (_, data) in &events[1..2_501] {
        let v: Value = serde_json::from_str(data).unwrap();
        text.push_str(delta(&v)["content"].as_str().unwrap());
    }
    assert_eq!(text, "tok".repeat(2_500));
    let usage: Value = serde_json::from_str(&events[2_502].1).unwrap();
    assert_eq!(usage["usage"]["completion_tokens"], 2_500);
    assert_eq!(events[2_503].1, "[DONE]");
}

#[tokio::test]
async fn routes_do_not_consume_the_queue() {
    let fake = FakeProvider::start().await.unwrap();
    fake.route(
        "GET",
        "/v1/models",
        Reply::json(json!({"object": "list", "data": []})),
    );
    fake.push(openai::text(&["queued"]));
    for _ in 0..2 {
        let mut resp = send(&fake, b"GET /v1/models?x=1 HTTP/1.1\r\nHost: h\r\n\r\n").await;
        assert_eq!(resp.status, 200);
        assert_eq!(
            serde_json::from_slice::<Value>(&resp.body().await).unwrap()["object"],
            "list"
        );
    }
    assert_eq!(fake.pending_replies(), 1);
    let events = one_event_per_chunk(&post(&fake, &json!({})).await.chunks().await);
    assert_eq!(delta(&events[1].1)["content"], "queued");
    assert_eq!(fake.request_count(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_connections_and_wait_for_requests() {
    let fake = std::sync::Arc::new(FakeProvider::start().await.unwrap());
    for _ in 0..8 {
        fake.push(
            openai::Builder::new()
                .text("c")
                .pause(Duration::from_millis(100))
                .build(),
        );
    }
    let mut tasks = Vec::new();
    for i in 0..8 {
        let fake = std::sync::Arc::clone(&fake);
        tasks.push(tokio::spawn(async move {
            let mut resp = post(&fake, &json!({ "i": i })).await;
            resp.chunks().await.len()
        }));
    }
    let waiter = std::sync::Arc::clone(&fake);
    let all = tokio::task::spawn_blocking(move || waiter.wait_for_requests(8))
        .await
        .unwrap();
    assert_eq!(all.len(), 8);
    for task in tasks {
        assert_eq!(task.await.unwrap(), 4, "role, text, finish, [DONE]");
    }
}

#[test]
fn start_blocking_serves_sync_std_clients() {
    use std::io::{Read, Write};
    let fake = FakeProvider::start_blocking().unwrap();
    fake.push(openai::text(&["sync"]));
    let mut stream = std::net::TcpStream::connect(fake.addr()).unwrap();
    stream
        .write_all(&post_bytes(
            "/v1/chat/completions",
            &json!({"sync": true}),
            "",
        ))
        .unwrap();
    let recorded = fake.wait_for_requests(1);
    assert_eq!(recorded[0].body, json!({"sync": true}));
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8(raw).unwrap();
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"));
    assert!(text.contains("\r\ntransfer-encoding: chunked\r\n"));
    assert!(text.contains(r#"{"content":"sync"}"#));
    assert!(text.ends_with("data: [DONE]\n\n\r\n0\r\n\r\n"));
    assert!(
        fake.try_wait_for_requests(2, Duration::from_millis(20))
            .is_none()
    );
    let addr = fake.addr();
    drop(fake);
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "listener closed on drop"
    );
}

#[test]
fn split_evenly_pieces() {
    use crate::split_evenly;
    assert_eq!(split_evenly("abcdefg", 3), ["abc", "de", "fg"]);
    assert_eq!(split_evenly("ab", 5), ["a", "b"]);
    assert_eq!(split_evenly("", 3), [""]);
    assert_eq!(split_evenly("héllo", 0), ["héllo"]);
    assert_eq!(split_evenly("ééé", 3), ["é", "é", "é"]);
}

#[tokio::test]
async fn script_format_round_trip() {
    let script = Script::parse(
        r#"[
          {"openai": [{"text":"Hello"},
                      {"tool_call":{"id":"call_1","name":"bash","arguments":"{\"command\":\"echo hi\"}","split":3}},
                      {"finish":"tool_calls"}]},
          {"openai": [{"text":"Done."},{"finish":"stop"}]},
          {"anthropic": [{"thinking":"hm"},{"text":"Hi"},
                         {"tool_use":{"id":"toolu_1","name":"bash","arguments":{"command":"ls"},"split":2}},
                         {"usage":{"input":3,"output":4}},{"stop_reason":"tool_use"}, "ping"]},
          {"status": 500, "body": {"error": {"message": "boom"}}},
          {"status": 429, "headers": {"retry-after": 1}},
          {"openai": [{"text":"x"}, "stall"], "fragment": 16}
        ]"#,
    )
    .unwrap();
    assert_eq!(script.replies.len(), 6);
    let fake = FakeProvider::start().await.unwrap();
    script.apply(&fake);

    let events = one_event_per_chunk(&post(&fake, &json!({})).await.chunks().await);
    let args: String = events[3..6]
        .iter()
        .map(|(_, v)| {
            delta(v)["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(args, r#"{"command":"echo hi"}"#);
    assert_eq!(delta(&events[2].1)["tool_calls"][0]["id"], "call_1");
    assert_eq!(events[6].1["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(events[7].1, "[DONE]");

    let events = one_event_per_chunk(&post(&fake, &json!({})).await.chunks().await);
    assert_eq!(delta(&events[1].1)["content"], "Done.");

    let events = one_event_per_chunk(&post(&fake, &json!({})).await.chunks().await);
    let partial: String = events
        .iter()
        .filter(|(_, v)| v["delta"]["type"] == "input_json_delta")
        .map(|(_, v)| v["delta"]["partial_json"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(partial, r#"{"command":"ls"}"#);
    assert_eq!(
        events
            .iter()
            .filter(|(n, _)| n.as_deref() == Some("ping"))
            .count(),
        2
    );

    let mut resp = post(&fake, &json!({})).await;
    assert_eq!(resp.status, 500);
    assert_eq!(
        serde_json::from_slice::<Value>(&resp.body().await).unwrap()["error"]["message"],
        "boom"
    );
    let mut resp = post(&fake, &json!({})).await;
    assert_eq!((resp.status, resp.header("retry-after")), (429, Some("1")));
    assert!(resp.body().await.is_empty());

    let mut resp = post(&fake, &json!({})).await;
    let mut got = Vec::new();
    while let Ok(Ok(Some(chunk))) = timeout(Duration::from_millis(200), resp.next_chunk()).await {
        assert!(chunk.len() <= 16);
        got.extend(chunk);
    }
    assert!(String::from_utf8(got).unwrap().contains(r#""content":"x""#));
    assert!(!resp.ended);
}

#[test]
fn script_errors_are_reported() {
    for (bad, needle) in [
        ("{", "not JSON"),
        (r#"[{"openai": [{"txt": "x"}]}]"#, "reply 0"),
        (r#"[{"openai": [], "anthropic": []}]"#, "not both"),
        (r#"[{"headers": {}}]"#, "needs"),
        (r#"{"replies": [], "extra": 1}"#, "extra"),
        (r#"[{"openai": [], "body": {}}]"#, "body"),
    ] {
        let err = Script::parse(bad).unwrap_err().to_string();
        assert!(err.contains(needle), "{bad}: {err}");
    }
    let script = Script::parse(
        r#"{"replies": [{"status": 200, "body": {}}],
            "routes": [{"method": "GET", "path": "/v1/models", "reply": {"status": 200, "body": {"data": []}}}]}"#,
    )
    .unwrap();
    assert_eq!((script.replies.len(), script.routes.len()), (1, 1));
}

#[test]
fn a_script_op_error_names_what_is_wrong_with_it() {
    let error = |script: &str| Script::parse(script).unwrap_err().to_string();
    // A name no stream knows: every name it could have been.
    let unknown = error(r#"[{"openai": [{"txt": "x"}]}]"#);
    assert!(
        unknown.contains("`no_done`") && unknown.contains("`raw_line`"),
        "{unknown}"
    );
    // A known name, its format's own or one every stream has, with a bad value: the value.
    for bad in [
        r#"[{"anthropic": [{"raw_line": 3}]}]"#,
        r#"[{"anthropic": [{"text": 3}]}]"#,
    ] {
        assert!(
            error(bad).ends_with("reply 0: invalid type: integer `3`, expected a string"),
            "{bad}: {}",
            error(bad)
        );
    }
}

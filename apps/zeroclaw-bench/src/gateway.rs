//! The gateway scenario's tools (the scenario is `scenarios/gateway.rs`): clients for its
//! WebSocket (`/rpc`), REST (`GET /api/v1/status`) and SSE, and the floor they are measured
//! against: the same stack with nothing behind it (a minimal axum WebSocket echo server
//! and a handler answering a fixed `status`-sized body, this binary in
//! `--gateway-floor-server` mode, a separate process like the daemon).

use futures_util::{SinkExt, StreamExt};
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

const HANG_GUARD: Duration = Duration::from_secs(30);

/// A body the size of the daemon's `status` answer.
const FLOOR_STATUS: &str = r#"{"serverVersion":"0.1.0","protocolVersion":1,"pid":1,"uptimeMs":1000,"endpoint":"/tmp/zcb-xxxxxx/cfg/data/daemon.sock","dataDir":"/tmp/zcb-xxxxxx/cfg/data","ephemeral":false,"clients":1,"sessions":{"total":0,"running":0},"gateway":{"url":"http://127.0.0.1:40000","tls":false}}"#;

/// `--gateway-floor-server FILE`: serve the floor on 127.0.0.1:0 and write its port to FILE.
pub fn serve_floor(port_file: &Path) -> ExitCode {
    use axum::extract::ws::{WebSocket, WebSocketUpgrade};
    use axum::routing::get;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(_) => return ExitCode::FAILURE,
    };
    runtime.block_on(async move {
        async fn echo(mut socket: WebSocket) {
            while let Some(Ok(message)) = socket.recv().await {
                if matches!(message, axum::extract::ws::Message::Text(_))
                    && socket.send(message).await.is_err()
                {
                    return;
                }
            }
        }
        let app = axum::Router::new()
            .route(
                "/rpc",
                get(|ws: WebSocketUpgrade| async move { ws.on_upgrade(echo) }),
            )
            .route(
                "/api/v1/status",
                get(|| async { ([("content-type", "application/json")], FLOOR_STATUS) }),
            );
        let Ok(listener) = tokio::net::TcpListener::bind("127.0.0.1:0").await else {
            return ExitCode::FAILURE;
        };
        let Ok(addr) = listener.local_addr() else {
            return ExitCode::FAILURE;
        };
        if std::fs::write(port_file, addr.port().to_string()).is_err() {
            return ExitCode::FAILURE;
        }
        match axum::serve(listener, app).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        }
    })
}

fn guard(what: &str) -> impl FnOnce(tokio::time::error::Elapsed) -> io::Error + '_ {
    move |_| {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!("{what}: no answer within {HANG_GUARD:?}"),
        )
    }
}

/// A WebSocket to `url` (`ws://…/rpc`), initialized when `token` is given (the daemon).
pub async fn connect(url: &str, token: Option<&str>) -> io::Result<Ws> {
    let mut request = url.into_client_request().map_err(io::Error::other)?;
    if let Some(token) = token {
        let value = format!("Bearer {token}")
            .parse()
            .map_err(io::Error::other)?;
        request.headers_mut().insert("authorization", value);
    }
    let (mut ws, _) = tokio_tungstenite::connect_async(request)
        .await
        .map_err(io::Error::other)?;
    if token.is_some() {
        ws.send(Message::text(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#,
        ))
        .await
        .map_err(io::Error::other)?;
        next_text(&mut ws).await?;
    }
    Ok(ws)
}

async fn next_text(ws: &mut Ws) -> io::Result<usize> {
    loop {
        let message = tokio::time::timeout(HANG_GUARD, ws.next())
            .await
            .map_err(guard("websocket"))?;
        match message {
            Some(Ok(Message::Text(text))) => return Ok(text.len()),
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(io::Error::other(e)),
            None => return Err(io::ErrorKind::UnexpectedEof.into()),
        }
    }
}

fn status_request(id: usize) -> Message {
    Message::text(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"status"}}"#
    ))
}

/// `n` sequential `status` calls after `warmup`: each round trip in ns.
pub async fn round_trips(ws: &mut Ws, warmup: usize, n: usize) -> io::Result<Vec<u64>> {
    let mut out = Vec::with_capacity(n);
    for i in 0..warmup + n {
        let started = Instant::now();
        ws.send(status_request(i + 1))
            .await
            .map_err(io::Error::other)?;
        next_text(ws).await?;
        if i >= warmup {
            out.push(u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX));
        }
    }
    Ok(out)
}

/// `total` `status` calls with `depth` in flight: requests per second.
pub async fn pipelined(ws: &mut Ws, total: usize, depth: usize) -> io::Result<f64> {
    let started = Instant::now();
    let (mut sent, mut received) = (0usize, 0usize);
    while sent < depth.min(total) {
        sent += 1;
        ws.feed(status_request(sent))
            .await
            .map_err(io::Error::other)?;
    }
    ws.flush().await.map_err(io::Error::other)?;
    while received < total {
        next_text(ws).await?;
        received += 1;
        if sent < total {
            sent += 1;
            ws.send(status_request(sent))
                .await
                .map_err(io::Error::other)?;
        }
    }
    Ok(total as f64 / started.elapsed().as_secs_f64())
}

/// `total` `GET /api/v1/status` over `connections` keep-alive connections: requests per second.
pub async fn rest_status(
    url: &str,
    token: &str,
    total: usize,
    connections: usize,
) -> io::Result<f64> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(connections)
        .build()
        .map_err(io::Error::other)?;
    let url = format!("{url}/api/v1/status");
    let started = Instant::now();
    let per = total.div_ceil(connections.max(1));
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (client, url, token) = (client.clone(), url.clone(), token.to_owned());
        tasks.push(tokio::spawn(async move {
            for _ in 0..per {
                let response = client
                    .get(&url)
                    .bearer_auth(&token)
                    .send()
                    .await
                    .map_err(io::Error::other)?;
                if !response.status().is_success() {
                    return Err(io::Error::other(format!("status {}", response.status())));
                }
                response.bytes().await.map_err(io::Error::other)?;
            }
            Ok::<_, io::Error>(())
        }));
    }
    for task in tasks {
        task.await
            .map_err(io::Error::other)?
            .map_err(io::Error::other)?;
    }
    Ok((per * connections) as f64 / started.elapsed().as_secs_f64())
}

/// A new session made over REST (so no socket connection is attached to it): its id.
pub async fn rest_new_session(url: &str, token: &str, cwd: &str) -> io::Result<String> {
    let response = reqwest::Client::new()
        .post(format!("{url}/api/v1/sessions"))
        .bearer_auth(token)
        .json(&serde_json::json!({ "cwd": cwd }))
        .send()
        .await
        .map_err(io::Error::other)?;
    let created: serde_json::Value = response.json().await.map_err(io::Error::other)?;
    created["sessionId"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| io::Error::other(format!("POST /api/v1/sessions answered {created}")))
}

/// A prompt over SSE that streams `expected` chunks: chunks per second at the client.
pub async fn sse_prompt(url: &str, token: &str, session: &str, expected: usize) -> io::Result<f64> {
    let response = reqwest::Client::new()
        .post(format!("{url}/api/v1/sessions/{session}/prompt"))
        .bearer_auth(token)
        .header("accept", "text/event-stream")
        .body(r#"{"prompt":"stream please"}"#)
        .send()
        .await
        .map_err(io::Error::other)?;
    let mut body = response.bytes_stream();
    let mut pending: Vec<u8> = Vec::new();
    let (mut chunks, mut first, mut last) = (0usize, None, Instant::now());
    let needle = br#""type":"agent_message_chunk""#;
    let finder = memchr::memmem::Finder::new(needle);
    let mut done = false;
    while let Some(bytes) = tokio::time::timeout(HANG_GUARD, body.next())
        .await
        .map_err(guard("sse"))?
    {
        pending.extend_from_slice(&bytes.map_err(io::Error::other)?);
        let mut consumed = 0;
        while let Some(end) = memchr::memmem::find(&pending[consumed..], b"\n\n") {
            let event = &pending[consumed..consumed + end];
            if finder.find(event).is_some() {
                last = Instant::now();
                first.get_or_insert(last);
                chunks += 1;
            } else if event.starts_with(b"event: result") || event.starts_with(b"event: error") {
                done = true;
            }
            consumed += end + 2;
        }
        pending.drain(..consumed);
        if done {
            break;
        }
    }
    if chunks != expected {
        return Err(io::Error::other(format!(
            "{chunks} of {expected} chunks reached the SSE client"
        )));
    }
    let span = first.map_or(0.0, |f| (last - f).as_secs_f64());
    Ok(if span > 0.0 {
        (chunks - 1) as f64 / span
    } else {
        0.0
    })
}

/// `n` idle WebSockets (initialized for the daemon).
pub async fn open_many(url: &str, token: Option<&str>, n: usize) -> io::Result<Vec<Ws>> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(connect(url, token).await?);
    }
    Ok(out)
}

/// The floor's address, once it has written its port file.
pub async fn floor_addr(port_file: &Path) -> io::Result<SocketAddr> {
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        if let Ok(text) = std::fs::read_to_string(port_file)
            && let Ok(port) = text.trim().parse::<u16>()
        {
            return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
        }
        if Instant::now() > deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the gateway floor did not start",
            ));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

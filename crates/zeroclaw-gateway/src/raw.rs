//! A raw in-process connection for the SSE routes: NDJSON read one frame at a time, only
//! as fast as the HTTP client takes the events. The client library would read the
//! connection eagerly into its per-session buffer and drop what overflows it; read this
//! way, a slow HTTP client fills the connection's queue and the daemon applies the socket's
//! overflow rule to it (a turn waits for a lagging client, then lets it go), so nothing is
//! lost silently and memory stays bounded.

use crate::auth::{App, Authed};
use crate::errors::ApiError;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::io;
use std::time::Duration;
use tokio::io::{AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};
use zeroclaw_protocol::PROTOCOL_VERSION;
use zeroclaw_rpc::codec::{Frame, FrameReader};
use zeroclaw_rpc::{CallError, RpcError};

/// How long a call made before the stream starts may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

pub struct RawConn {
    reader: FrameReader<ReadHalf<DuplexStream>>,
    writer: WriteHalf<DuplexStream>,
    next_id: u64,
}

/// One frame from the daemon, read as far as the SSE routes need.
pub enum Incoming {
    /// The params of a `session/update`, as sent.
    Update(Box<RawValue>),
    /// The answer to our request `id`.
    Answer {
        id: u64,
        outcome: Result<Box<RawValue>, RpcError>,
    },
    /// Anything else (another notification, a request the daemon makes of us).
    Other,
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    params: Option<Box<RawValue>>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<RpcError>,
}

impl RawConn {
    /// Opens an in-process connection for the caller's token and completes `initialize`.
    pub async fn open(app: &App, authed: &Authed) -> Result<Self, ApiError> {
        let label = format!("http:{},token={}", authed.remote, authed.principal.name);
        let stream = app
            .backend
            .connect(&authed.principal, label)
            .ok_or_else(|| ApiError::unavailable("the daemon is stopping"))?;
        let (read, writer) = tokio::io::split(stream);
        let mut conn = Self {
            reader: FrameReader::new(read, app.max_frame_bytes),
            writer,
            next_id: 0,
        };
        conn.call(
            "initialize",
            serde_json::json!({"protocolVersion": PROTOCOL_VERSION, "clientInfo": {"name": "zeroclaw-gateway"}}),
        )
        .await?;
        Ok(conn)
    }

    /// Sends a request; returns its id.
    pub async fn send(&mut self, method: &str, params: Value) -> io::Result<u64> {
        self.next_id += 1;
        let mut line = serde_json::to_vec(&serde_json::json!({
            "jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params
        }))?;
        line.push(b'\n');
        self.writer.write_all(&line).await?;
        Ok(self.next_id)
    }

    /// The next frame; `None` when the daemon closed the connection.
    pub async fn next(&mut self) -> io::Result<Option<Incoming>> {
        loop {
            let Some(frame) = self.reader.next_frame().await? else {
                return Ok(None);
            };
            let Frame::Line(line) = frame else {
                continue;
            };
            let Ok(envelope) = serde_json::from_slice::<Envelope>(&line) else {
                continue;
            };
            return Ok(Some(match envelope {
                Envelope {
                    method: Some(method),
                    id: None,
                    params: Some(params),
                    ..
                } if method == zeroclaw_protocol::events::SESSION_UPDATE => {
                    Incoming::Update(params)
                }
                Envelope {
                    method: None,
                    id: Some(id),
                    result,
                    error,
                    ..
                } => {
                    let Some(id) = id.as_u64() else {
                        continue;
                    };
                    let outcome = match (result, error) {
                        (_, Some(error)) => Err(error),
                        (Some(result), None) => Ok(result),
                        (None, None) => continue,
                    };
                    Incoming::Answer { id, outcome }
                }
                _ => Incoming::Other,
            }));
        }
    }

    /// A call before the stream starts: its result (other frames meanwhile are dropped).
    pub async fn call(&mut self, method: &str, params: Value) -> Result<Box<RawValue>, ApiError> {
        let answer = async {
            let id = self.send(method, params).await?;
            loop {
                match self.next().await? {
                    None => return Ok::<_, io::Error>(Err(CallError::Closed)),
                    Some(Incoming::Answer { id: got, outcome }) if got == id => {
                        return Ok(outcome.map_err(CallError::Rpc));
                    }
                    Some(_) => {}
                }
            }
        };
        match tokio::time::timeout(CALL_TIMEOUT, answer).await {
            Err(_) => Err(CallError::Timeout(CALL_TIMEOUT).into()),
            Ok(Err(e)) => Err(ApiError::unavailable(format!(
                "the daemon's connection failed: {e}"
            ))),
            Ok(Ok(outcome)) => outcome.map_err(ApiError::from),
        }
    }
}

//! The floor: the least a JSON-RPC server over NDJSON on a Unix socket can do. It runs as a
//! child process of the bench (this binary with `--floor-server SOCKET`), on a multi-thread
//! tokio runtime like the daemon's, one task per connection.
//!
//! Per connection: read what has arrived, and for every complete line parse it with
//! serde_json into a `Value` and append `{"jsonrpc":"2.0","result":{},"id":<id>}` to the
//! output; write the output once the buffered lines are used up. No validation, no dispatch,
//! no handshake. One exception, for the streaming floor: a request with method
//! `bench/stream` and params `{n, text, sessionId, turnId}` is answered with `n`
//! `session/update` notifications shaped and sized like the daemon's `agent_message_chunk`
//! events (each built as a `Value` and serialised; the first written at once, the rest in
//! 64 KiB writes as fast as the socket takes them), then the usual answer.

use serde_json::{Value, json};
use std::path::Path;
use std::process::ExitCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};

const READ_CHUNK: usize = 4 * 1024;
const WRITE_CHUNK: usize = 64 * 1024;

pub fn serve(socket: &Path) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("floor: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        let _ = std::fs::remove_file(socket);
        let listener = UnixListener::bind(socket)?;
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    eprintln!("floor: accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
            };
            tokio::spawn(async move {
                let _ = connection(stream).await;
            });
        }
        #[allow(unreachable_code)]
        Ok::<(), std::io::Error>(())
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("floor: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn connection(mut stream: UnixStream) -> std::io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    let mut out: Vec<u8> = Vec::new();
    loop {
        buf.reserve(READ_CHUNK);
        if stream.read_buf(&mut buf).await? == 0 {
            return Ok(());
        }
        let mut start = 0;
        while let Some(i) = memchr::memchr(b'\n', &buf[start..]) {
            let line = &buf[start..start + i];
            start += i + 1;
            let Ok(request) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if request.get("method").and_then(Value::as_str) == Some("bench/stream") {
                stream_chunks(&mut stream, &mut out, &request).await?;
            }
            answer(&mut out, request.get("id").unwrap_or(&Value::Null));
        }
        buf.drain(..start);
        if !out.is_empty() {
            stream.write_all(&out).await?;
            out.clear();
        }
        if out.capacity() > WRITE_CHUNK {
            out = Vec::new();
        }
    }
}

fn answer(out: &mut Vec<u8>, id: &Value) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"result\":{},\"id\":");
    // Serialising a Value into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, id);
    out.extend_from_slice(b"}\n");
}

async fn stream_chunks(
    stream: &mut UnixStream,
    out: &mut Vec<u8>,
    request: &Value,
) -> std::io::Result<()> {
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    let n = params.get("n").and_then(Value::as_u64).unwrap_or(0);
    let text = params.get("text").and_then(Value::as_str).unwrap_or("");
    let session = params
        .get("sessionId")
        .and_then(Value::as_str)
        .unwrap_or("");
    let turn = params.get("turnId").and_then(Value::as_str).unwrap_or("");
    for i in 0..n {
        let frame = json!({
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": session,
                "turnId": turn,
                "type": "agent_message_chunk",
                "text": text,
            },
        });
        let _ = serde_json::to_writer(&mut *out, &frame);
        out.push(b'\n');
        // The first line goes out at once (time to first chunk); the rest in big writes.
        if i == 0 || out.len() >= WRITE_CHUNK {
            stream.write_all(out).await?;
            out.clear();
        }
    }
    Ok(())
}

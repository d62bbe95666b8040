//! The hand-written HTTP/1.1 side: accept loop, request parsing, reply
//! writing. One request per connection (`connection: close`).

use std::io;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::{Recorded, Reply, Step};

/// Cap on the request line plus headers.
const MAX_HEAD: usize = 1024 * 1024;
/// Cap on a request body.
const MAX_BODY: usize = 256 * 1024 * 1024;
/// How long to wait for the client to close after a complete response.
const LINGER: Duration = Duration::from_secs(2);

/// Resolves once shutdown is signalled (or the handle is gone).
async fn shutdown_signal(mut rx: watch::Receiver<bool>) {
    let _ = rx.wait_for(|stop| *stop).await;
}

/// What answers each request the server reads: the provider's handle (`provider.rs`), which
/// records it and picks its reply. The server knows it only by this, so it stays a server.
pub(crate) trait Replies: Send + Sync + 'static {
    /// Records `request` and gives the reply to write.
    fn reply_to(&self, request: Recorded) -> Reply;
}

/// The accept loop; returns on shutdown. One task per connection.
pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<impl Replies>,
    rx: watch::Receiver<bool>,
) {
    let stop = shutdown_signal(rx.clone());
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    let shared = Arc::clone(&shared);
                    let rx = rx.clone();
                    tokio::spawn(async move {
                        tokio::select! {
                            () = shutdown_signal(rx) => {}
                            _ = handle(stream, shared) => {}
                        }
                    });
                }
                // E.g. EMFILE: back off a little instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
        }
    }
}

enum BadRequest {
    /// The client went away before sending a whole request.
    Gone,
    TooLarge(&'static str),
    Malformed(String),
}

impl From<io::Error> for BadRequest {
    fn from(_: io::Error) -> Self {
        BadRequest::Gone
    }
}

async fn handle(mut stream: TcpStream, shared: Arc<impl Replies>) -> io::Result<()> {
    // Each Step::Send must leave as its own segment: no Nagle coalescing.
    let _ = stream.set_nodelay(true);
    let reply = match read_request(&mut stream).await {
        Ok(request) => shared.reply_to(request),
        Err(BadRequest::Gone) => return Ok(()),
        Err(BadRequest::TooLarge(what)) => Reply::status(
            if what == "head" { 431 } else { 413 },
            json!({ "error": { "message": format!("fake provider: request {what} too large"), "type": "invalid_request_error" } }),
        ),
        Err(BadRequest::Malformed(why)) => Reply::status(
            400,
            json!({ "error": { "message": format!("fake provider: bad request: {why}"), "type": "invalid_request_error" } }),
        ),
    };
    write_reply(stream, reply).await
}

/// Reads one request: head (≤ [`MAX_HEAD`]) and a `Content-Length` or
/// chunked body.
async fn read_request(stream: &mut TcpStream) -> Result<Recorded, BadRequest> {
    let mut reader = BufReader::new(stream);

    // Request line, skipping stray empty lines before it (RFC 9112 §2.2).
    let mut head_len = 0usize;
    let request_line = loop {
        let line = read_line(&mut reader, &mut head_len, MAX_HEAD, "head").await?;
        if !line.is_empty() {
            break line;
        }
    };
    let mut parts = request_line.split_whitespace();
    let (Some(method), Some(path), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(BadRequest::Malformed(format!(
            "request line {request_line:?}"
        )));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(BadRequest::Malformed(format!("version {version:?}")));
    }
    let (method, path) = (method.to_owned(), path.to_owned());

    let mut headers = Vec::new();
    loop {
        let line = read_line(&mut reader, &mut head_len, MAX_HEAD, "head").await?;
        if line.is_empty() {
            break;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(BadRequest::Malformed(format!("header line {line:?}")));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };

    if header("expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
        let raw = reader.get_mut();
        raw.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
        raw.flush().await?;
    }

    let chunked = header("transfer-encoding").is_some_and(|v| {
        v.split(',')
            .any(|coding| coding.trim().eq_ignore_ascii_case("chunked"))
    });
    let raw_body = if chunked {
        read_chunked_body(&mut reader).await?
    } else if let Some(len) = header("content-length") {
        let len: usize = len
            .parse()
            .map_err(|_| BadRequest::Malformed(format!("content-length {len:?}")))?;
        if len > MAX_BODY {
            return Err(BadRequest::TooLarge("body"));
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body).await?;
        body
    } else {
        Vec::new()
    };

    let body = if raw_body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&raw_body).unwrap_or(Value::Null)
    };
    Ok(Recorded {
        method,
        path,
        headers,
        body,
        raw_body,
    })
}

/// Reads one line (without its `\r\n` or `\n`), counting it against `cap`.
async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    used: &mut usize,
    cap: usize,
    what: &'static str,
) -> Result<String, BadRequest> {
    let mut line = Vec::new();
    let budget = (cap.saturating_sub(*used) + 1) as u64;
    let n = (&mut *reader)
        .take(budget)
        .read_until(b'\n', &mut line)
        .await?;
    *used += n;
    if *used > cap {
        return Err(BadRequest::TooLarge(what));
    }
    if line.last() != Some(&b'\n') {
        return Err(BadRequest::Gone);
    }
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(String::from_utf8_lossy(&line).into_owned())
}

/// Decodes a `Transfer-Encoding: chunked` body (extensions and trailers are
/// accepted and ignored).
async fn read_chunked_body<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
) -> Result<Vec<u8>, BadRequest> {
    let mut body = Vec::new();
    let mut meta = 0usize;
    loop {
        let line = read_line(reader, &mut meta, MAX_HEAD, "head").await?;
        let size_hex = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_hex, 16)
            .map_err(|_| BadRequest::Malformed(format!("chunk size {line:?}")))?;
        if size == 0 {
            // Trailer section up to the empty line.
            while !read_line(reader, &mut meta, MAX_HEAD, "head")
                .await?
                .is_empty()
            {}
            return Ok(body);
        }
        if body.len() + size > MAX_BODY {
            return Err(BadRequest::TooLarge("body"));
        }
        let at = body.len();
        body.resize(at + size, 0);
        reader.read_exact(&mut body[at..]).await?;
        let end = read_line(reader, &mut meta, MAX_HEAD, "head").await?;
        if !end.is_empty() {
            return Err(BadRequest::Malformed("chunk not followed by CRLF".into()));
        }
    }
}

/// Writes the head, then runs the steps.
async fn write_reply(mut stream: TcpStream, reply: Reply) -> io::Result<()> {
    let chunked = reply.header("content-length").is_none();
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        reply.status,
        reason_phrase(reply.status)
    );
    if reply.header("content-type").is_none() {
        head.push_str("content-type: text/event-stream\r\n");
    }
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if reply.header("cache-control").is_none() {
        head.push_str("cache-control: no-cache\r\n");
    }
    if reply.header("connection").is_none() {
        head.push_str("connection: close\r\n");
    }
    if chunked && reply.header("transfer-encoding").is_none() {
        head.push_str("transfer-encoding: chunked\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    stream.flush().await?;

    for step in reply.steps {
        match step {
            Step::Send(bytes) if bytes.is_empty() => {}
            Step::Send(bytes) => {
                if chunked {
                    let mut frame = Vec::with_capacity(bytes.len() + 16);
                    frame.extend_from_slice(format!("{:x}\r\n", bytes.len()).as_bytes());
                    frame.extend_from_slice(&bytes);
                    frame.extend_from_slice(b"\r\n");
                    stream.write_all(&frame).await?;
                } else {
                    stream.write_all(&bytes).await?;
                }
                stream.flush().await?;
            }
            Step::Delay(pause) => tokio::time::sleep(pause).await,
            Step::WaitFor(gate) => gate.wait().await,
            Step::Stall => {
                // Hold the socket until the client closes it (or errors);
                // shutdown of the server cancels this task instead.
                drain(&mut stream).await;
                return Ok(());
            }
            Step::Reset => {
                stream.set_zero_linger()?;
                drop(stream);
                return Ok(());
            }
        }
    }
    if chunked {
        stream.write_all(b"0\r\n\r\n").await?;
        stream.flush().await?;
    }
    // Graceful close: FIN, then wait (bounded) for the client to close, so
    // unread input never turns our close into an RST.
    stream.shutdown().await?;
    let _ = tokio::time::timeout(LINGER, drain(&mut stream)).await;
    Ok(())
}

/// Reads and discards until EOF or an error.
async fn drain(stream: &mut TcpStream) {
    let mut buf = [0u8; 4096];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
    }
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Unknown",
    }
}

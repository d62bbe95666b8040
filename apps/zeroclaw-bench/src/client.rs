//! The one NDJSON client every measurement uses, against the daemon and the floor alike: a
//! Unix socket, a byte buffer split on `\n`, requests formatted by hand, and answers decoded
//! only as far as the bench needs (`id`, `method`, `params.type`, result or error).

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use std::borrow::Cow;
use std::io;
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

/// How long any single read may wait before the bench calls the answer lost.
pub const HANG_GUARD: Duration = Duration::from_secs(30);

/// The client's read buffer: one size for both targets.
const READ_BUF: usize = 64 * 1024;

/// Splits a byte stream into lines, returning each as a slice of its own buffer.
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Start of the unconsumed bytes.
    head: usize,
    /// End of the valid bytes.
    len: usize,
    /// Bytes from `head` already known to hold no `\n`.
    scanned: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            buf: vec![0; READ_BUF],
            head: 0,
            len: 0,
            scanned: 0,
        }
    }

    /// Whether a complete line is already buffered (no read needed to get it).
    pub fn has_line(&self) -> bool {
        memchr::memchr(b'\n', &self.buf[self.head + self.scanned..self.len]).is_some()
    }

    /// The next line without its `\n`; `None` at end of stream.
    pub async fn next_line(&mut self) -> io::Result<Option<&[u8]>> {
        loop {
            let from = self.head + self.scanned;
            if let Some(i) = memchr::memchr(b'\n', &self.buf[from..self.len]) {
                let start = self.head;
                let end = from + i;
                self.head = end + 1;
                self.scanned = 0;
                return Ok(Some(&self.buf[start..end]));
            }
            self.scanned = self.len - self.head;
            if self.head > 0 {
                self.buf.copy_within(self.head..self.len, 0);
                self.len -= self.head;
                self.head = 0;
            }
            if self.len == self.buf.len() {
                let bigger = self.buf.len() * 2;
                self.buf.resize(bigger, 0);
            }
            let n = tokio::time::timeout(HANG_GUARD, self.inner.read(&mut self.buf[self.len..]))
                .await
                .map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("nothing arrived within {HANG_GUARD:?}"),
                    )
                })??;
            if n == 0 {
                return Ok(None);
            }
            self.len += n;
        }
    }

    /// The next line, or an error at end of stream.
    pub async fn line(&mut self) -> io::Result<&[u8]> {
        self.next_line().await?.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            )
        })
    }
}

/// What the bench reads out of an incoming frame.
#[derive(Debug, Deserialize)]
pub struct Incoming<'a> {
    #[serde(default)]
    pub id: Option<Value>,
    #[serde(default, borrow)]
    pub method: Option<Cow<'a, str>>,
    #[serde(default)]
    pub result: Option<IgnoredAny>,
    #[serde(default)]
    pub error: Option<Value>,
    #[serde(default, borrow)]
    pub params: Option<Params<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct Params<'a> {
    #[serde(default, borrow, rename = "type")]
    pub kind: Option<Cow<'a, str>>,
}

impl Incoming<'_> {
    pub fn parse(line: &[u8]) -> io::Result<Incoming<'_>> {
        serde_json::from_slice(line).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("not a JSON-RPC frame ({e}): {}", preview(line)),
            )
        })
    }

    /// The numeric id of a response (a frame with `result` or `error` and no `method`).
    pub fn response_id(&self) -> Option<u64> {
        if self.method.is_some() {
            return None;
        }
        self.id.as_ref().and_then(Value::as_u64)
    }
}

pub fn preview(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(300)]).into_owned();
    if line.len() > 300 {
        format!("{text}…")
    } else {
        text
    }
}

/// Appends `{"jsonrpc":"2.0","method":M,"params":P,"id":N}\n`. `params` is raw JSON.
pub fn push_request(out: &mut Vec<u8>, method: &str, params: &str, id: u64) {
    use std::io::Write;
    // Writing into a Vec cannot fail.
    let _ = writeln!(
        out,
        "{{\"jsonrpc\":\"2.0\",\"method\":\"{method}\",\"params\":{params},\"id\":{id}}}"
    );
}

pub const INITIALIZE_PARAMS: &str =
    r#"{"protocolVersion":1,"clientInfo":{"name":"zeroclaw-bench","version":"0.1.0"}}"#;

/// One connection: a line reader on the read half, the write half, and an id counter.
pub struct Conn {
    pub reader: LineReader<OwnedReadHalf>,
    pub writer: OwnedWriteHalf,
    pub next_id: u64,
    out: Vec<u8>,
}

impl Conn {
    /// Connects, retrying while the listener's backlog is full.
    pub async fn connect(path: &Path) -> io::Result<Conn> {
        let mut tries = 0u32;
        let stream = loop {
            match UnixStream::connect(path).await {
                Ok(s) => break s,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && tries < 5_000 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("connect {}: {e}", path.display()),
                    ));
                }
            }
        };
        let (rd, wr) = stream.into_split();
        Ok(Conn {
            reader: LineReader::new(rd),
            writer: wr,
            next_id: 1,
            out: Vec::with_capacity(256),
        })
    }

    /// Connects and completes `initialize`.
    pub async fn open(path: &Path) -> io::Result<Conn> {
        let mut conn = Conn::connect(path).await?;
        conn.call_ok("initialize", INITIALIZE_PARAMS).await?;
        Ok(conn)
    }

    /// Sends one request; returns its id.
    pub async fn send(&mut self, method: &str, params: &str) -> io::Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        self.out.clear();
        push_request(&mut self.out, method, params, id);
        self.writer.write_all(&self.out).await?;
        Ok(id)
    }

    /// Sends one request and waits for its answer, which must be a result with its id.
    /// Frames without that id (notifications) in between are skipped.
    pub async fn call_ok(&mut self, method: &str, params: &str) -> io::Result<()> {
        let id = self.send(method, params).await?;
        self.expect_result(id, method).await
    }

    /// Reads until the response to `id`; fails on an error answer or a wrong id.
    pub async fn expect_result(&mut self, id: u64, method: &str) -> io::Result<()> {
        loop {
            let line = self.reader.line().await?;
            let msg = Incoming::parse(line)?;
            if msg.method.is_some() {
                continue;
            }
            return check_answer(&msg, id, method, line);
        }
    }

    /// Sends one request and returns its full result as a `Value` (set-up only, not timed).
    pub async fn call_value(&mut self, method: &str, params: &str) -> io::Result<Value> {
        let id = self.send(method, params).await?;
        loop {
            let line = self.reader.line().await?;
            let msg: Value = serde_json::from_slice(line).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{e}: {}", preview(line)),
                )
            })?;
            if msg.get("method").is_some() {
                continue;
            }
            if msg.get("id").and_then(Value::as_u64) != Some(id) {
                return Err(mismatch(method, id, line));
            }
            return match msg.get("result") {
                Some(result) => Ok(result.clone()),
                None => Err(io::Error::other(format!(
                    "`{method}` failed: {}",
                    preview(line)
                ))),
            };
        }
    }
}

pub fn check_answer(msg: &Incoming<'_>, id: u64, method: &str, line: &[u8]) -> io::Result<()> {
    if msg.response_id() != Some(id) {
        return Err(mismatch(method, id, line));
    }
    if msg.error.is_some() || msg.result.is_none() {
        return Err(io::Error::other(format!(
            "`{method}` (id {id}) was answered with an error: {}",
            preview(line)
        )));
    }
    Ok(())
}

fn mismatch(method: &str, id: u64, line: &[u8]) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "expected the answer to `{method}` id {id}, got: {}",
            preview(line)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn splits_lines_across_reads_and_grows_for_long_lines() {
        let (mut a, b) = tokio::io::duplex(7);
        let long = "x".repeat(3 * READ_BUF);
        let text = format!("{{\"id\":1}}\n\n{long}\nlast");
        let writer = tokio::spawn(async move {
            a.write_all(text.as_bytes()).await.unwrap();
        });
        let mut r = LineReader::new(b);
        assert_eq!(r.line().await.unwrap(), b"{\"id\":1}");
        assert_eq!(r.line().await.unwrap(), b"");
        assert_eq!(r.line().await.unwrap().len(), long.len());
        writer.await.unwrap();
        assert!(r.next_line().await.unwrap().is_none());
    }

    #[test]
    fn reads_responses_and_notifications() {
        let msg =
            Incoming::parse(br#"{"jsonrpc":"2.0","result":{"a":[1,{"b":2}]},"id":7}"#).unwrap();
        assert_eq!(msg.response_id(), Some(7));
        assert!(msg.result.is_some() && msg.error.is_none());
        let line = br#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","type":"agent_message_chunk","text":"a\"b"}}"#;
        let msg = Incoming::parse(line).unwrap();
        assert_eq!(msg.response_id(), None);
        assert_eq!(
            msg.params.and_then(|p| p.kind).as_deref(),
            Some("agent_message_chunk")
        );
        let msg = Incoming::parse(br#"{"jsonrpc":"2.0","error":{"code":-1,"message":"m"},"id":3}"#)
            .unwrap();
        assert!(check_answer(&msg, 3, "x", b"").is_err());
        let mut out = Vec::new();
        push_request(&mut out, "status", "{}", 9);
        assert_eq!(
            out,
            b"{\"jsonrpc\":\"2.0\",\"method\":\"status\",\"params\":{},\"id\":9}\n"
        );
    }
}

//! A raw NDJSON connection to the daemon: bytes in, frames out, in the order the daemon
//! sent them. `request` insists the very next frame is the answer, which is how the wire
//! tests prove that nothing else was sent; turns, whose events interleave with answers,
//! go through [`super::Client`].

use super::HANG_GUARD;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;

/// One end of a connection to the daemon, whatever the platform: a Unix socket, or a named
/// pipe opened the way Windows clients open one (`CreateFileW` on `\\.\pipe\NAME`, which is
/// what `File::open` calls). Both read and write the same NDJSON bytes.
#[cfg(unix)]
pub type Stream = std::os::unix::net::UnixStream;
#[cfg(windows)]
pub type Stream = std::fs::File;

/// Connects to the daemon's endpoint. Reads are hang-guarded where the OS has read
/// timeouts (sockets; a synchronous pipe handle has none).
pub fn open_stream(endpoint: &Path) -> std::io::Result<Stream> {
    #[cfg(unix)]
    {
        let stream = Stream::connect(endpoint)?;
        stream.set_read_timeout(Some(HANG_GUARD))?;
        Ok(stream)
    }
    #[cfg(windows)]
    {
        // ERROR_PIPE_BUSY: every instance is taken for an instant (another client just
        // connected, and the daemon is creating the next one); try again, hang-guarded.
        const ERROR_PIPE_BUSY: i32 = 231;
        let deadline = std::time::Instant::now() + HANG_GUARD;
        loop {
            match std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(endpoint)
            {
                Err(e)
                    if e.raw_os_error() == Some(ERROR_PIPE_BUSY)
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::yield_now()
                }
                other => return other,
            }
        }
    }
}

pub struct Conn {
    pub stream: Stream,
    reader: BufReader<Stream>,
    next_id: u64,
}

impl Conn {
    pub fn connect(endpoint: &Path) -> Self {
        let stream = open_stream(endpoint)
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", endpoint.display()));
        let reader = BufReader::new(stream.try_clone().unwrap());
        Self {
            stream,
            reader,
            next_id: 1000,
        }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    /// Sends `line` and a newline, in one write.
    pub fn send_line(&mut self, line: impl AsRef<[u8]>) {
        let mut bytes = line.as_ref().to_vec();
        bytes.push(b'\n');
        self.send_raw(&bytes);
    }

    pub fn send(&mut self, frame: &Value) {
        self.send_line(frame.to_string());
    }

    /// The next frame from the daemon, parsed.
    pub fn recv(&mut self) -> Value {
        let line = self
            .recv_line()
            .expect("connection closed while waiting for a frame");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("daemon sent invalid JSON {line:?}: {e}"))
    }

    /// The next raw line, or `None` at end of stream.
    pub fn recv_line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.reader.read_line(&mut line).unwrap() {
            0 => None,
            _ => {
                assert!(line.ends_with('\n'), "frame without newline: {line:?}");
                line.pop();
                Some(line)
            }
        }
    }

    /// Whether the daemon closed the connection (reads EOF).
    pub fn at_eof(&mut self) -> bool {
        let mut buf = [0u8; 1];
        matches!(self.reader.read(&mut buf), Ok(0))
    }

    /// Sends a request with a fresh numeric id; the next frame must be its answer.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params, "id": id}));
        let answer = self.recv();
        assert_eq!(answer["id"], json!(id), "answer for another id: {answer}");
        answer
    }

    /// Calls a method and returns its `result`, failing the test on an error.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let answer = self.request(method, params);
        assert!(answer.get("error").is_none(), "{method} failed: {answer}");
        answer["result"].clone()
    }

    pub fn initialize(&mut self) -> Value {
        self.call("initialize", json!({"protocolVersion": 1}))
    }
}

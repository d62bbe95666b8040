//! What the fake provider answers: a [`Reply`] (status, headers, the body as [`Step`]s),
//! and the tools to cut a body into pieces and pace them. The ready-made error answers
//! real providers give are in `error_replies.rs`.

use std::time::Duration;

use serde_json::Value;

use crate::Gate;

/// One step of writing a response body.
#[derive(Clone, Debug)]
pub enum Step {
    /// Write these bytes and flush. In a chunked reply they form exactly one
    /// HTTP chunk; an empty `Send` is skipped (an empty chunk would end the
    /// body).
    Send(Vec<u8>),
    /// Sleep this long before the next step.
    Delay(Duration),
    /// Wait until the test opens this [`Gate`].
    WaitFor(Gate),
    /// Stop sending (no terminating chunk) but keep the socket open until the
    /// client goes away or the [`FakeProvider`](crate::FakeProvider) is dropped.
    Stall,
    /// Close the TCP connection abruptly: `SO_LINGER` 0, then drop, so the
    /// client sees a connection reset (or an EOF) without the terminating
    /// chunk. Bytes still unsent in the kernel buffer are discarded, so put a
    /// [`Step::Delay`] before it if the client must see everything sent before.
    Reset,
}

/// A scripted HTTP response: status line, headers and body steps.
///
/// The server always adds `connection: close`, adds `cache-control: no-cache`
/// and `content-type: text/event-stream` unless given here, and adds
/// `transfer-encoding: chunked` unless a `content-length` header is given here
/// (then the [`Step::Send`] bytes are written raw and the value is not checked,
/// so a test may also declare more bytes than it sends).
#[derive(Clone, Debug)]
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// Extra response headers, written in this order with names as given.
    pub headers: Vec<(String, String)>,
    /// What to do after the head has been written.
    pub steps: Vec<Step>,
}

impl Reply {
    /// A reply with this status, no headers and an empty body.
    pub fn new(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            steps: Vec::new(),
        }
    }

    /// A `200 text/event-stream` reply made of these steps (chunked).
    pub fn sse(steps: Vec<Step>) -> Reply {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            steps,
        }
    }

    /// A plain JSON reply: `application/json` with a `content-length`, the
    /// body sent in one write. Use it for error answers (500, 429, 401, 404)
    /// and for non-streaming successes.
    pub fn status(code: u16, json_body: Value) -> Reply {
        let body = json_body.to_string().into_bytes();
        Reply {
            status: code,
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("content-length".into(), body.len().to_string()),
            ],
            steps: vec![Step::Send(body)],
        }
    }

    /// `200` with this JSON body; same as `Reply::status(200, body)`.
    pub fn json(body: Value) -> Reply {
        Reply::status(200, body)
    }

    /// Sets a header, replacing any existing one of the same name
    /// (case-insensitive).
    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Appends a step.
    pub fn with_step(mut self, step: Step) -> Reply {
        self.steps.push(step);
        self
    }

    /// The first header with this name (case-insensitive), if any.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Re-cuts every run of consecutive [`Step::Send`]s into sends of at most
    /// `max_bytes` bytes, so SSE events and even UTF-8 characters straddle
    /// chunk boundaries. Other steps stay where they were. Combine with
    /// [`Reply::paced`] to make sure the client reads the pieces separately.
    pub fn fragmented(mut self, max_bytes: usize) -> Reply {
        let max = max_bytes.max(1);
        let mut out = Vec::with_capacity(self.steps.len());
        let mut run: Vec<u8> = Vec::new();
        let flush = |run: &mut Vec<u8>, out: &mut Vec<Step>| {
            for piece in run.chunks(max) {
                out.push(Step::Send(piece.to_vec()));
            }
            run.clear();
        };
        for step in self.steps {
            match step {
                Step::Send(bytes) => run.extend_from_slice(&bytes),
                other => {
                    flush(&mut run, &mut out);
                    out.push(other);
                }
            }
        }
        flush(&mut run, &mut out);
        self.steps = out;
        self
    }

    /// Inserts a [`Step::Delay`] of `pause` after every [`Step::Send`] except
    /// the last step.
    pub fn paced(mut self, pause: Duration) -> Reply {
        let n = self.steps.len();
        let mut out = Vec::with_capacity(n * 2);
        for (i, step) in self.steps.into_iter().enumerate() {
            let is_send = matches!(step, Step::Send(_));
            out.push(step);
            if is_send && i + 1 < n {
                out.push(Step::Delay(pause));
            }
        }
        self.steps = out;
        self
    }
}

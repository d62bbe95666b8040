//! Test support for zeroclaw: a scripted **fake LLM provider**.
//!
//! [`FakeProvider`] is a real HTTP/1.1 server on `127.0.0.1` (random port by
//! default), hand-written on [`tokio::net::TcpListener`]. Integration tests start
//! it, queue scripted [`Reply`]s, point the daemon's provider config at
//! [`FakeProvider::base_url`] (`http://127.0.0.1:PORT/v1`) and afterwards inspect
//! what the daemon sent with [`FakeProvider::requests`].
//!
//! It speaks both streaming wire formats faithfully:
//!
//! * OpenAI-compatible Chat Completions (`data: {json}` lines and a final
//!   `data: [DONE]`) — see [`openai`];
//! * the Anthropic Messages API (`event: …` / `data: …` pairs) — see
//!   [`anthropic`].
//!
//! Every SSE event a builder produces is its own [`Step::Send`], written as its
//! own HTTP chunk and flushed (with `TCP_NODELAY`), so the client sees real
//! incremental delivery. Failure modes are first-class steps: [`Step::Stall`]
//! (stop sending, keep the socket open), [`Step::Reset`] (abortive close with a
//! TCP RST), [`Step::Delay`] and [`Step::WaitFor`] (pace the stream from the
//! test via a [`Gate`]).
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use zeroclaw_testkit::{FakeProvider, openai};
//!
//! let fake = FakeProvider::start().await?;
//! fake.push(openai::text(&["Hel", "lo"]));
//! fake.push(
//!     openai::Builder::new()
//!         .tool_call(0, "call_1", "bash", r#"{"command":"echo hi"}"#, 3)
//!         .build(),
//! );
//! // ... configure the daemon with fake.base_url() and drive it ...
//! let first = fake.next_request().await;
//! assert_eq!(first.path, "/v1/chat/completions");
//! # Ok(()) }
//! ```
//!
//! # Matching requests to replies
//!
//! Requests are answered strictly FIFO from the queue filled by
//! [`FakeProvider::push`], whatever their method or path. With nothing queued
//! the answer is `500` with the JSON body
//! `{"error":{"message":"fake provider: no scripted reply left",…}}`.
//! Fixed answers for side requests (e.g. `GET /v1/models`) can be installed with
//! [`FakeProvider::route`]; those do not consume the queue. Every request is
//! recorded before it is answered.
//!
//! # Response framing
//!
//! Streaming replies use `Transfer-Encoding: chunked`, which is what real
//! provider front-ends (OpenAI, Anthropic, Ollama, vLLM behind most proxies)
//! send and what reqwest/hyper decode natively. A chunked body also has an
//! explicit end (the `0\r\n\r\n` terminator), so a client can tell a clean end
//! of stream from a [`Step::Reset`] or from an early close. A reply whose
//! headers contain `content-length` (such as the ones built by
//! [`Reply::status`]) is instead written raw, exactly as the steps give it, like
//! real servers send small JSON error bodies. Every reply carries
//! `connection: close`; one request is served per connection.
//!
//! # The `fake-provider` binary
//!
//! `fake-provider [--port N] [--verbose] SCRIPT.json` serves a JSON script of
//! replies (format: [`script`]) for hand-driven transcripts. It prints
//! `listening on http://127.0.0.1:PORT/v1` to stdout, logs each request to
//! stderr and serves until killed.

#![warn(missing_docs)]

pub mod anthropic;
mod http;
pub mod openai;
pub mod script;
pub mod stream;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{Notify, watch};

/// How long [`FakeProvider::wait_for_requests`] and
/// [`FakeProvider::next_request`] wait before panicking: a guard against hung
/// tests, not a timing assertion.
pub const HANG_GUARD: Duration = Duration::from_secs(60);

/// The message of the `500` answer given when no scripted reply is left.
pub const NO_REPLY_LEFT: &str = "fake provider: no scripted reply left";

/// One HTTP request as the fake provider received it.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    /// Request method, as sent (`"POST"`).
    pub method: String,
    /// Request target as sent, including any query string
    /// (`"/v1/chat/completions"`).
    pub path: String,
    /// Headers in the order received; names lowercased, values trimmed.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON, or [`Value::Null`] when it is empty or not
    /// JSON (then see [`Recorded::raw_body`]).
    pub body: Value,
    /// The body bytes exactly as received (after de-chunking).
    pub raw_body: Vec<u8>,
}

impl Recorded {
    /// The first header with this name (case-insensitive), if any.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A one-shot latch a test opens to release a [`Step::WaitFor`].
///
/// Cheap to clone; all clones share the same state. Once opened it stays open,
/// so a step that reaches it later passes straight through.
#[derive(Clone, Debug)]
pub struct Gate {
    tx: Arc<watch::Sender<bool>>,
}

impl Default for Gate {
    fn default() -> Self {
        Self::new()
    }
}

impl Gate {
    /// A new, closed gate.
    pub fn new() -> Gate {
        Gate {
            tx: Arc::new(watch::Sender::new(false)),
        }
    }

    /// Opens the gate (idempotent). Callable from sync or async code.
    pub fn open(&self) {
        self.tx.send_replace(true);
    }

    /// Whether [`Gate::open`] has been called.
    pub fn is_open(&self) -> bool {
        *self.tx.borrow()
    }

    /// Waits until the gate is open.
    pub async fn wait(&self) {
        let mut rx = self.tx.subscribe();
        // The sender lives in `self`, so this cannot fail with "closed".
        let _ = rx.wait_for(|open| *open).await;
    }
}

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
    /// client goes away or the [`FakeProvider`] is dropped.
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

    /// `500` with an OpenAI-style error body.
    pub fn server_error() -> Reply {
        Reply::status(
            500,
            openai::error_body(
                "The server had an error while processing your request.",
                "server_error",
                None,
            ),
        )
    }

    /// `429` with an OpenAI-style rate-limit body and, if given, a
    /// `retry-after` header (seconds).
    pub fn rate_limited(retry_after_secs: Option<u64>) -> Reply {
        let reply = Reply::status(
            429,
            openai::error_body(
                "Rate limit reached for requests. Please try again later.",
                "requests",
                Some("rate_limit_exceeded"),
            ),
        );
        match retry_after_secs {
            Some(secs) => reply.with_header("retry-after", &secs.to_string()),
            None => reply,
        }
    }

    /// `401` with OpenAI's invalid-API-key body.
    pub fn unauthorized() -> Reply {
        Reply::status(
            401,
            openai::error_body(
                "Incorrect API key provided.",
                "invalid_request_error",
                Some("invalid_api_key"),
            ),
        )
    }

    /// OpenAI's refusal of a request longer than the model's context window (`limit` and
    /// `size` in bytes, reported as tokens at four bytes each).
    pub fn context_length_exceeded(limit: usize, size: usize) -> Reply {
        Reply::status(
            400,
            json!({"error": {
                "message": format!(
                    "This model's maximum context length is {} tokens. However, your messages resulted in {} tokens. Please reduce the length of the messages.",
                    limit / 4,
                    size / 4
                ),
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded"
            }}),
        )
    }

    /// `404` with OpenAI's unknown-model body:
    /// `{"error":{"message":"The model `x` does not exist","type":"invalid_request_error","code":"model_not_found"}}`.
    pub fn openai_model_not_found(model: &str) -> Reply {
        Reply::status(
            404,
            openai::error_body(
                &format!("The model `{model}` does not exist"),
                "invalid_request_error",
                Some("model_not_found"),
            ),
        )
    }

    /// `404` with Ollama's unknown-model body:
    /// `{"error":"model \"x\" not found, try pulling it first"}`.
    pub fn ollama_model_not_found(model: &str) -> Reply {
        Reply::status(
            404,
            json!({ "error": format!("model \"{model}\" not found, try pulling it first") }),
        )
    }

    /// The answer given when no scripted reply is left.
    fn no_reply_left() -> Reply {
        Reply::status(
            500,
            json!({
                "error": {
                    "message": NO_REPLY_LEFT,
                    "type": "fake_provider_error",
                    "code": "no_scripted_reply"
                }
            }),
        )
    }
}

/// Splits `s` into `n` pieces of as-equal-as-possible length in characters
/// (never inside a UTF-8 character). Fewer pieces come back when `s` has fewer
/// than `n` characters; an empty `s` (or `n == 0`) gives one empty piece.
pub fn split_evenly(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let n = n.clamp(1, chars.len().max(1));
    let base = chars.len() / n;
    let extra = chars.len() % n;
    let mut out = Vec::with_capacity(n);
    let mut at = 0;
    for i in 0..n {
        let len = base + usize::from(i < extra);
        out.push(chars[at..at + len].iter().collect());
        at += len;
    }
    out
}

#[derive(Default)]
struct State {
    queue: VecDeque<Reply>,
    routes: Vec<(String, String, Reply)>,
    requests: Vec<Recorded>,
    /// Index of the next request [`FakeProvider::next_request`] returns.
    cursor: usize,
    /// [`FakeProvider::limit_context`].
    context_limit: Option<usize>,
    /// [`FakeProvider::answer_when`]: (text the body contains, reply).
    body_routes: Vec<(String, Reply)>,
}

/// State shared between the handle and the server tasks.
#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    arrived: Condvar,
    notify: Notify,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records the request and picks its reply, atomically, so the FIFO order
    /// of replies is the order in which requests were recorded.
    fn record_and_take(&self, request: Recorded) -> Reply {
        let mut st = self.lock();
        let bare_path = request.path.split('?').next().unwrap_or_default();
        let routed = st
            .routes
            .iter()
            .find(|(m, p, _)| m.eq_ignore_ascii_case(&request.method) && p == bare_path)
            .map(|(_, _, r)| r.clone());
        let too_long = st
            .context_limit
            .filter(|limit| request.raw_body.len() > *limit)
            .map(|limit| Reply::context_length_exceeded(limit, request.raw_body.len()));
        let by_body = st
            .body_routes
            .iter()
            .find(|(needle, _)| {
                let needle = needle.as_bytes();
                request.raw_body.windows(needle.len()).any(|w| w == needle)
            })
            .map(|(_, r)| r.clone());
        let reply = routed
            .or(too_long)
            .or(by_body)
            .or_else(|| st.queue.pop_front())
            .unwrap_or_else(Reply::no_reply_left);
        st.requests.push(request);
        drop(st);
        self.arrived.notify_all();
        self.notify.notify_waiters();
        reply
    }
}

/// A running fake provider. Dropping it stops the server: the listener closes
/// and every open connection (including stalled ones) is closed.
pub struct FakeProvider {
    shared: Arc<Shared>,
    addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    /// The server thread of [`FakeProvider::start_blocking`].
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for FakeProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeProvider")
            .field("addr", &self.addr)
            .field("own_thread", &self.thread.is_some())
            .finish_non_exhaustive()
    }
}

impl FakeProvider {
    /// Starts the server on `127.0.0.1` with a random port, serving on the
    /// current tokio runtime. Fails if called outside a runtime.
    pub async fn start() -> std::io::Result<FakeProvider> {
        Self::start_on(0).await
    }

    /// Like [`FakeProvider::start`] but on a given port (`0` = random).
    pub async fn start_on(port: u16) -> std::io::Result<FakeProvider> {
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|e| std::io::Error::other(format!("FakeProvider::start: {e}")))?;
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let (shutdown, rx) = watch::channel(false);
        handle.spawn(http::serve(listener, Arc::clone(&shared), rx));
        Ok(FakeProvider {
            shared,
            addr,
            shutdown,
            thread: None,
        })
    }

    /// Starts the server on its own thread with its own tokio runtime, so it
    /// works from plain synchronous `#[test]`s (std sockets, blocking
    /// clients) and keeps serving while the caller blocks.
    pub fn start_blocking() -> std::io::Result<FakeProvider> {
        Self::start_blocking_on(0)
    }

    /// Like [`FakeProvider::start_blocking`] but on a given port (`0` =
    /// random).
    pub fn start_blocking_on(port: u16) -> std::io::Result<FakeProvider> {
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let listener = {
            let _guard = runtime.enter();
            tokio::net::TcpListener::from_std(std_listener)?
        };
        let shared = Arc::new(Shared::default());
        let (shutdown, rx) = watch::channel(false);
        let task_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name(format!("fake-provider-{}", addr.port()))
            .spawn(move || {
                // `serve` returns on shutdown; dropping the runtime then
                // cancels the connection tasks, closing their sockets.
                runtime.block_on(http::serve(listener, task_shared, rx));
            })?;
        Ok(FakeProvider {
            shared,
            addr,
            shutdown,
            thread: Some(thread),
        })
    }

    /// `"http://127.0.0.1:PORT/v1"`, the base URL to put in a provider
    /// config.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// `"http://127.0.0.1:PORT"` followed by `path` (which should start with
    /// `/`).
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// The socket address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Queues a reply. Requests are answered FIFO.
    pub fn push(&self, reply: Reply) {
        self.shared.lock().queue.push_back(reply);
    }

    /// Refuses every request whose body is longer than `bytes` as a real provider refuses
    /// one past the model's context window (OpenAI's `400 context_length_exceeded`),
    /// without consuming a queued reply. Such requests are still recorded.
    pub fn limit_context(&self, bytes: usize) {
        self.shared.lock().context_limit = Some(bytes);
    }

    /// Answers every request whose body contains `needle` with a clone of `reply`, without
    /// consuming the FIFO queue (after [`FakeProvider::limit_context`]'s refusal). For
    /// requests whose place in the order a test cannot know, such as a summarising call.
    pub fn answer_when(&self, needle: &str, reply: Reply) {
        self.shared
            .lock()
            .body_routes
            .push((needle.to_owned(), reply));
    }

    /// Queues several replies, in order.
    pub fn push_all(&self, replies: impl IntoIterator<Item = Reply>) {
        self.shared.lock().queue.extend(replies);
    }

    /// Answers every `method` request to exactly `path` (query string
    /// ignored) with a clone of `reply`, without consuming the FIFO queue.
    /// Such requests are still recorded. A later route for the same method
    /// and path replaces the earlier one.
    pub fn route(&self, method: &str, path: &str, reply: Reply) {
        let mut st = self.shared.lock();
        st.routes
            .retain(|(m, p, _)| !(m.eq_ignore_ascii_case(method) && p == path));
        st.routes.push((method.to_owned(), path.to_owned(), reply));
    }

    /// How many queued replies have not been used yet.
    pub fn pending_replies(&self) -> usize {
        self.shared.lock().queue.len()
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.lock().requests.clone()
    }

    /// How many requests have been received so far.
    pub fn request_count(&self) -> usize {
        self.shared.lock().requests.len()
    }

    /// Blocks the calling thread until at least `n` requests have arrived,
    /// then returns all requests received so far.
    ///
    /// # Panics
    ///
    /// After [`HANG_GUARD`] without enough requests, and when called from a
    /// current-thread tokio runtime serving a provider made with
    /// [`FakeProvider::start`] (that would deadlock: use
    /// [`FakeProvider::next_request`] there, or [`FakeProvider::start_blocking`]).
    #[track_caller]
    pub fn wait_for_requests(&self, n: usize) -> Vec<Recorded> {
        if self.thread.is_none()
            && tokio::runtime::Handle::try_current()
                .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread)
        {
            panic!(
                "FakeProvider::wait_for_requests would block the current-thread runtime that serves \
                 this provider; use `next_request().await` or `FakeProvider::start_blocking()`"
            );
        }
        match self.try_wait_for_requests(n, HANG_GUARD) {
            Some(all) => all,
            None => panic!(
                "FakeProvider: waited {HANG_GUARD:?} for {n} requests, got {}",
                self.request_count()
            ),
        }
    }

    /// Like [`FakeProvider::wait_for_requests`] but gives up after `timeout`
    /// and returns `None` instead of panicking.
    pub fn try_wait_for_requests(&self, n: usize, timeout: Duration) -> Option<Vec<Recorded>> {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.lock();
        while st.requests.len() < n {
            let left = deadline.checked_duration_since(Instant::now())?;
            st = self
                .shared
                .arrived
                .wait_timeout(st, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        Some(st.requests.clone())
    }

    /// Waits for the next request not yet returned by this method (the
    /// first call returns the first request ever received, and so on).
    ///
    /// # Panics
    ///
    /// After [`HANG_GUARD`] without a new request.
    pub async fn next_request(&self) -> Recorded {
        match self.next_request_timeout(HANG_GUARD).await {
            Some(r) => r,
            None => panic!("FakeProvider: no new request within {HANG_GUARD:?}"),
        }
    }

    /// Like [`FakeProvider::next_request`] but gives up after `timeout` and
    /// returns `None`.
    pub async fn next_request_timeout(&self, timeout: Duration) -> Option<Recorded> {
        tokio::time::timeout(timeout, self.next_request_forever())
            .await
            .ok()
    }

    async fn next_request_forever(&self) -> Recorded {
        loop {
            let notified = self.shared.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut st = self.shared.lock();
                if let Some(r) = st.requests.get(st.cursor).cloned() {
                    st.cursor += 1;
                    return r;
                }
            }
            notified.await;
        }
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.shutdown.send_replace(true);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Frames one SSE event: optional `event:` line, one `data:` line, blank line.
pub(crate) fn sse_event(event: Option<&str>, data: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 32);
    if let Some(name) = event {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(name.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(data.as_bytes());
    out.extend_from_slice(b"\n\n");
    out
}

#[cfg(test)]
mod tests;

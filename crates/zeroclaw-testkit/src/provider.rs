//! [`FakeProvider`]: the running server's handle. It queues the replies, routes the side
//! requests, records every request and lets the test wait for them; the HTTP side
//! (`http.rs`) asks it for each request's reply.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, watch};

use crate::{Recorded, Reply, http};

/// How long [`FakeProvider::wait_for_requests`] and
/// [`FakeProvider::next_request`] wait before panicking: a guard against hung
/// tests, not a timing assertion.
pub const HANG_GUARD: Duration = Duration::from_secs(60);

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
pub(crate) struct Shared {
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
    pub(crate) fn record_and_take(&self, request: Recorded) -> Reply {
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

impl http::Replies for Shared {
    fn reply_to(&self, request: Recorded) -> Reply {
        self.record_and_take(request)
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

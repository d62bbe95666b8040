//! The bidirectional JSON-RPC peer: one per connection, the same code on both ends.
//!
//! Contract:
//! - One connection task reads, classifies frames in arrival order and writes. It never
//!   waits on a handler: a handler that is not ready at its first poll runs as its own
//!   task, so responses to our own requests, cancels and other calls keep being read while
//!   it works. Answers ready at once go straight into the task's output buffer (a burst of
//!   requests is answered in one write, with no hand-off to another task); frames from
//!   other tasks (notifications, late answers, our requests) come through the bounded
//!   outbound queue. Only this task writes, so frames never interleave.
//! - Outbound requests use ids `zc-out-<n>` from a per-connection counter. Responses are
//!   matched only against this side's own pending map (correlation is directional).
//! - Every pending outbound request is resolved exactly once: by its response, by its
//!   timeout, or with [`CallError::Closed`] when the connection ends. Removal from the
//!   pending map is the single point where that is decided.
//! - Nothing longer than the transport's frame cap is written (the cap this side reads
//!   with): an answer over it becomes a `-32603` naming the limit, our own request over it
//!   fails at once, and any other frame over it is dropped and logged. An oversized line
//!   read that answers one of our pending requests (its `id`, the last member of an answer,
//!   is in the [`Frame::OversizedEnd`] tail) resolves that request with an error at once.
//! - At most [`PeerConfig::max_outstanding`] of this side's own requests are unanswered at
//!   once; a further call waits for a slot, within its timeout. That keeps the output
//!   buffer from filling with our own requests, so the connection (which stops reading
//!   while its output is full) cannot wedge against a peer that stopped the same way.

use crate::codec::Frame;
use crate::envelope::{Envelope, classify};
use crate::message::{Answer, Id, Notification, RpcError, codes, encode_request, write_response};
use crate::outbox::Outbox;
use crate::transport::{FrameSink, FrameSource, RpcTransport, write_all};
use bytes::Bytes;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::Duration;
use tokio::sync::{Notify, Semaphore, mpsc, oneshot};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tokio_util::task::TaskTracker;

pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
/// A handler's outcome: its result already serialised (see [`Answer`]), or an error.
pub type HandlerResult = Result<Answer, RpcError>;

/// After the connection is closed, how long queued frames may take to reach a peer that
/// is still reading before they are abandoned.
const CLOSE_FLUSH_GRACE: Duration = Duration::from_secs(2);

/// What a connection's owner does with the other side's requests and notifications.
pub trait Service: Send + Sync + 'static {
    /// Called on the connection loop, in frame order; must not block. Synchronous checks (the
    /// handshake gate) happen here, so their order is the order frames arrived in. When
    /// the connection closes, a returned future still running gets a short grace to
    /// finish and answer, and is then dropped.
    fn request(&self, method: String, params: Option<Value>) -> BoxFuture<HandlerResult>;

    /// Called on the connection loop, in frame order; must not block.
    fn notification(&self, method: String, params: Option<Value>) {
        let _ = (method, params);
    }
}

#[derive(Debug, Clone)]
pub struct PeerConfig {
    /// Capacity of the outbound frame queue (frames from other tasks), and, plus one, of
    /// the connection's output buffer in frames. Overflow rules: a full output buffer stops
    /// reading and taking from the queue until the other side reads; on a full queue, late
    /// answers and [`PeerHandle::notify`] wait for space (backpressure lands on the slow
    /// connection itself) and [`PeerHandle::try_notify`] fails with [`NotifyError::Full`]
    /// for its caller to decide.
    pub outbound_queue: usize,
    /// Inbound requests whose handlers may run at once. Overflow rule: the extra request is
    /// answered `-32001` at once, so the reader never stops reading (it must stay free to
    /// read the answers those handlers may be waiting for).
    pub max_in_flight: usize,
}

impl PeerConfig {
    /// How many of this side's own requests may be unanswered at once: at most
    /// `max_in_flight` (what the other side, configured alike, runs before answering
    /// `-32001`) and at most half the outbound queue, so that our requests plus the answers
    /// we owe a peer bound the same way never fill the output buffer.
    pub fn max_outstanding(&self) -> usize {
        self.max_in_flight.min(self.outbound_queue / 2).max(1)
    }
}

impl Default for PeerConfig {
    fn default() -> Self {
        Self {
            outbound_queue: 1024,
            max_in_flight: 256,
        }
    }
}

/// Why an outbound request or notification did not get a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    /// The other side answered with an error object.
    #[error("{0}")]
    Rpc(RpcError),
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("the connection closed before an answer arrived")]
    Closed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotifyError {
    #[error("the connection's outbound queue is full")]
    Full,
    #[error("the connection is closed")]
    Closed,
}

type Waiter = oneshot::Sender<Result<Value, CallError>>;

struct Pending {
    open: bool,
    waiters: HashMap<String, Waiter>,
}

struct Shared {
    label: String,
    /// The frame cap (the transport's): nothing longer is written.
    max_frame_bytes: usize,
    outbound: mpsc::Sender<Bytes>,
    pending: Mutex<Pending>,
    next_id: AtomicU64,
    /// One permit per unanswered outbound request ([`PeerConfig::max_outstanding`]).
    outstanding: Semaphore,
    /// Signalled each time the connection task takes frames off the queue.
    drained: Notify,
    closed: CancellationToken,
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        // A panic while holding this lock cannot leave the map inconsistent (every
        // operation is a single insert or remove), so a poisoned lock is still usable.
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a frame, waiting for space; fails once the connection is closed.
    async fn enqueue(&self, frame: Bytes) -> Result<(), NotifyError> {
        tokio::select! {
            biased;
            sent = self.outbound.send(frame) => sent.map_err(|_| NotifyError::Closed),
            () = self.closed.cancelled() => Err(NotifyError::Closed),
        }
    }

    /// Resolves the waiter for `id`, if this side has one. Returns whether it did.
    fn resolve(&self, id: &str, outcome: Result<Value, CallError>) -> bool {
        let mut pending = self.pending();
        match pending.waiters.remove(id) {
            Some(waiter) => {
                // Sent under the lock, so a timed-out caller that finds its entry gone
                // can rely on the outcome already being in its channel.
                let _ = waiter.send(outcome);
                true
            }
            None => false,
        }
    }

    fn forget(&self, id: &str) -> bool {
        self.pending().waiters.remove(id).is_some()
    }

    fn close(&self) {
        self.closed.cancel();
        let mut pending = self.pending();
        pending.open = false;
        for (_, waiter) in pending.waiters.drain() {
            let _ = waiter.send(Err(CallError::Closed));
        }
    }
}

/// A cheap, cloneable handle for sending to the other side of one connection.
#[derive(Clone)]
pub struct PeerHandle {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for PeerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerHandle")
            .field("label", &self.shared.label)
            .finish()
    }
}

impl PeerHandle {
    pub fn label(&self) -> &str {
        &self.shared.label
    }

    /// Sends a request and waits for its answer, at most `timeout`.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        // The timeout covers waiting for a slot and for queue space too: a peer that stopped
        // reading must not hold the caller past its deadline.
        let deadline = tokio::time::Instant::now() + timeout;
        let slot = tokio::time::timeout_at(deadline, async {
            tokio::select! {
                biased;
                () = self.shared.closed.cancelled() => None,
                permit = self.shared.outstanding.acquire() => permit.ok(),
            }
        });
        let _slot = match slot.await {
            Ok(Some(permit)) => permit,
            Ok(None) => return Err(CallError::Closed),
            Err(_) => return Err(CallError::Timeout(timeout)),
        };
        let n = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let id = format!("zc-out-{n}");
        let (tx, mut rx) = oneshot::channel();
        {
            let mut pending = self.shared.pending();
            if !pending.open {
                return Err(CallError::Closed);
            }
            pending.waiters.insert(id.clone(), tx);
        }
        // From here on the entry must leave the map whatever happens, including the
        // caller dropping this future.
        let entry = PendingEntry {
            shared: &self.shared,
            id: &id,
        };
        let frame = encode_request(method, Some(&params), Some(&Id::String(id.clone())));
        if frame.len() > self.shared.max_frame_bytes {
            return Err(CallError::Rpc(RpcError::internal(format!(
                "the request is {} bytes, over the frame cap of {} bytes; it was not sent",
                frame.len(),
                self.shared.max_frame_bytes
            ))));
        }
        match tokio::time::timeout_at(deadline, self.shared.enqueue(frame.into())).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Err(CallError::Closed),
            // Never sent; dropping `entry` removes the waiter.
            Err(_) => return Err(CallError::Timeout(timeout)),
        }
        let outcome = match tokio::time::timeout_at(deadline, &mut rx).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Err(CallError::Closed),
            Err(_) if self.shared.forget(&id) => Err(CallError::Timeout(timeout)),
            // The answer won the race against the timer and is already in the channel.
            Err(_) => rx.try_recv().unwrap_or(Err(CallError::Closed)),
        };
        drop(entry);
        outcome
    }

    /// Sends a notification, waiting for queue space.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), NotifyError> {
        self.shared
            .enqueue(encode_request(method, Some(&params), None).into())
            .await
    }

    /// Queues a notification only if there is room now.
    pub fn try_notify(&self, method: &str, params: Value) -> Result<(), NotifyError> {
        self.try_send(&Notification(
            encode_request(method, Some(&params), None).into(),
        ))
    }

    /// Queues a notification serialised earlier, waiting for queue space.
    pub async fn send(&self, notification: &Notification) -> Result<(), NotifyError> {
        self.shared.enqueue(notification.0.clone()).await
    }

    /// Queues a notification serialised earlier (once, for many connections) only if there
    /// is room now.
    pub fn try_send(&self, notification: &Notification) -> Result<(), NotifyError> {
        if self.shared.closed.is_cancelled() {
            return Err(NotifyError::Closed);
        }
        self.shared
            .outbound
            .try_send(notification.0.clone())
            .map_err(|e| match e {
                mpsc::error::TrySendError::Full(_) => NotifyError::Full,
                mpsc::error::TrySendError::Closed(_) => NotifyError::Closed,
            })
    }

    /// Free slots in the outbound queue now.
    pub fn queue_room(&self) -> usize {
        self.shared.outbound.capacity()
    }

    /// The outbound queue's size ([`PeerConfig::outbound_queue`]).
    pub fn queue_capacity(&self) -> usize {
        self.shared.outbound.max_capacity()
    }

    /// Waits until the outbound queue has at least `room` free slots; `false` if it has
    /// not by `deadline` or the connection closed. Lets a producer that must not block
    /// for long (a turn streaming events) slow down to a reader's pace, within a bound.
    pub async fn wait_for_room(&self, room: usize, deadline: tokio::time::Instant) -> bool {
        let room = room.min(self.queue_capacity());
        loop {
            let drained = self.shared.drained.notified();
            tokio::pin!(drained);
            // Registered before the check, so a drain right after it still wakes us.
            drained.as_mut().enable();
            if self.queue_room() >= room {
                return true;
            }
            tokio::select! {
                biased;
                () = self.shared.closed.cancelled() => return false,
                () = &mut drained => {}
                () = tokio::time::sleep_until(deadline) => return self.queue_room() >= room,
            }
        }
    }

    /// Ends the connection: reading stops, queued frames get a short grace to flush.
    pub fn close(&self) {
        self.shared.close();
    }

    pub fn is_closed(&self) -> bool {
        self.shared.closed.is_cancelled()
    }

    /// Resolves when the connection has closed, for whatever reason.
    pub fn closed(&self) -> WaitForCancellationFutureOwned {
        self.shared.closed.clone().cancelled_owned()
    }
}

/// Removes a request's waiter when the request is over, however it ended.
struct PendingEntry<'a> {
    shared: &'a Shared,
    id: &'a str,
}

impl Drop for PendingEntry<'_> {
    fn drop(&mut self) {
        self.shared.forget(self.id);
    }
}

/// One connection's peer, before it runs.
pub struct Peer<T> {
    transport: T,
    config: PeerConfig,
    shared: Arc<Shared>,
    outbound: mpsc::Receiver<Bytes>,
}

impl<T: RpcTransport> Peer<T> {
    pub fn new(transport: T, config: PeerConfig) -> (Self, PeerHandle) {
        let (tx, rx) = mpsc::channel(config.outbound_queue.max(1));
        let shared = Arc::new(Shared {
            label: transport.peer_label().to_owned(),
            max_frame_bytes: transport.max_frame_bytes(),
            outbound: tx,
            pending: Mutex::new(Pending {
                open: true,
                waiters: HashMap::new(),
            }),
            next_id: AtomicU64::new(0),
            outstanding: Semaphore::new(config.max_outstanding()),
            drained: Notify::new(),
            closed: CancellationToken::new(),
        });
        let handle = PeerHandle {
            shared: shared.clone(),
        };
        (
            Self {
                transport,
                config,
                shared,
                outbound: rx,
            },
            handle,
        )
    }

    /// Runs the connection until the other side goes away or the handle closes it. When
    /// this returns, every pending outbound request has been failed with `Closed`.
    pub async fn run<S: Service>(self, service: Arc<S>) {
        let Peer {
            transport,
            config,
            shared,
            mut outbound,
        } = self;
        let (mut source, mut sink) = transport.into_halves();
        // One more than the queue: room for a full queue's worth plus the frame being
        // written, which `max_outstanding`'s no-wedge argument counts on.
        let mut out = Outbox::new(config.outbound_queue.max(1) + 1, shared.max_frame_bytes);
        let reader = Reader {
            shared: shared.clone(),
            service,
            in_flight: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
            max_in_flight: config.max_in_flight.max(1),
            handlers: TaskTracker::new(),
            abort: CancellationToken::new(),
        };
        let closed = shared.closed.clone().cancelled_owned();
        tokio::pin!(closed);
        // Frames read while output waited: bounds how long a steady stream of input that
        // answers nothing (notifications) can hold back what is owed.
        let mut reads_since_write = 0u32;
        loop {
            // Reading comes first while frames are already buffered, so the answers to a
            // burst of requests leave in one write; before waiting for input, or once the
            // output is large, writing comes first. Either way the other branches stay
            // live: the connection never stops reading because the other side is slow,
            // only because its own output is full.
            let room = out.has_room();
            let write_first = !out.is_empty()
                && (out.unwritten().len() >= WRITE_FIRST
                    || reads_since_write >= READS_BEFORE_WRITE
                    || !source.has_frame());
            let event = if write_first {
                tokio::select! {
                    biased;
                    () = &mut closed => Event::Closed,
                    wrote = sink.write_some(out.unwritten()) => Event::Wrote(wrote),
                    next = source.next_frame(), if room => Event::Read(next),
                    frame = outbound.recv(), if room => Event::Queued(frame),
                }
            } else {
                tokio::select! {
                    biased;
                    () = &mut closed => Event::Closed,
                    next = source.next_frame(), if room => Event::Read(next),
                    frame = outbound.recv(), if room => Event::Queued(frame),
                    wrote = sink.write_some(out.unwritten()), if !out.is_empty() => Event::Wrote(wrote),
                }
            };
            match event {
                Event::Closed | Event::Queued(None) => break,
                Event::Queued(Some(frame)) => {
                    // Take all that is queued, so a stream of events leaves in big writes.
                    out.push(&frame);
                    take_queued(&mut outbound, &mut out, &shared);
                }
                Event::Read(Ok(Some(Frame::Line(bytes)))) => {
                    if !out.is_empty() {
                        reads_since_write += 1;
                    }
                    reader.on_frame(&bytes, &mut out, &mut outbound).await;
                    // Reading comes first, so under a steady stream of input (notifications
                    // answer nothing) the queue is also taken from here, or it would starve.
                    take_queued(&mut outbound, &mut out, &shared);
                }
                Event::Read(Ok(Some(Frame::Oversized { limit }))) => {
                    let error = RpcError::invalid_request(format!(
                        "frame longer than {limit} bytes; it was discarded up to its newline"
                    ))
                    .with_data(json!({ "limit": limit }));
                    reply(&mut out, &Id::Null, &Err(error), shared.max_frame_bytes);
                }
                Event::Read(Ok(Some(Frame::OversizedEnd { tail }))) => {
                    let limit = shared.max_frame_bytes;
                    let error = CallError::Rpc(RpcError::internal(format!(
                        "the answer was longer than this side's frame cap of {limit} bytes and was discarded; ask for less (a smaller page) or raise the cap"
                    )).with_data(json!({ "limit": limit })));
                    let resolved =
                        answered_id(&tail).is_some_and(|id| shared.resolve(id, Err(error)));
                    if !resolved {
                        tracing::debug!(peer = %shared.label, limit, "an oversized frame that answers none of our requests was discarded");
                    }
                }
                Event::Read(Ok(None)) => break,
                Event::Read(Err(e)) => {
                    tracing::debug!(peer = %shared.label, error = %e, "read failed; closing");
                    break;
                }
                Event::Wrote(Ok(n)) if n > 0 => {
                    reads_since_write = 0;
                    out.consumed(n);
                    if out.is_empty() && sink.flush().await.is_err() {
                        break;
                    }
                }
                Event::Wrote(_) => {
                    tracing::debug!(peer = %shared.label, "write failed; closing");
                    break;
                }
            }
        }
        shared.close();
        // One grace for both: handlers already running may still answer (the reply to a
        // turn that ended as the daemon stopped, say), then what is owed goes out if the
        // other side reads it soon. Handlers not done by then are dropped.
        let deadline = tokio::time::Instant::now() + CLOSE_FLUSH_GRACE;
        reader.handlers.close();
        // Meanwhile keep writing, and taking what the handlers queue, so their answers are
        // not stuck behind a full queue.
        let mut writable = true;
        let grace = async {
            let handlers_done = reader.handlers.wait();
            tokio::pin!(handlers_done);
            loop {
                tokio::select! {
                    biased;
                    () = &mut handlers_done => break,
                    Some(frame) = outbound.recv(), if out.has_room() => out.push(&frame),
                    wrote = sink.write_some(out.unwritten()), if writable && !out.is_empty() => {
                        match wrote {
                            Ok(n) if n > 0 => out.consumed(n),
                            _ => writable = false,
                        }
                    }
                }
            }
        };
        if tokio::time::timeout_at(deadline, grace).await.is_err() {
            reader.abort.cancel();
        }
        while let Ok(frame) = outbound.try_recv() {
            out.push(&frame);
        }
        let _ = tokio::time::timeout_at(deadline, async {
            write_all(&mut sink, out.unwritten()).await?;
            sink.close().await
        })
        .await;
    }
}

/// Output this large is written before more input is read: soon enough that a client
/// pipelining a burst gets its first answers while the rest of the burst is still being
/// read and answered. Chosen by the pipelined benchmark (docs/benchmarks.md): 8 KiB beat
/// 4, 16 and 64 KiB.
const WRITE_FIRST: usize = 8 * 1024;

/// At most this many frames are read while output is owed before it is written.
const READS_BEFORE_WRITE: u32 = 64;

/// What one turn of the connection loop saw.
enum Event {
    Closed,
    Read(std::io::Result<Option<Frame>>),
    Queued(Option<Bytes>),
    Wrote(std::io::Result<usize>),
}

type Queue = mpsc::Receiver<Bytes>;

/// Moves what is queued now into `out`, as far as it has room.
fn take_queued(queue: &mut Queue, out: &mut Outbox, shared: &Shared) {
    let mut took = false;
    while out.has_room() {
        let Ok(frame) = queue.try_recv() else { break };
        out.push(&frame);
        took = true;
    }
    if took {
        shared.drained.notify_waiters();
    }
}

fn reply(out: &mut Outbox, id: &Id, outcome: &HandlerResult, max_frame_bytes: usize) {
    out.push_with(|buf| write_answer(buf, id, outcome, max_frame_bytes));
}

/// Appends the answer, or, when it would pass the frame cap, a `-32603` that names the cap
/// in its place: the caller is answered either way (a reader drops a line over its cap).
fn write_answer(buf: &mut Vec<u8>, id: &Id, outcome: &HandlerResult, max_frame_bytes: usize) {
    let start = buf.len();
    write_response(buf, id, outcome);
    let size = buf.len() - start;
    if size > max_frame_bytes {
        buf.truncate(start);
        tracing::warn!(
            size,
            limit = max_frame_bytes,
            "an answer over the frame cap was replaced by an error"
        );
        write_response(
            buf,
            id,
            &Err(RpcError::answer_too_large(size, max_frame_bytes)),
        );
    }
}

/// The id a discarded line answered, from its last bytes ([`Frame::OversizedEnd`]): an
/// answer this crate writes ends `"id":"zc-out-<n>"}`. Only one brace may follow the id,
/// so it is the frame's own member (a nested object ending the frame would be followed by
/// two), and `"id":"` cannot occur inside a string, whose quotes are escaped.
fn answered_id(tail: &[u8]) -> Option<&str> {
    let rest = tail.strip_suffix(b"\"}")?;
    let open = rest.iter().rposition(|&b| b == b'"')?;
    rest[..open].strip_suffix(b"\"id\":")?;
    let id = std::str::from_utf8(&rest[open + 1..]).ok()?;
    let n = id.strip_prefix("zc-out-")?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(id)
}

struct Reader<S> {
    shared: Arc<Shared>,
    service: Arc<S>,
    in_flight: Arc<Semaphore>,
    max_in_flight: usize,
    /// Handlers running as their own tasks.
    handlers: TaskTracker,
    /// Drops the handlers still running once the close grace is over.
    abort: CancellationToken,
}

impl<S: Service> Reader<S> {
    /// Handles one frame; answers it in `out` (which has room for one more frame) when
    /// that can be done at once.
    async fn on_frame(&self, bytes: &[u8], out: &mut Outbox, queue: &mut Queue) {
        match classify(bytes) {
            Envelope::Request { id, method, params } => {
                self.on_request(id, method, params, out, queue).await;
            }
            Envelope::Notification { method, params } => {
                self.service.notification(method, params);
            }
            Envelope::Response { id, outcome } => {
                let matched = match &id {
                    Id::String(id) => self.shared.resolve(id, outcome.map_err(CallError::Rpc)),
                    _ => false,
                };
                if !matched {
                    tracing::warn!(peer = %self.shared.label, "response to an id with no pending request; ignored");
                }
            }
            Envelope::Reply { id, error } => {
                reply(out, &id, &Err(error), self.shared.max_frame_bytes);
            }
            Envelope::Drop { reason } => {
                tracing::warn!(peer = %self.shared.label, reason, "frame dropped without a reply");
            }
        }
    }

    async fn on_request(
        &self,
        id: Id,
        method: String,
        params: Option<Value>,
        out: &mut Outbox,
        queue: &mut Queue,
    ) {
        let Ok(permit) = self.in_flight.clone().try_acquire_owned() else {
            let error = RpcError::new(
                codes::OVERLOADED,
                format!(
                    "too many requests in flight on this connection (limit {}); wait for answers before sending more",
                    self.max_in_flight
                ),
            )
            .with_data(json!({ "limit": self.max_in_flight }));
            reply(out, &id, &Err(error), self.shared.max_frame_bytes);
            return;
        };
        let mut handler = self.service.request(method, params);
        // Most handlers are ready at once; answering inline saves a task per request and
        // keeps their answers in request order.
        let first = std::future::poll_fn(|cx| Poll::Ready(handler.as_mut().poll(cx))).await;
        if let Poll::Ready(outcome) = first {
            drop(permit);
            // What the handler queued (a replay's events, say) goes out before its answer,
            // as it would have had the answer taken the queue too. The buffer may pass its
            // frame limit by what the queue holds, which is bounded as well.
            while let Ok(frame) = queue.try_recv() {
                out.push(&frame);
            }
            self.shared.drained.notify_waiters();
            reply(out, &id, &outcome, self.shared.max_frame_bytes);
            return;
        }
        let shared = self.shared.clone();
        let abort = self.abort.clone();
        self.handlers.spawn(async move {
            let outcome = tokio::select! {
                outcome = handler => outcome,
                () = abort.cancelled() => return,
            };
            drop(permit);
            let mut line = Vec::new();
            write_answer(&mut line, &id, &outcome, shared.max_frame_bytes);
            let _ = shared.enqueue(line.into()).await;
        });
    }
}

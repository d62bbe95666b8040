//! The connection task: [`Peer::run`] reads, takes from the outbound queue and writes in
//! one loop (see the contract in `mod.rs`), and at close gives running handlers and what is
//! owed a short grace.

use super::frame_cap::{answered_id, reply};
use super::handle::PeerHandle;
use super::inbound::Reader;
use super::shared::{Queue, Shared};
use super::{CallError, PeerConfig, Service};
use crate::codec::Frame;
use crate::message::{Id, RpcError};
use crate::outbox::Outbox;
use crate::transport::{FrameSink, FrameSource, RpcTransport, write_all};
use bytes::Bytes;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// After the connection is closed, how long queued frames may take to reach a peer that
/// is still reading before they are abandoned.
const CLOSE_FLUSH_GRACE: Duration = Duration::from_secs(2);

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
        let shared = Arc::new(Shared::new(
            transport.peer_label().to_owned(),
            transport.max_frame_bytes(),
            tx,
            config.max_outstanding(),
        ));
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

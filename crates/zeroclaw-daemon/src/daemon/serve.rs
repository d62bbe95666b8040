//! Doors: accept loops over any [`Listener`], and the serving of one connection, whatever
//! carried it, through the handshake gate and the method table.

use super::admission::{Admission, Handshake, Slot};
use crate::connection::{Authority, Connection};
use crate::methods::Gate;
use crate::state::DaemonState;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{RwLock, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use zeroclaw_protocol::codes;
use zeroclaw_rpc::transport::{FrameSink, RpcTransport};
use zeroclaw_rpc::{Peer, PeerConfig, PeerHandle, RpcError};

/// Accept-error backoff bounds (descriptor exhaustion clears only when others close).
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(10);
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// One way in: something that yields connections whose frames are JSON-RPC. The local
/// socket or pipe is one; the gateway's WebSocket is another.
pub trait Listener: Send + 'static {
    type Transport: RpcTransport;

    /// The next connection; an error is logged and retried with backoff.
    fn accept(&mut self)
    -> impl Future<Output = std::io::Result<Incoming<Self::Transport>>> + Send;

    /// Stops listening (and removes what the listener owns, such as a socket file).
    fn close(self);
}

/// An accepted connection, before it is admitted.
pub struct Incoming<T> {
    pub transport: T,
    /// How the logs name the peer (`unix:pid=…,uid=…`).
    pub label: String,
    /// `false` for a peer that must be refused (another user on the local socket).
    pub trusted: bool,
    /// What it may call: everything on the local socket, its token's scope on the gateway.
    pub authority: Authority,
}

/// What every door of one daemon shares: the connection slots, the tasks to wait for at
/// shutdown, and whether start-up is done.
#[derive(Clone)]
pub struct Doors {
    pub connections: TaskTracker,
    slots: Arc<Admission>,
    /// Cancelled by [`Doors::open`]. A connection admitted before (a REST request reaching
    /// the gateway while the daemon still starts) waits for it: no connection is served
    /// before start-up is done (the gateway's status set, runs recovered).
    opened: CancellationToken,
    /// `--exit-when-idle`'s pause: an accept loop holds a read guard from the moment it
    /// waits for a connection until it has admitted it; the idle rule takes the write
    /// guard, which waits for every loop to let go, so once it holds it no loop is between
    /// an accept and an admit, and none accepts until it lets go.
    pause: Arc<RwLock<()>>,
    /// Bumped by the idle rule to wake the loops waiting in `accept`, so they let go.
    pausing: watch::Sender<u64>,
}

impl Doors {
    /// The doors, closed: connections are admitted (each takes its slot) but none is
    /// served until [`Doors::open`].
    pub fn new(state: &DaemonState) -> Self {
        Self {
            connections: TaskTracker::new(),
            slots: Admission::new(state.config.daemon.max_connections),
            opened: CancellationToken::new(),
            pause: Arc::new(RwLock::new(())),
            pausing: watch::Sender::new(0),
        }
    }

    /// Stops every accept loop between two connections and returns once all have
    /// stopped (each connection accepted so far admitted); they go on when the guard is
    /// dropped. The connections that arrive meanwhile wait in the listen backlog: with
    /// socket activation the service manager keeps them for the next instance.
    pub async fn pause(&self) -> tokio::sync::OwnedRwLockWriteGuard<()> {
        self.pausing.send_modify(|n| *n = n.wrapping_add(1));
        self.pause.clone().write_owned().await
    }

    /// Whether an in-process connection (a REST request) may be admitted now: not while
    /// the idle rule holds the doors paused.
    pub fn admitting(&self) -> Option<tokio::sync::OwnedRwLockReadGuard<()>> {
        self.pause.clone().try_read_owned().ok()
    }

    /// Serves the connections admitted so far, and every later one at once.
    pub fn open(&self) {
        self.opened.cancel();
    }

    /// Whether start-up is done and connections are served.
    pub fn is_open(&self) -> bool {
        self.opened.is_cancelled()
    }
}

/// Runs `listener`'s accept loop until the daemon shuts down, then closes it.
pub async fn serve<L: Listener>(state: Arc<DaemonState>, doors: Doors, mut listener: L) {
    let mut backoff = ACCEPT_BACKOFF_MIN;
    let mut pausing = doors.pausing.subscribe();
    loop {
        // Not while the idle rule holds the doors paused (`Doors::pause`).
        let guard = tokio::select! {
            biased;
            () = state.shutdown.cancelled() => break,
            guard = doors.pause.clone().read_owned() => guard,
        };
        pausing.borrow_and_update();
        let accepted = tokio::select! {
            biased;
            () = state.shutdown.cancelled() => break,
            // Let go, so the idle rule can hold the doors; `accept` is cancel-safe, so a
            // connection it had not returned stays in the backlog.
            _ = pausing.changed() => continue,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok(incoming) => {
                backoff = ACCEPT_BACKOFF_MIN;
                doors.admit(&state, incoming);
                drop(guard);
            }
            Err(e) => {
                tracing::warn!(error = %e, retry_in = ?backoff, "accept failed; backing off");
                tokio::select! {
                    () = state.shutdown.cancelled() => break,
                    () = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
            }
        }
    }
    listener.close();
}

impl Doors {
    /// Serves `incoming` as its own task, or refuses it (another user; over the limit).
    pub fn admit<T: RpcTransport>(&self, state: &Arc<DaemonState>, incoming: Incoming<T>) {
        let Incoming {
            transport,
            label,
            trusted,
            authority,
        } = incoming;
        if !trusted {
            tracing::warn!(peer = %label, "refused a connection from another user");
            return;
        }
        let Some(slot) = self.slots.admit() else {
            let limit = self.slots.limit();
            tracing::warn!(peer = %label, limit, "connection limit reached; refusing");
            self.connections.spawn(refuse(transport, limit));
            return;
        };
        tracing::info!(peer = %label, "connection accepted");
        let counted = (
            state.clients.opened(),
            state.metrics.connection(door_of(&label)),
        );
        let (state, opened) = (state.clone(), self.opened.clone());
        self.connections.spawn(async move {
            opened.cancelled().await;
            serve_connection(state, transport, label, authority, slot, counted).await;
        });
    }
}

impl Doors {
    /// A gateway request's record for calling the method table directly, acting for
    /// `authority` with `peer` as its events' destination (see `direct`): admitted like a
    /// connection (a slot, the counts, not while the idle rule holds the doors), and
    /// counted as an initialized client until it is dropped. `Err` says why not: the
    /// daemon is stopping, or full.
    pub fn direct(
        &self,
        state: &Arc<DaemonState>,
        authority: Authority,
        peer: PeerHandle,
        stream: bool,
    ) -> Result<super::direct::Direct, String> {
        if state.shutdown.is_cancelled() {
            return Err("the daemon is stopping".into());
        }
        // Not while `--exit-when-idle` holds the doors paused: the daemon is deciding to
        // exit (the request gets "stopping", 503, and its retry reaches the next instance).
        let Some(_admitting) = self.admitting() else {
            return Err("the daemon is stopping".into());
        };
        let Some(slot) = self.slots.admit() else {
            let limit = self.slots.limit();
            tracing::warn!(peer = %peer.label(), limit, "connection limit reached; refusing");
            return Err(format!(
                "the daemon is serving its limit of {limit} initialized clients; close another client or raise daemon.max_connections"
            ));
        };
        let open = (state.clients.opened(), state.metrics.connection("http"));
        let conn = Connection::new(state.clone(), peer, authority, slot.handshake.done.clone());
        super::direct::Direct {
            conn,
            stream,
            opened: self.opened.clone(),
            close: state.close_connections.clone(),
            slot,
            _open: open,
        }
        .initialized()
    }
}

/// The door a connection came through, for `zeroclaw_connections_total{door}`, from the
/// label its door gave it: `ws:` for the gateway's `/rpc`, `http:` for an in-process
/// connection of the gateway's (an SSE stream, a prompt), anything else the local socket or
/// pipe. A REST request's direct record counts as `http` too (`Doors::direct`).
fn door_of(label: &str) -> &'static str {
    if label.starts_with("ws:") {
        "websocket"
    } else if label.starts_with("http:") {
        "http"
    } else {
        "socket"
    }
}

/// Serves one admitted connection until it closes (or the daemon closes it). Its slot and
/// its counts (`counted`: in `status` and the metrics) are given back before "connection
/// closed" is logged, so whoever reads that line finds the slot free and the count down.
async fn serve_connection<T: RpcTransport>(
    state: Arc<DaemonState>,
    transport: T,
    label: String,
    authority: Authority,
    slot: Slot,
    counted: impl Send,
) {
    let peer_config = PeerConfig {
        outbound_queue: state.config.daemon.outbound_queue,
        max_in_flight: state.config.daemon.max_requests_in_flight,
    };
    let (rpc_peer, handle) = Peer::new(transport, peer_config);
    let connection = Connection::new(
        state.clone(),
        handle.clone(),
        authority.clone(),
        slot.handshake.done.clone(),
    );
    let close = state.close_connections.clone();
    let handshake = Duration::from_secs(state.config.daemon.handshake_timeout_secs);
    let run = rpc_peer.run(Arc::new(Gate(connection.clone())));
    tokio::pin!(run);
    tokio::select! {
        () = &mut run => {}
        () = close.cancelled() => {
            handle.close();
            run.await;
        }
        () = authority.over() => {
            tracing::info!(peer = %label, "closing a connection whose token was revoked or expired");
            handle.close();
            run.await;
        }
        reason = unfinished_handshake(&slot.handshake, handshake) => {
            tracing::warn!(peer = %label, "closing a connection that {reason}");
            handle.close();
            run.await;
        }
    }
    connection.finished();
    drop((slot, counted));
    tracing::info!(peer = %label, "connection closed");
    release_freed_memory();
}

/// Resolves, saying why, when a connection must be closed before its handshake: no
/// `initialize` within `timeout`, or a newcomer took its slot. Once the connection has
/// initialized, this never resolves.
async fn unfinished_handshake(handshake: &Handshake, timeout: Duration) -> String {
    tokio::select! {
        biased;
        () = handshake.done.cancelled() => std::future::pending().await,
        () = handshake.evicted.cancelled() => {
            "had not initialized when the connection limit was reached; a new one takes its slot".into()
        }
        () = tokio::time::sleep(timeout) => format!("did not initialize within {timeout:?}"),
    }
}

/// Tells a connection over the limit why it is being closed, then closes it.
async fn refuse<T: RpcTransport>(transport: T, limit: usize) {
    let (_, mut sink) = transport.into_halves();
    let error = RpcError::new(
        codes::LIMIT_REACHED,
        format!("the daemon is serving its limit of {limit} initialized clients; close another client or raise daemon.max_connections"),
    )
    .with_data(serde_json::json!({ "limit": limit }));
    let mut line = zeroclaw_rpc::message::encode_response(&zeroclaw_rpc::Id::Null, &Err(error));
    line.push(b'\n');
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        let _ = zeroclaw_rpc::transport::write_all(&mut sink, &line).await;
        let _ = sink.close().await;
    })
    .await;
}

/// Hands memory freed by closed connections back to the OS, a second after the closes
/// (one trim for a whole burst of them). glibc's allocator keeps freed heap pages for
/// reuse, so after a burst of clients the daemon's RSS would otherwise stay tens of MiB
/// above its idle size.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::sync::atomic::{AtomicBool, Ordering};
        static TRIM_PENDING: AtomicBool = AtomicBool::new(false);
        if TRIM_PENDING.swap(true, Ordering::AcqRel) {
            return;
        }
        tokio::spawn(async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            TRIM_PENDING.store(false, Ordering::Release);
            let _ = tokio::task::spawn_blocking(|| {
                // SAFETY: malloc_trim only walks and releases the allocator's own free
                // lists; it is thread-safe and has no preconditions.
                unsafe { libc::malloc_trim(0) };
                tracing::debug!("returned freed heap to the OS");
            })
            .await;
        });
    }
}

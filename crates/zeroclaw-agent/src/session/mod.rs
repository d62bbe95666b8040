//! Sessions in memory: who is attached, which turn runs, what awaits an answer.
//!
//! A session outlives its connections: it lives in the store, and is held here only while a
//! connection is attached to it or a turn runs in it. Events go to every attached
//! connection through that connection's bounded queue. Overflow rule: a turn streaming
//! from its provider keeps to the pace of its clients: while an attached connection's queue
//! is more than three quarters full, the turn stops reading the provider until that queue
//! is back to half, so a client that reads as fast as it can loses nothing. A connection
//! that does not get there within `EVENT_STALL_GRACE` (`pace.rs`), or whose queue is full when an
//! event is sent, is detached and closed (logged), so one stalled client holds a turn up
//! for seconds at most and never loses memory to it; it can reconnect and `session/load`
//! with `replay` to catch up.
//!
//! No lock here is held across the store: a turn stores an event, then sends it; a
//! `session/load` registers, reads the history, then settles what it holds. How that still
//! gets a joining connection every event exactly once is in `audience.rs`.

mod audience;
mod chunk_frame;
mod fit;
mod frame_buf;
mod mode;
mod pace;
mod replay_frame;
mod steer;

use crate::link::{Link, Notification};
use crate::mcp::Mcp;
use crate::provider::window::Calibration;
use crate::store::{SessionRow, Store, StoreError};
use audience::{Audience, Replayed, Stalled, Streaming, Tag};
use chunk_frame::ChunkFramer;
use replay_frame::{ReplayFramer, ReplayPage};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use zeroclaw_protocol::{Decision, Update};

/// Rows a replay reads at once, at most (and at most `replay_frame::PAGE_BYTES` of
/// frames): a joining connection's history costs two such pages of memory (one being sent
/// while the next is read), however long the session. Fewer, larger pages cost fewer
/// queries and hand-offs between the store's thread and the connection: at 100,000
/// messages 1,024 rows took 1.35-1.45x the floor's time against 256 rows' 1.64x.
const REPLAY_PAGE: usize = 1024;

/// Why a join with replay ended early.
#[derive(Debug)]
pub enum JoinError {
    /// The history could not be read.
    Store(StoreError),
    /// The connection closed while its replay was being sent.
    Closed,
}

impl From<StoreError> for JoinError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

pub use audience::ConnId;
pub use fit::{fit_forwarded, fit_update};
pub use steer::SteerRefused;
use steer::Steers;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section here is a few map operations that leave the data consistent
    // even if a panic interrupts them.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// An `approval_request` waiting for `session/approve`.
struct PendingApproval {
    /// The event as sent, to re-send to a connection that loads the session mid-turn.
    event: Option<Notification>,
    /// A subagent's request: the event as its parent session's connections got it (tagged
    /// with the `task` call), re-sent to a connection that loads the parent meanwhile.
    forwarded: Option<Notification>,
    answer: oneshot::Sender<Decision>,
}

/// The turn running in a session.
pub struct ActiveTurn {
    pub id: String,
    pub cancel: CancellationToken,
    /// Cancelled once the turn has ended and left its session.
    pub finished: CancellationToken,
    approvals: Mutex<HashMap<String, PendingApproval>>,
    /// The turns of the subagents its `task` calls run: a decision sent to this turn's
    /// session for one of their approval requests reaches them (`decide`).
    children: Mutex<Vec<Arc<ActiveTurn>>>,
    /// `session/steer` messages the turn has not taken yet (`steer.rs`).
    steers: Mutex<Steers>,
}

impl ActiveTurn {
    pub fn new(id: String) -> Arc<Self> {
        Self::with_cancel(id, CancellationToken::new())
    }

    /// A subagent's turn, run by a `task` call of `parent`: cancelled with it.
    pub fn child_of(parent: &ActiveTurn, id: String) -> Arc<Self> {
        Self::with_cancel(id, parent.cancel.child_token())
    }

    fn with_cancel(id: String, cancel: CancellationToken) -> Arc<Self> {
        Arc::new(Self {
            id,
            cancel,
            finished: CancellationToken::new(),
            approvals: Mutex::new(HashMap::new()),
            children: Mutex::new(Vec::new()),
            steers: Mutex::new(Steers::default()),
        })
    }

    /// Queues a `session/steer` message for the turn's next step.
    pub fn steer(&self, text: String) -> Result<(), SteerRefused> {
        lock(&self.steers).push(text)
    }

    /// The steer messages waiting, oldest first, taken from the queue.
    pub fn take_steers(&self) -> Vec<String> {
        lock(&self.steers).take()
    }

    /// The steer messages waiting; if there are none, the queue is closed (the turn is
    /// about to end) and every later `steer` is refused as [`SteerRefused::Ended`].
    pub fn take_steers_or_close(&self) -> Vec<String> {
        lock(&self.steers).take_or_close()
    }

    /// Adds a subagent's turn (see `children`).
    pub fn add_child(&self, child: Arc<ActiveTurn>) {
        lock(&self.children).push(child);
    }

    pub fn remove_child(&self, id: &str) {
        lock(&self.children).retain(|c| c.id != id);
    }

    /// Registers an approval request; the receiver yields the decision.
    pub fn add_approval(
        &self,
        request_id: &str,
        event: Option<Notification>,
    ) -> oneshot::Receiver<Decision> {
        let (tx, rx) = oneshot::channel();
        lock(&self.approvals).insert(
            request_id.to_owned(),
            PendingApproval {
                event,
                forwarded: None,
                answer: tx,
            },
        );
        rx
    }

    /// Records how a subagent's pending request `request_id` was forwarded to the parent
    /// session (`Session::send_registered`).
    pub fn set_forwarded(&self, request_id: &str, frame: Option<&Notification>) {
        if let Some(pending) = lock(&self.approvals).get_mut(request_id) {
            pending.forwarded = frame.cloned();
        }
    }

    pub fn remove_approval(&self, request_id: &str) {
        lock(&self.approvals).remove(request_id);
    }

    /// Approval requests waiting for a decision.
    pub fn approvals_waiting(&self) -> usize {
        lock(&self.approvals).len()
    }

    /// The turn waits for an answer: to one of its requests or of its subagents'.
    pub fn is_waiting(&self) -> bool {
        self.approvals_waiting() > 0
            || lock(&self.children)
                .iter()
                .any(|child| child.approvals_waiting() > 0)
    }

    /// Delivers a decision to this turn's request or to one of its subagents';
    /// `false` if no such request is pending.
    pub fn decide(&self, request_id: &str, decision: Decision) -> bool {
        if let Some(pending) = lock(&self.approvals).remove(request_id) {
            let _ = pending.answer.send(decision);
            return true;
        }
        let children = lock(&self.children).clone();
        children
            .iter()
            .any(|child| child.decide(request_id, decision))
    }

    /// The requests waiting, as a connection loading the session mid-turn is sent them:
    /// this turn's, then its subagents' (tagged, as forwarded).
    fn pending_events(&self) -> Vec<Notification> {
        let mut events: Vec<Notification> = lock(&self.approvals)
            .values()
            .filter_map(|p| p.event.clone())
            .collect();
        let children = lock(&self.children).clone();
        for child in children {
            events.extend(
                lock(&child.approvals)
                    .values()
                    .filter_map(|p| p.forwarded.clone()),
            );
        }
        events
    }
}

pub struct Session {
    pub id: String,
    pub cwd: String,
    /// The session's own sandbox (`session/new {sandbox}`, an unattended entry's); `None`:
    /// `[sandbox]`'s.
    pub sandbox: Option<crate::sandbox::Choice>,
    /// The model of the session's turns: each turn takes it when it starts
    /// (`session/set_model` changes it for the next turn).
    model: Mutex<String>,
    /// Held by `session/set_model` across storing the model and setting it here, so two
    /// changes at once leave the store and the memory agreeing.
    pub model_change: tokio::sync::Mutex<()>,
    /// `daemon.max_frame_bytes`: no event frame is longer (`fit.rs`).
    frame_cap: usize,
    audience: Mutex<Audience>,
    always_allow: Mutex<HashSet<String>>,
    turn: Mutex<Option<Arc<ActiveTurn>>>,
    /// How the provider counts this session's requests against our estimate (learnt from
    /// each call's reported input tokens; kept while the session is in memory).
    calibration: Mutex<Calibration>,
    /// The session's own MCP servers (`session/new {mcpServers}`), stopped when the session
    /// leaves memory: no connection attached and no turn running.
    mcp: Mutex<Option<Arc<Mcp>>>,
    /// The permission mode (`mode.rs`): read at every model call and every tool call.
    mode: Mutex<zeroclaw_protocol::methods::PermissionMode>,
    /// Held across storing a mode and setting it here (`mode.rs`).
    mode_change: tokio::sync::Mutex<()>,
    /// A subagent's session (made by a `task` call): it is never offered `task` itself.
    pub child: bool,
    /// While a `task` call runs this (child) session: where its events are forwarded.
    forward: Mutex<Option<Arc<Forward>>>,
}

/// Where a subagent's events go besides its own session's clients: to its parent
/// session's, in the parent's turn, tagged with the `task` call (`fit_forwarded`). Its
/// `turn_complete` is not forwarded: the call's `tool_result` says it ended.
pub struct Forward {
    pub parent: Arc<Session>,
    pub turn_id: String,
    pub tool_call_id: String,
}

impl Session {
    pub fn mcp(&self) -> Option<Arc<Mcp>> {
        lock(&self.mcp).clone()
    }

    /// Gives the session its own MCP servers; servers it had are stopped.
    pub fn set_mcp(&self, mcp: Mcp) {
        if let Some(old) = lock(&self.mcp).replace(Arc::new(mcp)) {
            old.stop_now();
        }
    }

    /// Stops the session's own MCP servers (in the background).
    fn stop_mcp(&self) {
        if let Some(mcp) = lock(&self.mcp).take() {
            mcp.stop_now();
        }
    }

    fn from_row(row: &SessionRow, frame_cap: usize) -> Self {
        Self {
            id: row.id.clone(),
            cwd: row.cwd.clone(),
            sandbox: row.sandbox,
            model: Mutex::new(row.model.clone()),
            model_change: tokio::sync::Mutex::new(()),
            frame_cap,
            audience: Mutex::new(Audience::default()),
            always_allow: Mutex::new(row.always_allow.iter().cloned().collect()),
            turn: Mutex::new(None),
            calibration: Mutex::new(Calibration::default()),
            mcp: Mutex::new(None),
            child: row.parent.is_some(),
            forward: Mutex::new(None),
            mode: Mutex::new(row.mode),
            mode_change: tokio::sync::Mutex::new(()),
        }
    }

    /// Forwards this session's events to its parent's clients from now on (`None`: stops).
    pub fn set_forward(&self, forward: Option<Forward>) {
        *lock(&self.forward) = forward.map(Arc::new);
    }

    fn forwarding(&self) -> Option<Arc<Forward>> {
        lock(&self.forward).clone()
    }

    /// Sends `update` to the parent session's clients, if this session's events are
    /// forwarded (see [`Forward`]). Called with no lock of this session held.
    fn forward(&self, to: &Forward, update: Update<'_>) {
        if matches!(update, Update::TurnComplete { .. }) {
            return;
        }
        let frames = fit_forwarded(
            (&to.parent.id, &to.turn_id),
            &to.tool_call_id,
            &self.id,
            update,
            self.frame_cap,
        );
        to.parent.send(&Tag::Live, frames);
    }

    /// The model the session's next turn uses.
    pub fn model(&self) -> String {
        lock(&self.model).clone()
    }

    /// Sets the model of the next turns; returns the one it replaces. Store it first.
    pub fn set_model(&self, model: String) -> String {
        std::mem::replace(&mut *lock(&self.model), model)
    }

    pub fn is_attached(&self, conn: ConnId) -> bool {
        lock(&self.audience).contains(conn)
    }

    pub fn active_turn(&self) -> Option<Arc<ActiveTurn>> {
        lock(&self.turn).clone()
    }

    /// Installs `turn` unless one is running; on conflict returns the running turn's id.
    pub fn try_start(&self, turn: Arc<ActiveTurn>) -> Result<(), String> {
        let mut slot = lock(&self.turn);
        if let Some(running) = slot.as_ref() {
            return Err(running.id.clone());
        }
        *slot = Some(turn);
        drop(slot);
        // Text a turn that was aborted mid-stream left behind is not this turn's. (The turn
        // lock is released first: `Sessions::join` takes the audience lock, then this one.)
        lock(&self.audience).streaming = Streaming::default();
        Ok(())
    }

    pub fn clear_turn(&self, turn_id: &str) {
        let mut slot = lock(&self.turn);
        if slot.as_ref().is_some_and(|t| t.id == turn_id) {
            *slot = None;
        }
    }

    pub fn calibration(&self) -> Calibration {
        *lock(&self.calibration)
    }

    pub fn set_calibration(&self, calibration: Calibration) {
        *lock(&self.calibration) = calibration;
    }

    pub fn is_always_allowed(&self, tool: &str) -> bool {
        lock(&self.always_allow).contains(tool)
    }

    /// Records `allow_always` for a tool; returns the full list to persist.
    pub fn allow_always(&self, tool: &str) -> Vec<String> {
        let mut set = lock(&self.always_allow);
        set.insert(tool.to_owned());
        let mut list: Vec<String> = set.iter().cloned().collect();
        list.sort();
        list
    }

    /// Sends a `session/update` that is never stored to every attached connection. See the
    /// module docs for the overflow rule.
    pub fn broadcast(&self, turn_id: &str, update: Update<'_>) {
        if let Some(to) = self.forwarding() {
            self.forward(&to, update.clone());
        }
        self.send(&Tag::Live, self.frames(turn_id, update));
    }

    /// Sends the event of the message stored as row `row`. Store first, then send: see
    /// `audience.rs` for why a joining connection then gets it exactly once.
    pub fn send_stored(&self, turn_id: &str, row: i64, update: Update<'_>) {
        if let Some(to) = self.forwarding() {
            self.forward(&to, update.clone());
        }
        self.send(&Tag::Row(row), self.frames(turn_id, update));
    }

    /// [`Session::send_stored`] for a message that belongs to no turn (a summary written
    /// by `session/compact`).
    pub fn send_stored_outside_turns(&self, row: i64, update: Update<'_>) {
        let frames = fit_update(&self.id, None, update, self.frame_cap);
        self.send(&Tag::Row(row), frames);
    }

    /// Sends a `session/update` that belongs to no turn and is never stored (a rewind, a
    /// fork) to every attached connection.
    pub fn broadcast_outside_turns(&self, update: Update<'_>) {
        let frames = fit_update(&self.id, None, update, self.frame_cap);
        self.send(&Tag::Live, frames);
    }

    /// Registers what an event announces (`register` gets the frame as sent) and sends it,
    /// as one step, so a connection joining meanwhile gets it once: an `approval_request`
    /// registered before it joined is in what it is sent first. `register` runs under the
    /// session's audience lock: it must never send on this session.
    /// In a subagent's session whose events are forwarded, `register_forwarded` likewise
    /// gets the frame the parent's connections are sent, under the parent's audience lock:
    /// a connection loading the parent gets it once too.
    pub fn send_registered<T>(
        &self,
        turn_id: &str,
        update: Update<'_>,
        register: impl FnOnce(Option<&Notification>) -> T,
        register_forwarded: impl FnOnce(Option<&Notification>),
    ) -> T {
        let forwarded = self.forwarding().map(|to| (to, update.clone()));
        // Only text chunks are split (`fit.rs`): what is registered here is one frame.
        let frames = self.frames(turn_id, update);
        let mut audience = lock(&self.audience);
        let registered = register(frames.first());
        let stalled = send_all(&mut audience, &Tag::Live, &frames);
        drop(audience);
        self.close_stalled(stalled);
        if let Some((to, update)) = forwarded {
            let frames = fit_forwarded(
                (&to.parent.id, &to.turn_id),
                &to.tool_call_id,
                &self.id,
                update,
                self.frame_cap,
            );
            let mut audience = lock(&to.parent.audience);
            register_forwarded(frames.first());
            let stalled = send_all(&mut audience, &Tag::Live, &frames);
            drop(audience);
            to.parent.close_stalled(stalled);
        }
        registered
    }

    /// Sends a streamed chunk of step `step`'s answer (or, with `thought`, of its
    /// reasoning) and adds it to the text in progress a joining connection is sent.
    pub fn stream_chunk(&self, turn_id: &str, step: i64, thought: bool, text: &str) {
        let tag = Tag::Text {
            turn_id: turn_id.to_owned(),
            step,
            thought,
        };
        let mut audience = lock(&self.audience);
        let streaming = &mut audience.streaming;
        if streaming.turn_id != turn_id || streaming.step != step {
            *streaming = Streaming {
                turn_id: turn_id.to_owned(),
                step,
                framer: Some(ChunkFramer::new(&self.id, turn_id, self.frame_cap)),
                ..Streaming::default()
            };
        }
        // Almost every chunk fits one frame, written from the model call's prefix; one
        // over the cap is split by `fit_update`.
        let framed = streaming
            .framer
            .as_mut()
            .and_then(|framer| framer.frame(thought, text));
        let split;
        let frames = match &framed {
            Some(frame) => std::slice::from_ref(frame),
            None => {
                split = self.frames(turn_id, Update::chunk(thought, text));
                split.as_slice()
            }
        };
        if frames.is_empty() {
            return;
        }
        let so_far = if thought {
            &mut streaming.thought
        } else {
            &mut streaming.text
        };
        so_far.push_str(text);
        let stalled = send_all(&mut audience, &tag, frames);
        drop(audience);
        self.close_stalled(stalled);
        if let Some(to) = self.forwarding() {
            self.forward(&to, Update::chunk(thought, text));
        }
    }

    /// Forgets the text in progress once the model call's text has been stored (or failed
    /// to be): a connection joining from now on reads it in the history.
    pub fn streamed_stored(&self) {
        lock(&self.audience).streaming = Streaming::default();
    }

    /// The events held for a connection joining with `session/load`, to send next; `None`
    /// once it is live.
    pub fn go_live(&self, conn: ConnId) -> Option<Vec<Notification>> {
        lock(&self.audience).go_live(conn)
    }

    /// The frames of one of this session's events, each within the frame cap.
    pub fn frames(&self, turn_id: &str, update: Update<'_>) -> Vec<Notification> {
        fit_update(&self.id, Some(turn_id), update, self.frame_cap)
    }

    fn send(&self, tag: &Tag, frames: Vec<Notification>) {
        if frames.is_empty() {
            return;
        }
        let stalled = send_all(&mut lock(&self.audience), tag, &frames);
        self.close_stalled(stalled);
    }

    fn close_stalled(&self, stalled: Vec<Stalled>) {
        for (conn, peer) in stalled {
            self.stalled(conn, &peer);
        }
    }

    fn stalled(&self, conn: ConnId, peer: &Arc<dyn Link>) {
        tracing::warn!(peer = %peer.label(), conn, session = %self.id, "client is not reading its events; detaching and closing it");
        peer.close();
    }

    /// What a connection joining now is sent first, ahead of its live events: with
    /// `replay`, the running model call's text so far; and the running turn's unanswered
    /// `approval_request` events, as first sent.
    fn first_frames(&self, audience: &Audience, replay: bool) -> Vec<(Tag, Notification)> {
        let Some(turn) = self.active_turn() else {
            return Vec::new();
        };
        let mut first = Vec::new();
        let streaming = &audience.streaming;
        if replay && streaming.turn_id == turn.id {
            for (thought, text) in [(true, &streaming.thought), (false, &streaming.text)] {
                if text.is_empty() {
                    continue;
                }
                let tag = Tag::Text {
                    turn_id: turn.id.clone(),
                    step: streaming.step,
                    thought,
                };
                let frames = self.frames(&turn.id, Update::chunk(thought, text.as_str()));
                first.extend(frames.into_iter().map(|f| (tag.clone(), f)));
            }
        }
        first.extend(turn.pending_events().into_iter().map(|f| (Tag::Live, f)));
        first
    }
}

/// Sends `frames` in order; the connections found stalled on the way.
fn send_all(audience: &mut Audience, tag: &Tag, frames: &[Notification]) -> Vec<Stalled> {
    let mut stalled = Vec::new();
    for frame in frames {
        stalled.extend(audience.send(tag, frame));
    }
    stalled
}

/// The sessions held in memory, in front of the store.
pub struct Sessions {
    pub store: Store,
    live: Mutex<HashMap<String, Arc<Session>>>,
    /// `daemon.max_frame_bytes`, for every session's events.
    frame_cap: usize,
    /// Sessions in the store, kept here so `status` never queries the database.
    total: std::sync::atomic::AtomicI64,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions").finish_non_exhaustive()
    }
}

impl Sessions {
    /// `total`: how many sessions `store` holds; `frame_cap`: `daemon.max_frame_bytes`.
    pub fn new(store: Store, total: i64, frame_cap: usize) -> Self {
        Self {
            store,
            live: Mutex::new(HashMap::new()),
            frame_cap,
            total: std::sync::atomic::AtomicI64::new(total),
        }
    }

    /// How many sessions the store holds.
    pub fn total(&self) -> i64 {
        self.total.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Keeps [`Sessions::total`] true: +1 after a create, -1 after a delete that removed a row.
    pub fn count_change(&self, delta: i64) {
        self.total
            .fetch_add(delta, std::sync::atomic::Ordering::Relaxed);
    }

    /// The session if it is held in memory (attached or running). A connection can only be
    /// attached to a session held here, so checks of attachment never need the store.
    pub fn live(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.live).get(id).cloned()
    }

    /// The session, from memory or the store; `None` if it does not exist. A session read
    /// from the store stays in memory only until [`Sessions::evict_if_idle`] finds it idle,
    /// so call that if the caller does not attach.
    pub async fn get(&self, id: &str) -> Result<Option<Arc<Session>>, StoreError> {
        if let Some(session) = self.live(id) {
            return Ok(Some(session));
        }
        let Some(row) = self.store.session(id).await? else {
            return Ok(None);
        };
        let mut live = lock(&self.live);
        // Another caller may have loaded it meanwhile; keep the first.
        let session = live
            .entry(row.id.clone())
            .or_insert_with(|| Arc::new(Session::from_row(&row, self.frame_cap)))
            .clone();
        Ok(Some(session))
    }

    pub fn create(&self, row: &SessionRow) -> Arc<Session> {
        let session = Arc::new(Session::from_row(row, self.frame_cap));
        lock(&self.live).insert(row.id.clone(), session.clone());
        session
    }

    pub fn attach(&self, session: &Session, conn: ConnId, peer: &Arc<dyn Link>) {
        lock(&session.audience).add_live(conn, peer);
    }

    /// Joins `conn` to a running or idle session: registers it (its live events are held
    /// from here on), then, with `replay`, reads the history a page at a time (no lock
    /// held), hands each page to `send` (oldest first) and drops the held events the
    /// history had (see `audience.rs`). Then send what [`Session::go_live`] returns, until
    /// it returns `None`. On an error the connection is no longer joining.
    pub async fn join<Send, Sent, E>(
        &self,
        session: &Session,
        conn: ConnId,
        peer: &Arc<dyn Link>,
        replay: bool,
        mut send: Send,
    ) -> Result<(), JoinError>
    where
        Send: FnMut(Vec<Notification>) -> Sent,
        Sent: Future<Output = Result<(), E>>,
    {
        {
            let mut audience = lock(&session.audience);
            let first = session.first_frames(&audience, replay);
            audience.add_joining(conn, peer, first);
        }
        if !replay {
            return Ok(());
        }
        let mut replayed = Replayed::default();
        let framer = Arc::new(ReplayFramer::new(&session.id, self.frame_cap));
        let read_page = |after: i64| {
            let framer = framer.clone();
            self.store.replay_page(
                &session.id,
                after,
                REPLAY_PAGE,
                ReplayPage::default(),
                move |page, row| framer.add(page, row),
            )
        };
        // The next page is read (and framed, on the store's thread) while this one is
        // sent: the two overlap, and at most two pages are in memory.
        let read = async {
            let mut page = read_page(0).await?;
            loop {
                let held = lock(&session.audience).held_texts(conn);
                replayed.add_page(page.last_id, &page.streamed, |key| held.contains(key));
                let Some(after) = page.last_id else {
                    return Ok(());
                };
                if page.is_last(REPLAY_PAGE) {
                    return send(page.frames).await.map_err(|_| JoinError::Closed);
                }
                let (sent, next) = tokio::join!(send(page.frames), read_page(after));
                sent.map_err(|_| JoinError::Closed)?;
                page = next?;
            }
        };
        match read.await {
            Ok(()) => {
                lock(&session.audience).replayed(conn, &replayed);
                Ok(())
            }
            Err(e) => {
                lock(&session.audience).remove(conn);
                Err(e)
            }
        }
    }

    pub fn detach(&self, session_id: &str, conn: ConnId) {
        let session = lock(&self.live).get(session_id).cloned();
        if let Some(session) = session {
            lock(&session.audience).remove(conn);
            self.evict_if_idle(&session);
        }
    }

    /// Drops a session from memory once nothing needs it there.
    pub fn evict_if_idle(&self, session: &Session) {
        let mut live = lock(&self.live);
        if lock(&session.audience).is_empty()
            && session.active_turn().is_none()
            && let Some(gone) = live.remove(&session.id)
        {
            gone.stop_mcp();
        }
    }

    pub fn forget(&self, session_id: &str) {
        if let Some(gone) = lock(&self.live).remove(session_id) {
            gone.stop_mcp();
        }
    }

    /// Stops every session's own MCP servers (daemon shutdown), waiting at most `wait`.
    pub async fn stop_mcp(&self, wait: std::time::Duration) {
        let all: Vec<Arc<Mcp>> = lock(&self.live).values().filter_map(|s| s.mcp()).collect();
        for mcp in all {
            mcp.stop(wait).await;
        }
    }

    /// Sessions held in memory (attached, running, or read a moment ago).
    pub fn loaded_count(&self) -> usize {
        lock(&self.live).len()
    }

    /// Approval requests waiting for a decision, in every running turn.
    pub fn approvals_waiting(&self) -> usize {
        lock(&self.live)
            .values()
            .filter_map(|s| s.active_turn())
            .map(|turn| turn.approvals_waiting())
            .sum()
    }

    pub fn running_count(&self) -> usize {
        lock(&self.live)
            .values()
            .filter(|s| s.active_turn().is_some())
            .count()
    }

    pub fn is_running(&self, session_id: &str) -> bool {
        lock(&self.live)
            .get(session_id)
            .is_some_and(|s| s.active_turn().is_some())
    }

    /// Whether the session's running turn waits for an answer to an approval request.
    pub fn is_waiting(&self, session_id: &str) -> bool {
        lock(&self.live)
            .get(session_id)
            .and_then(|s| s.active_turn())
            .is_some_and(|turn| turn.is_waiting())
    }

    /// Cancels every running turn (daemon shutdown).
    pub fn cancel_all(&self) -> usize {
        let live = lock(&self.live);
        let mut n = 0;
        for session in live.values() {
            if let Some(turn) = session.active_turn() {
                turn.cancel.cancel();
                n += 1;
            }
        }
        n
    }
}

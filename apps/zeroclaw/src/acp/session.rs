//! One session the editor opened (`session/new` or `session/load`): a pump that forwards
//! its events to the editor in order, and the permission requests its approvals become.

use super::{config, mapping};
use agent_client_protocol::Client as Editor;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, Notice, NoticeSeverity, RequestPermissionOutcome, RequestPermissionRequest,
    SessionNotification, SessionUpdate as AcpUpdate,
};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use zeroclaw_client::{Client, Decision, SessionUpdate, Update};

/// Flush requests waiting for the pump. Overflow rule: a full queue makes the caller wait
/// (each request is one prompt or load answer, so there are few).
const FLUSH_QUEUE: usize = 16;

pub struct SessionLink {
    pub id: String,
    /// The session's stored working directory: the editor's paths are absolute against it.
    pub cwd: PathBuf,
    /// What its config options show (`config.rs`).
    pub config: config::Shared,
    flush: mpsc::Sender<oneshot::Sender<()>>,
    /// The editor's `session/cancel`s still on their way to the daemon.
    pub cancels: CancelGate,
    /// How many of the editor's prompts in this session are not yet answered.
    prompts: Arc<watch::Sender<usize>>,
}

/// A prompt of the editor's in flight: counted until dropped (its answer sent).
pub struct PromptInFlight(Arc<watch::Sender<usize>>);

impl Drop for PromptInFlight {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// Orders the editor's `session/cancel` before the permission answers that follow it.
///
/// ACP has the editor send `session/cancel` and then answer each permission request it
/// holds `cancelled`. The SDK runs the cancel handler before it routes the later answer, but
/// the two reach the daemon by separate calls: were the refusal to arrive first, the turn
/// would go on to its next model call before the cancel stops it. So the handler counts the
/// cancel as begun at once, and an answer waits until every cancel begun before it has been
/// answered by the daemon (the turn is then stopping, and refuses the call itself).
#[derive(Clone)]
pub struct CancelGate {
    /// (begun, answered)
    counts: Arc<watch::Sender<(u64, u64)>>,
}

/// A cancel begun: counted as answered when dropped, whatever became of the call.
pub struct CancelTicket(CancelGate);

impl Drop for CancelTicket {
    fn drop(&mut self) {
        self.0.counts.send_modify(|(_, answered)| *answered += 1);
    }
}

impl CancelGate {
    fn new() -> Self {
        Self {
            counts: Arc::new(watch::channel((0, 0)).0),
        }
    }

    /// Counts a cancel as begun; call it in the editor's message handler, before spawning.
    pub fn begin(&self) -> CancelTicket {
        self.counts.send_modify(|(begun, _)| *begun += 1);
        CancelTicket(self.clone())
    }

    /// Returns once every cancel begun so far has been answered.
    async fn settled(&self) {
        let begun = self.counts.borrow().0;
        let mut counts = self.counts.subscribe();
        let _ = counts.wait_for(|(_, answered)| *answered >= begun).await;
    }
}

impl SessionLink {
    /// Starts the pump of the session's `events` (subscribed before anything of interest
    /// could be sent).
    pub fn start(
        opened: Opened,
        events: broadcast::Receiver<SessionUpdate>,
        editor: ConnectionTo<Editor>,
        daemon: Option<Arc<Client>>,
        config: config::Shared,
    ) -> Arc<Self> {
        let (flush, flushes) = mpsc::channel(FLUSH_QUEUE);
        let cancels = CancelGate::new();
        let Opened {
            id,
            cwd,
            compaction,
        } = opened;
        let pump = Pump {
            id: id.clone(),
            cwd: cwd.clone(),
            compactions: compaction.then(|| std::sync::atomic::AtomicU64::new(0)),
            config: config.clone(),
            editor,
            daemon,
            ended: watch::channel(None).0,
            resolved: watch::channel(None).0,
            cancels: cancels.clone(),
        };
        tokio::spawn(pump.run(events, flushes));
        Arc::new(Self {
            id,
            cwd,
            config,
            flush,
            cancels,
            prompts: Arc::new(watch::channel(0).0),
        })
    }

    /// Counts a prompt as in flight until the returned guard is dropped.
    pub fn prompt_begun(&self) -> PromptInFlight {
        self.prompts.send_modify(|n| *n += 1);
        PromptInFlight(self.prompts.clone())
    }

    /// Whether a prompt of the editor's is in flight here.
    pub fn prompting(&self) -> bool {
        *self.prompts.borrow() > 0
    }

    /// Returns once no prompt of the editor's is in flight here.
    pub async fn prompts_answered(&self) {
        let mut prompts = self.prompts.subscribe();
        let _ = prompts.wait_for(|n| *n == 0).await;
    }

    /// Returns once every event received so far has been sent to the editor: call it with
    /// an answer in hand (the daemon sends a turn's or a replay's events before it).
    pub async fn flush(&self) {
        let (done, flushed) = oneshot::channel();
        if self.flush.send(done).await.is_ok() {
            let _ = flushed.await;
        }
    }

    /// Tells the editor the daemon is gone, in this session.
    pub fn notify_gone(&self, editor: &ConnectionTo<Editor>) {
        let notice = Notice::new(NoticeSeverity::Error, mapping::DAEMON_GONE);
        let sent = editor.send_notification(SessionNotification::new(
            self.id.clone(),
            AcpUpdate::Notice(notice),
        ));
        if let Err(e) = sent {
            tracing::warn!(session = %self.id, "the notice was not sent: {e}");
        }
    }
}

/// A session as the editor opened it.
pub struct Opened {
    pub id: String,
    /// Its stored working directory.
    pub cwd: PathBuf,
    /// The editor shows `compaction_update`s (`session.compaction`).
    pub compaction: bool,
}

/// Forwards one session's events to the editor.
struct Pump {
    id: String,
    cwd: PathBuf,
    /// With `session.compaction`: how many compactions were forwarded (each gets an id of
    /// its own); `None`: the editor is sent none.
    compactions: Option<std::sync::atomic::AtomicU64>,
    config: config::Shared,
    editor: ConnectionTo<Editor>,
    daemon: Option<Arc<Client>>,
    /// The last turn that ended: a permission request of it still open is withdrawn.
    ended: watch::Sender<Option<String>>,
    /// The last approval request settled (`approval_resolved`): answered by another client,
    /// timed out or cancelled; the editor's permission request for it is withdrawn. The
    /// latest is enough: a session's turn waits on one approval at a time, and the next is
    /// asked only after this one is settled.
    resolved: watch::Sender<Option<String>>,
    cancels: CancelGate,
}

impl Pump {
    async fn run(
        self,
        mut events: broadcast::Receiver<SessionUpdate>,
        mut flushes: mpsc::Receiver<oneshot::Sender<()>>,
    ) {
        loop {
            tokio::select! {
                biased;
                flush = flushes.recv() => {
                    let Some(done) = flush else { return };
                    loop {
                        match events.try_recv() {
                            Ok(update) => self.forward(update),
                            Err(TryRecvError::Lagged(n)) => self.lagged(n),
                            Err(TryRecvError::Empty | TryRecvError::Closed) => break,
                        }
                    }
                    let _ = done.send(());
                }
                event = events.recv() => match event {
                    Ok(update) => self.forward(update),
                    Err(RecvError::Lagged(n)) => self.lagged(n),
                    // The daemon connection is gone; flushes are answered at once.
                    Err(RecvError::Closed) => {
                        while let Some(done) = flushes.recv().await {
                            let _ = done.send(());
                        }
                        return;
                    }
                },
            }
        }
    }

    fn lagged(&self, n: u64) {
        tracing::warn!(session = %self.id, "the editor fell behind: {n} events were not forwarded");
    }

    fn forward(&self, event: SessionUpdate) {
        let turn_id = event.turn_id.as_deref().map(str::to_owned);
        if let Some(parent_tool_call_id) = event.parent_tool_call_id.as_deref() {
            let child = mapping::ChildTag {
                parent_tool_call_id,
                child_session_id: event.child_session_id.as_deref(),
            };
            return self.forward_child(&child, event.update, turn_id);
        }
        match event.update {
            Update::ApprovalRequest {
                request_id,
                tool_call_id,
                name,
                raw_input,
                options,
                ..
            } => {
                let request = RequestPermissionRequest::new(
                    self.id.clone(),
                    mapping::tool_call_fields(&tool_call_id, &name, &raw_input, &self.cwd),
                    mapping::permission_options(&options),
                );
                self.ask(request, request_id, turn_id);
            }
            Update::TurnComplete { .. } => {
                self.ended.send_replace(turn_id);
            }
            Update::ApprovalResolved { request_id, .. } => {
                self.resolved.send_replace(Some(request_id));
            }
            Update::ContextCompacted {
                summary,
                messages_folded,
            } => {
                if let Some(count) = &self.compactions {
                    let n = count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                    let id = mapping::compaction_id(turn_id.as_deref(), n);
                    self.notify(Some(mapping::compaction(id, &summary, messages_folded)));
                }
            }
            update => {
                self.notify(mapping::update(&update, &self.cwd));
                // A mode changed anywhere is also a config option changed.
                if let Update::ModeChanged { mode, .. } = update {
                    let options = {
                        let mut current = config::lock(&self.config);
                        current.mode = mode;
                        config::options(&current)
                    };
                    self.notify(Some(AcpUpdate::ConfigOptionUpdate(
                        ConfigOptionUpdate::new(options),
                    )));
                }
            }
        }
    }

    /// A subagent's event (`mapping::child_update`). Its approval requests are asked of the
    /// editor as the parent's are, answered on the parent session; its `turn_complete` and
    /// `approval_resolved` never come tagged (the child's end is the task call's result, and
    /// a settled request is announced in the parent's session untagged as any other).
    fn forward_child(
        &self,
        child: &mapping::ChildTag<'_>,
        update: Update,
        turn_id: Option<String>,
    ) {
        match update {
            Update::ApprovalRequest {
                request_id,
                tool_call_id,
                name,
                raw_input,
                options,
                ..
            } => {
                let request = RequestPermissionRequest::new(
                    self.id.clone(),
                    child.call_fields(&tool_call_id, &name, &raw_input, &self.cwd),
                    mapping::permission_options(&options),
                );
                self.ask(request, request_id, turn_id);
            }
            Update::ApprovalResolved { request_id, .. } => {
                self.resolved.send_replace(Some(request_id));
            }
            update => self.notify(mapping::child_update(child, &update, &self.cwd)),
        }
    }

    fn notify(&self, update: Option<AcpUpdate>) {
        if let Some(update) = update {
            let sent = self
                .editor
                .send_notification(SessionNotification::new(self.id.clone(), update));
            if let Err(e) = sent {
                tracing::debug!(session = %self.id, "an update was not sent: {e}");
            }
        }
    }

    /// Asks the editor for permission and answers the daemon's approval with its choice.
    /// A cancelled request is a refusal; a request still open when it is settled elsewhere
    /// (`approval_resolved`: another client answered, it timed out, the turn was cancelled)
    /// or when its turn ends is withdrawn (`$/cancel_request`) and its late answer ignored.
    fn ask(&self, request: RequestPermissionRequest, request_id: String, turn_id: Option<String>) {
        let Some(daemon) = self.daemon.clone() else {
            return;
        };
        let sent = self.editor.send_request(request);
        let withdraw = sent.cancellation_handle();
        let mut ended = self.ended.subscribe();
        let mut resolved = self.resolved.subscribe();
        let session_id = self.id.clone();
        let cancels = self.cancels.clone();
        tokio::spawn(async move {
            let turn_over = async {
                let turn = turn_id.clone();
                let _ = ended.wait_for(|last| last.is_some() && *last == turn).await;
            };
            let decision = tokio::select! {
                answer = sent.block_task() => match answer {
                    Ok(response) => match response.outcome {
                        RequestPermissionOutcome::Selected(choice) => {
                            mapping::decision(&choice.option_id.0)
                        }
                        RequestPermissionOutcome::Cancelled => Decision::Reject,
                        _ => Decision::Reject,
                    },
                    Err(e) => {
                        tracing::warn!(session = %session_id, "session/request_permission failed: {e}; rejecting");
                        Decision::Reject
                    }
                },
                () = turn_over => {
                    let _ = withdraw.cancel();
                    return;
                }
                _ = resolved.wait_for(|last| last.as_deref() == Some(request_id.as_str())) => {
                    let _ = withdraw.cancel();
                    return;
                }
            };
            cancels.settled().await;
            if let Err(e) = daemon
                .session_approve(&session_id, &request_id, decision)
                .await
            {
                // The turn ended meanwhile (cancelled): the answer is moot.
                tracing::debug!(session = %session_id, "session/approve: {e}");
            }
        });
    }
}

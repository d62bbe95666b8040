//! `session/*`: create, list, load, read, prompt, cancel, approve, delete.

use super::{Ctx, Handle, Reply};
use crate::history;
use crate::session::{ActiveTurn, Joined, Session, update_frame};
use crate::state::DaemonState;
use crate::store::{SessionRow, StoreError};
use crate::turn::{self, Origin};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use zeroclaw_protocol::methods::{self as m, *};
use zeroclaw_protocol::{Update, codes};
use zeroclaw_rpc::{Notification, RpcError};

/// How long `session/delete` waits for a cancelled turn to wind down.
const DELETE_WAIT: Duration = Duration::from_secs(10);
const DEFAULT_PAGE: usize = 100;
const MAX_PAGE: usize = 1000;

fn storage(e: StoreError) -> RpcError {
    tracing::error!(error = %e, "storage failed");
    RpcError::internal(format!(
        "{e} (is the disk full, or the database read-only?)"
    ))
}

fn not_found(id: &str) -> RpcError {
    RpcError::new(
        codes::SESSION_NOT_FOUND,
        format!("no session {id:?}; `session/list` shows the sessions there are"),
    )
    .with_data(json!({ "sessionId": id }))
}

fn not_attached(id: &str) -> RpcError {
    RpcError::new(
        codes::NOT_ALLOWED,
        format!("this connection is not attached to session {id:?}; call `session/load` first"),
    )
    .with_data(json!({ "sessionId": id }))
}

fn busy(session: &Session, running: &str) -> RpcError {
    RpcError::new(
        codes::SESSION_BUSY,
        format!(
            "session {:?} is already running turn {running}; wait for it or `session/cancel` it",
            session.id
        ),
    )
    .with_data(json!({ "turnId": running }))
}

/// Fails with -32000 unless the session exists (in memory or in the store).
fn ensure_exists(daemon: &DaemonState, id: &str) -> Result<(), RpcError> {
    if daemon.sessions.live(id).is_some()
        || daemon
            .sessions
            .store
            .session(id)
            .map_err(storage)?
            .is_some()
    {
        Ok(())
    } else {
        Err(not_found(id))
    }
}

/// The session, if the calling connection is attached to it; -32003 if it exists but the
/// caller is not attached, -32000 if it does not exist.
fn attached(ctx: &Ctx, id: &str) -> Result<Arc<Session>, RpcError> {
    match ctx.0.daemon.sessions.live(id) {
        Some(session) if session.is_attached(ctx.0.id) => Ok(session),
        _ => {
            ensure_exists(&ctx.0.daemon, id)?;
            Err(not_attached(id))
        }
    }
}

fn summary(daemon: &DaemonState, row: &SessionRow) -> SessionSummary {
    SessionSummary {
        session_id: row.id.clone(),
        title: row.title.clone(),
        cwd: row.cwd.clone(),
        model: row.model.clone(),
        created_at: history::timestamp(row.created_at),
        updated_at: history::timestamp(row.updated_at),
        message_count: u64::try_from(row.message_count).unwrap_or(0),
        running: daemon.sessions.is_running(&row.id),
        turn_id: None,
    }
}

impl Handle for m::SessionNew {
    fn handle(ctx: Ctx, params: NewSessionParams) -> Reply<SessionInfo> {
        create(&ctx, params).into()
    }
}

fn create(ctx: &Ctx, p: NewSessionParams) -> Result<SessionInfo, RpcError> {
    let daemon = &ctx.0.daemon;
    let cwd = match p.cwd {
        Some(cwd) => std::path::PathBuf::from(cwd),
        None => std::env::current_dir().map_err(|e| {
            RpcError::internal(format!(
                "the daemon has no working directory: {e}; pass `cwd`"
            ))
        })?,
    };
    if !cwd.is_absolute() {
        return Err(RpcError::invalid_params(format!(
            "`cwd` must be an absolute path, got {}",
            cwd.display()
        )));
    }
    if !cwd.is_dir() {
        return Err(RpcError::invalid_params(format!(
            "`cwd` {} is not a directory",
            cwd.display()
        )));
    }
    let model = p
        .model
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| daemon.config.provider.model.clone());
    let id = uuid::Uuid::new_v4().to_string();
    let row = daemon
        .sessions
        .store
        .create_session(&id, p.title.as_deref(), &cwd.to_string_lossy(), &model)
        .map_err(storage)?;
    daemon.sessions.count_change(1);
    let session = daemon.sessions.create(&row);
    ctx.0.attach(&session);
    Ok(SessionInfo {
        session_id: row.id,
        cwd: row.cwd,
        model: row.model,
        title: row.title,
        created_at: history::timestamp(row.created_at),
    })
}

impl Handle for m::SessionList {
    fn handle(ctx: Ctx, _: NoParams) -> Reply<SessionListResult> {
        let daemon = &ctx.0.daemon;
        let listed = daemon.sessions.store.sessions().map_err(storage);
        Reply::Now(listed.map(|rows| SessionListResult {
            sessions: rows.iter().map(|row| summary(daemon, row)).collect(),
        }))
    }
}

impl Handle for m::SessionLoad {
    fn handle(ctx: Ctx, p: LoadParams) -> Reply<SessionSummary> {
        Reply::later(load(ctx, p))
    }
}

async fn load(ctx: Ctx, p: LoadParams) -> Result<SessionSummary, RpcError> {
    let daemon = ctx.0.daemon.clone();
    let session = daemon
        .sessions
        .get(&p.session_id)
        .map_err(storage)?
        .ok_or_else(|| not_found(&p.session_id))?;
    let loaded = replay_and_attach(&ctx, &session, p.replay).await;
    if loaded.is_err() {
        daemon.sessions.evict_if_idle(&session);
    }
    loaded
}

/// What a joining connection is sent before its live events: the history (with
/// `replay`), the running model call's text so far, and the unanswered approval requests.
fn first_frames(session: &Session, joined: &Joined) -> Vec<Notification> {
    let history = joined.rows.iter().filter_map(|row| {
        update_frame(
            &session.id,
            row.turn_id.as_deref(),
            history::replay_event(row),
        )
    });
    let mut frames: Vec<Notification> = history.collect();
    if let Some(turn_id) = &joined.turn_id {
        for (thought, text) in [
            (true, &joined.streaming.thought),
            (false, &joined.streaming.text),
        ] {
            if !text.is_empty() {
                frames.extend(update_frame(
                    &session.id,
                    Some(turn_id),
                    Update::chunk(thought, text.as_str()),
                ));
            }
        }
    }
    frames.extend(joined.approvals.iter().cloned());
    frames
}

/// Joins the caller to the session and sends what it must have first: the history (with
/// `replay`), the running model call's text so far, the unanswered approval requests, then
/// the live events held meanwhile. Answers the session's summary.
async fn replay_and_attach(
    ctx: &Ctx,
    session: &Session,
    replay: bool,
) -> Result<SessionSummary, RpcError> {
    let daemon = &ctx.0.daemon;
    let peer = &ctx.0.peer;
    let joined = ctx.0.join(session, replay).map_err(storage)?;
    let sent = async {
        let frames = first_frames(session, &joined);
        for frame in &frames {
            peer.send(frame).await?;
        }
        while let Some(held) = session.go_live(ctx.0.id) {
            for frame in &held {
                peer.send(frame).await?;
            }
        }
        Ok::<(), zeroclaw_rpc::NotifyError>(())
    };
    if sent.await.is_err() {
        daemon.sessions.detach(&session.id, ctx.0.id);
        return Err(RpcError::internal(
            "the connection closed during the replay",
        ));
    }
    let row = daemon
        .sessions
        .store
        .session(&session.id)
        .map_err(storage)?
        .ok_or_else(|| not_found(&session.id))?;
    Ok(SessionSummary {
        turn_id: session.active_turn().map(|turn| turn.id.clone()),
        ..summary(daemon, &row)
    })
}

impl Handle for m::SessionMessages {
    fn handle(ctx: Ctx, p: MessagesParams) -> Reply<MessagePage> {
        messages(&ctx, p).into()
    }
}

fn messages(ctx: &Ctx, p: MessagesParams) -> Result<MessagePage, RpcError> {
    let daemon = &ctx.0.daemon;
    ensure_exists(daemon, &p.session_id)?;
    let limit = p.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE);
    let (rows, total) = daemon
        .sessions
        .store
        .messages(&p.session_id, limit, p.before)
        .map_err(storage)?;
    Ok(MessagePage {
        messages: rows.iter().map(history::message).collect(),
        total: u64::try_from(total).unwrap_or(0),
    })
}

/// Clears the session's turn however the turn task ends, panics included, so a session
/// can never stay busy forever.
struct TurnSlot {
    daemon: Arc<DaemonState>,
    session: Arc<Session>,
    turn: Arc<ActiveTurn>,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl Drop for TurnSlot {
    fn drop(&mut self) {
        self.session.clear_turn(&self.turn.id);
        self.turn.finished.cancel();
        self.daemon.sessions.evict_if_idle(&self.session);
        self.daemon.clients.turn_ended();
    }
}

impl Handle for m::SessionPrompt {
    fn handle(ctx: Ctx, p: PromptParams) -> Reply<PromptResult> {
        // The checks and the start run inline, in frame order: a second prompt right behind
        // the first is answered -32002 deterministically.
        match start_turn(&ctx, p) {
            Ok(answer) => Reply::later(async move {
                answer.await.unwrap_or_else(|_| {
                    Err(RpcError::internal(
                        "the turn ended without a result; see the daemon log",
                    ))
                })
            }),
            Err(e) => Reply::Now(Err(e)),
        }
    }
}

type TurnAnswer = tokio::sync::oneshot::Receiver<Result<PromptResult, RpcError>>;

fn start_turn(ctx: &Ctx, p: PromptParams) -> Result<TurnAnswer, RpcError> {
    if p.prompt.trim().is_empty() {
        return Err(RpcError::invalid_params("`prompt` is empty"));
    }
    let conn = &ctx.0;
    let daemon = conn.daemon.clone();
    if daemon.shutdown.is_cancelled() {
        return Err(RpcError::internal("the daemon is shutting down"));
    }
    let session = attached(ctx, &p.session_id)?;
    // A busy session is busy whatever the turn limit: answer -32002 before looking for a slot.
    if let Some(running) = session.active_turn() {
        return Err(busy(&session, &running.id));
    }
    let Ok(permit) = daemon.turn_slots.clone().try_acquire_owned() else {
        let limit = daemon.config.agent.max_running_turns;
        return Err(RpcError::new(
            codes::LIMIT_REACHED,
            format!("{limit} turns are already running (agent.max_running_turns); wait for one to finish"),
        )
        .with_data(json!({ "limit": limit })));
    };
    let turn = ActiveTurn::new(uuid::Uuid::new_v4().to_string());
    if let Err(running) = session.try_start(turn.clone()) {
        return Err(busy(&session, &running));
    }
    let origin = Origin {
        peer: conn.peer.clone(),
        elicitation: conn.hello.get().is_some_and(|h| h.elicitation),
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    daemon.clients.turn_started();
    let slot = TurnSlot {
        daemon: daemon.clone(),
        session,
        turn,
        _permit: permit,
    };
    tracing::info!(session = %slot.session.id, turn = %slot.turn.id, peer = %conn.peer.label(), "turn started");
    daemon.turns.spawn(async move {
        let outcome = turn::run(&slot.daemon, &slot.session, &slot.turn, &origin, &p.prompt).await;
        match &outcome {
            Ok(result) => {
                tracing::info!(turn = %slot.turn.id, stop = result.stop_reason.as_str(), "turn ended");
            }
            Err(e) => tracing::warn!(turn = %slot.turn.id, error = %e, "turn failed"),
        }
        drop(slot);
        let _ = tx.send(outcome);
    });
    Ok(rx)
}

impl Handle for m::SessionCancel {
    fn handle(ctx: Ctx, p: SessionIdParams) -> Reply<CancelResult> {
        let cancelled = attached(&ctx, &p.session_id).map(|session| match session.active_turn() {
            Some(turn) => {
                turn.cancel.cancel();
                true
            }
            None => false,
        });
        Reply::Now(cancelled.map(|cancelled| CancelResult { cancelled }))
    }
}

impl Handle for m::SessionApprove {
    fn handle(ctx: Ctx, p: ApproveParams) -> Reply<Empty> {
        approve(&ctx, p).into()
    }
}

fn approve(ctx: &Ctx, p: ApproveParams) -> Result<Empty, RpcError> {
    let session = attached(ctx, &p.session_id)?;
    let decided = session
        .active_turn()
        .is_some_and(|turn| turn.decide(&p.request_id, p.decision));
    if !decided {
        return Err(RpcError::invalid_params(format!(
            "no approval request {:?} is pending in session {:?}; it may have been answered, timed out or cancelled",
            p.request_id, p.session_id
        ))
        .with_data(json!({ "requestId": p.request_id })));
    }
    Ok(Empty {})
}

impl Handle for m::SessionRename {
    fn handle(ctx: Ctx, p: RenameParams) -> Reply<Empty> {
        let title = p.title.as_deref().map(str::trim).filter(|t| !t.is_empty());
        let renamed = ctx
            .0
            .daemon
            .sessions
            .store
            .rename_session(&p.session_id, title)
            .map_err(storage);
        Reply::Now(match renamed {
            Ok(true) => Ok(Empty {}),
            Ok(false) => Err(not_found(&p.session_id)),
            Err(e) => Err(e),
        })
    }
}

impl Handle for m::SessionDelete {
    fn handle(ctx: Ctx, p: SessionIdParams) -> Reply<DeleteResult> {
        Reply::later(delete(ctx, p))
    }
}

async fn delete(ctx: Ctx, p: SessionIdParams) -> Result<DeleteResult, RpcError> {
    let daemon = ctx.0.daemon.clone();
    let running = daemon
        .sessions
        .live(&p.session_id)
        .and_then(|session| session.active_turn());
    if let Some(turn) = running {
        turn.cancel.cancel();
        if tokio::time::timeout(DELETE_WAIT, turn.finished.cancelled())
            .await
            .is_err()
        {
            return Err(RpcError::internal(format!(
                "the running turn did not stop within {DELETE_WAIT:?}; try again"
            )));
        }
    }
    let deleted = daemon
        .sessions
        .store
        .delete_session(&p.session_id)
        .map_err(storage)?;
    if deleted {
        daemon.sessions.count_change(-1);
    }
    daemon.sessions.forget(&p.session_id);
    Ok(DeleteResult { deleted })
}

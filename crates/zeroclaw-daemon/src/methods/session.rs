//! `session/*`: create, list, load, read, prompt, cancel, approve, delete.

use super::errors::{start_error, storage, turn_error};
use super::{Ctx, Handle, Reply};
use crate::config::McpServerConfig;
use crate::link;
use crate::state::DaemonState;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use zeroclaw_agent::history;
use zeroclaw_agent::link::Notification;
use zeroclaw_agent::session::{JoinError, Session, fit_update};
use zeroclaw_agent::store::{MessageRow, SessionRow};
use zeroclaw_agent::tools::spill;
use zeroclaw_agent::turn::{self, Origin};
use zeroclaw_protocol::codes;
use zeroclaw_protocol::methods::{self as m, *};
use zeroclaw_rpc::RpcError;

/// How long `session/delete` waits for a cancelled turn to wind down.
const DELETE_WAIT: Duration = Duration::from_secs(10);
const DEFAULT_PAGE: usize = 100;
const MAX_PAGE: usize = 1000;
const DEFAULT_LIST_PAGE: usize = 200;
/// The longest `session/list` `search`: matching reads every row it passes, so the
/// needle stays short.
const MAX_SEARCH_BYTES: usize = 1024;

/// What one page of `session/list` or `session/messages` may take, serialised: half the
/// frame cap, so the page and its envelope always fit in one frame.
fn page_budget(daemon: &DaemonState) -> usize {
    daemon.config.daemon.max_frame_bytes / 2
}

/// The serialised size of `value`, counted without building the text.
fn json_size<T: serde::Serialize>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Our types serialise without error; a failure only undercounts.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// `text` cut to at most `max` bytes, at a character boundary; `None` if it fits.
fn cut(text: &str, max: usize) -> Option<String> {
    if text.len() <= max {
        return None;
    }
    let end = (0..=max)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    Some(text[..end].to_owned())
}

pub(super) fn not_found(id: &str) -> RpcError {
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

/// Fails with -32000 unless the session exists (in memory or in the store).
async fn ensure_exists(daemon: &DaemonState, id: &str) -> Result<(), RpcError> {
    if daemon.agent.sessions.live(id).is_some()
        || daemon
            .agent
            .sessions
            .store
            .session(id)
            .await
            .map_err(storage)?
            .is_some()
    {
        Ok(())
    } else {
        Err(not_found(id))
    }
}

/// The session, if the calling connection is attached to it. Attachment is in memory, so
/// this answers in frame order; only the refusal needs the store.
pub(super) fn attached(ctx: &Ctx, id: &str) -> Result<Arc<Session>, Refused> {
    match ctx.0.daemon.agent.sessions.live(id) {
        Some(session) if session.is_attached(ctx.0.id) => Ok(session),
        _ => Err(Refused {
            daemon: ctx.0.daemon.clone(),
            id: id.to_owned(),
        }),
    }
}

/// A call on a session the caller is not attached to.
pub(super) struct Refused {
    daemon: Arc<DaemonState>,
    id: String,
}

impl Refused {
    /// -32003 if the session exists, -32000 if it does not.
    pub(super) fn reply<R: Send + 'static>(self) -> Reply<R> {
        Reply::later(async move {
            ensure_exists(&self.daemon, &self.id).await?;
            Err(not_attached(&self.id))
        })
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
        running: daemon.agent.sessions.is_running(&row.id),
        turn_id: None,
    }
}

/// The longest session title, in bytes: a title is a label for lists, stored with the
/// session and sent in every `session/list`.
const MAX_TITLE_BYTES: usize = 1024;
/// The longest model name, in bytes; real ones are under 100.
pub(super) const MAX_MODEL_BYTES: usize = 256;

/// Refuses a string member longer than `max` bytes.
pub(super) fn bounded(member: &str, value: Option<&str>, max: usize) -> Result<(), RpcError> {
    match value {
        Some(v) if v.len() > max => Err(RpcError::invalid_params(format!(
            "`{member}` is {} bytes; at most {max} are allowed",
            v.len()
        ))),
        _ => Ok(()),
    }
}

/// `session/new {mcpServers}` (ACP's shape) as server configs: approval `ask`, the
/// default time limit; a malformed one is `-32602` naming it.
fn session_servers(servers: &[SessionMcpServer]) -> Result<Vec<McpServerConfig>, RpcError> {
    let mut configs: Vec<McpServerConfig> = Vec::new();
    for (i, s) in servers.iter().enumerate() {
        let invalid = |why: &str| {
            RpcError::invalid_params(format!("`mcpServers[{i}]` ({:?}): {why}", s.name))
        };
        let mut config = McpServerConfig::stdio(&s.name, "");
        config.command = None;
        match s.kind.as_deref() {
            None | Some("stdio") => {
                config.command = s.command.clone();
                config.args = s.args.clone();
                config.env = s
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect();
            }
            Some("http") => {
                config.url = s.url.clone();
                config.headers = s
                    .headers
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect();
            }
            Some(other) => {
                return Err(invalid(&format!(
                    "type {other:?} is not supported (stdio or \"http\")"
                )));
            }
        }
        if let Some(problem) = config.problem() {
            return Err(invalid(&problem));
        }
        if configs.iter().any(|c| c.name == config.name) {
            return Err(invalid("another server has that name"));
        }
        configs.push(config);
    }
    Ok(configs)
}

/// A session's own servers, started in the background in its cwd.
fn start_session_servers(
    daemon: &DaemonState,
    servers: &[McpServerConfig],
    cwd: std::path::PathBuf,
) -> zeroclaw_agent::mcp::Mcp {
    zeroclaw_agent::mcp::Mcp::start(
        servers,
        Arc::new(zeroclaw_agent::tools::Tools::empty()),
        zeroclaw_agent::mcp::Settings {
            records: Some(zeroclaw_agent::tools::orphans::dir(&daemon.paths.data_dir)),
            scrub: zeroclaw_agent::state::scrub(&daemon.agent.config),
            cwd: Some(cwd),
        },
    )
}

impl Handle for m::SessionNew {
    fn handle(ctx: Ctx, params: NewSessionParams) -> Reply<SessionInfo> {
        Reply::later(create(ctx, params))
    }
}

async fn create(ctx: Ctx, p: NewSessionParams) -> Result<SessionInfo, RpcError> {
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
    let mcp_servers = session_servers(&p.mcp_servers)?;
    bounded("title", p.title.as_deref(), MAX_TITLE_BYTES)?;
    bounded("model", p.model.as_deref(), MAX_MODEL_BYTES)?;
    let model = p
        .model
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| daemon.config.agent.provider.model.clone());
    let id = uuid::Uuid::new_v4().to_string();
    let row = daemon
        .agent
        .sessions
        .store
        .create_session(&id, p.title.as_deref(), &cwd.to_string_lossy(), &model)
        .await
        .map_err(storage)?;
    daemon.agent.sessions.count_change(1);
    let session = daemon.agent.sessions.create(&row);
    if !mcp_servers.is_empty() {
        session.set_mcp(start_session_servers(daemon, &mcp_servers, cwd.clone()));
    }
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
    fn handle(ctx: Ctx, p: ListParams) -> Reply<SessionListResult> {
        Reply::later(async move {
            let daemon = &ctx.0.daemon;
            let limit = p.limit.unwrap_or(DEFAULT_LIST_PAGE).clamp(1, MAX_PAGE);
            let after = p.cursor.as_deref().map(ListCursor::parse).transpose()?;
            let search = p.search.filter(|s| !s.is_empty());
            if search.as_ref().is_some_and(|s| s.len() > MAX_SEARCH_BYTES) {
                return Err(RpcError::invalid_params(format!(
                    "`search` is longer than {MAX_SEARCH_BYTES} bytes"
                )));
            }
            // One row more than the page, to know whether another page follows. The cursor
            // is the last row sent, so the next page starts right after it wherever the
            // rows have moved meanwhile.
            let rows = daemon
                .agent
                .sessions
                .store
                .sessions_page(after.map(|c| (c.updated_at, c.id)), search, limit + 1)
                .await
                .map_err(storage)?;
            let budget = page_budget(daemon);
            let mut used = 0;
            let mut sessions = Vec::new();
            for row in rows.iter().take(limit) {
                let summary = summary(daemon, row);
                used += json_size(&summary) + 1;
                if used > budget && !sessions.is_empty() {
                    break;
                }
                sessions.push(summary);
            }
            let next_cursor =
                (sessions.len() < rows.len()).then(|| ListCursor::of(&rows[sessions.len() - 1]));
            Ok(SessionListResult {
                sessions,
                next_cursor,
            })
        })
    }
}

/// Where a `session/list` page ended: the last row's `(updated_at, id)`, as
/// `<updated_at>:<id>`. Clients treat it as opaque.
struct ListCursor {
    updated_at: i64,
    id: String,
}

impl ListCursor {
    fn of(row: &SessionRow) -> String {
        format!("{}:{}", row.updated_at, row.id)
    }

    fn parse(text: &str) -> Result<Self, RpcError> {
        text.split_once(':')
            .and_then(|(at, id)| {
                Some(Self {
                    updated_at: at.parse().ok()?,
                    id: id.to_owned(),
                })
            })
            .ok_or_else(|| {
                RpcError::invalid_params(
                    "`cursor` is not one `session/list` gave; pass a page's `nextCursor` back unchanged",
                )
            })
    }
}

impl Handle for m::SessionLoad {
    fn handle(ctx: Ctx, p: LoadParams) -> Reply<SessionSummary> {
        Reply::later(load(ctx, p))
    }
}

async fn load(ctx: Ctx, p: LoadParams) -> Result<SessionSummary, RpcError> {
    let daemon = ctx.0.daemon.clone();
    let mcp_servers = session_servers(&p.mcp_servers)?;
    let session = daemon
        .agent
        .sessions
        .get(&p.session_id)
        .await
        .map_err(storage)?
        .ok_or_else(|| not_found(&p.session_id))?;
    if !mcp_servers.is_empty() && session.mcp().is_none() {
        let cwd = std::path::PathBuf::from(&session.cwd);
        session.set_mcp(start_session_servers(&daemon, &mcp_servers, cwd));
    }
    let loaded = replay_and_attach(&ctx, &session, p.replay).await;
    if loaded.is_err() {
        daemon.agent.sessions.evict_if_idle(&session);
    }
    loaded
}

/// The replay of a session's history, one `session/update` per stored message (more for
/// a message over the frame cap: see `session/fit.rs`).
fn replay(session: &Session, rows: &[MessageRow], frame_cap: usize) -> Vec<Notification> {
    rows.iter()
        .flat_map(|row| {
            fit_update(
                &session.id,
                row.turn_id.as_deref(),
                history::replay_event(row),
                frame_cap,
            )
        })
        .collect()
}

/// Joins the caller to the session and sends what it must have first: the history (with
/// `replay`), then what was held meanwhile: the running model call's text so far (with
/// `replay`), the unanswered approval requests, and the live events. Answers the
/// session's summary.
async fn replay_and_attach(
    ctx: &Ctx,
    session: &Session,
    replay_history: bool,
) -> Result<SessionSummary, RpcError> {
    let daemon = &ctx.0.daemon;
    let peer = &ctx.0.peer;
    let frame_cap = daemon.config.daemon.max_frame_bytes;
    let sent = async {
        ctx.0
            .join(session, replay_history, |rows| async move {
                for frame in &replay(session, &rows, frame_cap) {
                    peer.send(&link::frame(frame)).await?;
                }
                Ok(())
            })
            .await?;
        while let Some(held) = session.go_live(ctx.0.id) {
            for frame in &held {
                peer.send(&link::frame(frame))
                    .await
                    .map_err(|_| JoinError::Closed)?;
            }
        }
        Ok(())
    };
    match sent.await {
        Ok(()) => {}
        Err(JoinError::Store(e)) => return Err(storage(e)),
        Err(JoinError::Closed) => {
            daemon.agent.sessions.detach(&session.id, ctx.0.id);
            return Err(RpcError::internal(
                "the connection closed during the replay",
            ));
        }
    }
    let row = daemon
        .agent
        .sessions
        .store
        .session(&session.id)
        .await
        .map_err(storage)?
        .ok_or_else(|| not_found(&session.id))?;
    Ok(SessionSummary {
        turn_id: session.active_turn().map(|turn| turn.id.clone()),
        ..summary(daemon, &row)
    })
}

impl Handle for m::SessionMessages {
    fn handle(ctx: Ctx, p: MessagesParams) -> Reply<MessagePage> {
        Reply::later(messages(ctx, p))
    }
}

async fn messages(ctx: Ctx, p: MessagesParams) -> Result<MessagePage, RpcError> {
    let daemon = &ctx.0.daemon;
    ensure_exists(daemon, &p.session_id).await?;
    let limit = p.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE);
    let (rows, total) = daemon
        .agent
        .sessions
        .store
        .messages(&p.session_id, limit, p.before)
        .await
        .map_err(storage)?;
    // Newest first, so a page cut by bytes keeps the messages next to `before` and the
    // client pages on from its first message.
    let budget = page_budget(daemon);
    let mut used = 0;
    let mut messages = Vec::new();
    for row in rows.iter().rev() {
        let mut message = history::message(row);
        let mut size = json_size(&message) + 1;
        if size > budget / 2 {
            shrink(&mut message, budget / 4);
            size = json_size(&message) + 1;
        }
        used += size;
        if used > budget && !messages.is_empty() {
            break;
        }
        messages.push(message);
    }
    let byte_limited = messages.len() < rows.len();
    messages.reverse();
    Ok(MessagePage {
        messages,
        total: u64::try_from(total).unwrap_or(0),
        byte_limited,
    })
}

/// Makes one message too large for a page fit in `max` bytes or so: its text cut, a large
/// `rawInput`/`rawOutput` replaced by a note of its size. The whole of it stays stored.
fn shrink(message: &mut zeroclaw_protocol::Message, max: usize) {
    if let Some(text) = message.text.as_deref().and_then(|t| cut(t, max)) {
        message.text = Some(text);
        message.truncated = true;
    }
    for raw in [&mut message.raw_input, &mut message.raw_output] {
        let Some(value) = raw.as_ref() else { continue };
        let size = json_size(value);
        if size > max {
            *raw = Some(serde_json::Value::String(format!(
                "[{size} bytes, too large for a page of session/messages; not shown]"
            )));
            message.truncated = true;
        }
    }
}

impl Handle for m::SessionPrompt {
    fn handle(ctx: Ctx, p: PromptParams) -> Reply<PromptResult> {
        // The checks and the start run inline, in frame order: a second prompt right behind
        // the first is answered -32002 deterministically.
        if p.prompt.trim().is_empty() {
            return Reply::Now(Err(RpcError::invalid_params("`prompt` is empty")));
        }
        let conn = &ctx.0;
        let daemon = conn.daemon.clone();
        if daemon.shutdown.is_cancelled() {
            return Reply::Now(Err(RpcError::internal("the daemon is shutting down")));
        }
        let session = match attached(&ctx, &p.session_id) {
            Ok(session) => session,
            Err(refused) => return refused.reply(),
        };
        let origin = Origin {
            peer: Some(conn.link.clone()),
            elicitation: conn.hello.get().is_some_and(|h| h.elicitation),
            unattended: None,
            fs: conn.hello.get().map(|h| h.fs).unwrap_or_default(),
        };
        let answer = match turn::start(&daemon.agent, session, origin, p.prompt) {
            Ok(answer) => answer,
            Err(e) => return Reply::Now(Err(start_error(e))),
        };
        Reply::later(async move {
            match answer.await {
                Ok(outcome) => outcome
                    .map(|result| fit_text(result, daemon.config.daemon.max_frame_bytes / 4))
                    .map_err(|e| turn_error(&e, &daemon.agent.provider)),
                Err(_) => Err(RpcError::internal(
                    "the turn ended without a result; see the daemon log",
                )),
            }
        })
    }
}

/// Cuts the answer's `text` to `max` bytes, saying so: the whole text is in the turn's
/// events and its history, and a result must fit in one frame.
fn fit_text(mut result: PromptResult, max: usize) -> PromptResult {
    if let Some(text) = cut(&result.text, max) {
        result.text = text;
        result.text_truncated = true;
    }
    result
}

impl Handle for m::SessionCancel {
    fn handle(ctx: Ctx, p: SessionIdParams) -> Reply<CancelResult> {
        let session = match attached(&ctx, &p.session_id) {
            Ok(session) => session,
            Err(refused) => return refused.reply(),
        };
        let cancelled = match session.active_turn() {
            Some(turn) => {
                turn.cancel.cancel();
                true
            }
            None => false,
        };
        Reply::Now(Ok(CancelResult { cancelled }))
    }
}

impl Handle for m::SessionApprove {
    fn handle(ctx: Ctx, p: ApproveParams) -> Reply<Empty> {
        match attached(&ctx, &p.session_id) {
            Ok(session) => approve(&session, p).into(),
            Err(refused) => refused.reply(),
        }
    }
}

fn approve(session: &Session, p: ApproveParams) -> Result<Empty, RpcError> {
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
        Reply::later(async move {
            bounded("title", p.title.as_deref(), MAX_TITLE_BYTES)?;
            let title = p.title.as_deref().map(str::trim).filter(|t| !t.is_empty());
            let renamed = ctx
                .0
                .daemon
                .agent
                .sessions
                .store
                .rename_session(&p.session_id, title)
                .await
                .map_err(storage)?;
            if renamed {
                Ok(Empty {})
            } else {
                Err(not_found(&p.session_id))
            }
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
        .agent
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
        .agent
        .sessions
        .store
        .delete_session(&p.session_id)
        .await
        .map_err(storage)?;
    if deleted {
        daemon.agent.sessions.count_change(-1);
        // Only an id the store knew (one the daemon made) names a directory here.
        let saved = spill::session_dir(&daemon.paths.data_dir, &p.session_id);
        match tokio::fs::remove_dir_all(&saved).await {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                tracing::warn!(error = %e, dir = %saved.display(), "could not remove the deleted session's saved tool outputs");
            }
        }
    }
    daemon.agent.sessions.forget(&p.session_id);
    Ok(DeleteResult { deleted })
}

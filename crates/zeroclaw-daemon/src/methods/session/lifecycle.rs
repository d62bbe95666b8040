//! A session's lifecycle: `session/new`, `session/load` (attaching, with the replay of its
//! history), `session/rename`, `session/delete`; and the MCP servers a session brings.

use super::{MAX_MODEL_BYTES, MAX_TITLE_BYTES, bounded, not_found, summary};
use crate::config::McpServerConfig;
use crate::link;
use crate::methods::errors::storage;
use crate::methods::sandbox::{choose, session_sandbox};
use crate::methods::{Ctx, Handle, Reply};
use crate::state::DaemonState;
use std::sync::Arc;
use std::time::Duration;
use zeroclaw_agent::history;
use zeroclaw_agent::session::{JoinError, Session};
use zeroclaw_agent::tools::spill;
use zeroclaw_agent::turn::Env;
use zeroclaw_protocol::methods::{self as m, *};
use zeroclaw_rpc::RpcError;

/// How long `session/delete` waits for a cancelled turn to wind down.
const DELETE_WAIT: Duration = Duration::from_secs(10);
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
    let sandbox = choose(daemon, &ctx.0.authority, p.sandbox)?;
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
        .create_session_with(
            &id,
            p.title.as_deref(),
            &cwd.to_string_lossy(),
            &model,
            sandbox,
        )
        .await
        .map_err(storage)?;
    daemon.agent.sessions.count_change(1);
    let session = daemon.agent.sessions.create(&row);
    if !mcp_servers.is_empty() {
        session.set_mcp(start_session_servers(daemon, &mcp_servers, cwd.clone()));
    }
    ctx.0.attach(&session);
    // Before the answer, so the first prompt's turn has what they said.
    zeroclaw_agent::turn::session_start(Env::of(&daemon.agent), &session, "startup").await;
    session_info(daemon, row).await
}

/// A new session's `SessionInfo` (`session/new`'s and `session/fork`'s result), with the
/// instruction files its turns will load.
pub(super) async fn session_info(
    daemon: &DaemonState,
    row: zeroclaw_agent::store::SessionRow,
) -> Result<SessionInfo, RpcError> {
    let instructions = super::project::loaded(daemon, &row.id)
        .await?
        .instruction_files();
    Ok(SessionInfo {
        session_id: row.id,
        cwd: row.cwd,
        model: row.model,
        title: row.title,
        created_at: history::timestamp(row.created_at),
        sandbox: Some(session_sandbox(daemon, row.sandbox)),
        instructions,
        mode: row.mode,
    })
}

impl Handle for m::SessionLoad {
    fn handle(ctx: Ctx, p: LoadParams) -> Reply<SessionSummary> {
        Reply::later(load(ctx, p))
    }
}

async fn load(ctx: Ctx, p: LoadParams) -> Result<SessionSummary, RpcError> {
    let daemon = ctx.0.daemon.clone();
    let mcp_servers = session_servers(&p.mcp_servers)?;
    let resumed = daemon.agent.sessions.live(&p.session_id).is_none();
    let session = daemon
        .agent
        .sessions
        .get(&p.session_id)
        .await
        .map_err(storage)?
        .ok_or_else(|| not_found(&p.session_id))?;
    if resumed {
        // Brought back into memory (by this load or one just before it): its SessionStart
        // hooks run again, as `resume`, before the replay so it includes them.
        zeroclaw_agent::turn::session_start(Env::of(&daemon.agent), &session, "resume").await;
    }
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
    let sent = async {
        ctx.0
            .join(session, replay_history, |frames| async move {
                // A page of the history: one `session/update` per stored message (more for
                // one over the frame cap: see the agent's `session/fit.rs`), queued at once.
                peer.send_all(frames.into_iter().map(link::own_frame).collect())
                    .await
            })
            .await?;
        while let Some(held) = session.go_live(ctx.0.id) {
            let frames = held.iter().map(link::frame).collect();
            peer.send_all(frames).await.map_err(|_| JoinError::Closed)?;
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

impl Handle for m::SessionClose {
    fn handle(ctx: Ctx, p: SessionIdParams) -> Reply<CloseResult> {
        Reply::Now(Ok(CloseResult {
            closed: ctx.0.detach(&p.session_id),
        }))
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
    // Its cwd, to prune its checkpoints once it is gone.
    let row = daemon
        .agent
        .sessions
        .store
        .session(&p.session_id)
        .await
        .map_err(storage)?;
    let deleted = daemon
        .agent
        .sessions
        .store
        .delete_session(&p.session_id)
        .await
        .map_err(storage)?;
    if let (true, Some(row)) = (deleted, &row) {
        daemon
            .agent
            .checkpoints
            .forget_session(&row.cwd, &row.id)
            .await;
    }
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

//! `session/*`, the session family: its lifecycle (`lifecycle.rs`: new, load, rename,
//! delete), reading it (`read.rs`: the list, a session's messages), its turns (`turn.rs`:
//! prompt, cancel, approve), compacting it (`compact.rs`), its model (`model.rs`), its permission mode (`mode.rs`), an
//! id prefix to its session (`resolve.rs`), its checkpoints (`checkpoints.rs`: list, rewind,
//! unrewind, fork), what its project holds (`project.rs`: `session/context`,
//! `commands/*`) and its token usage (`usage.rs`).
//! Here, what they share: whether the caller is attached, the refusals, the summary, the
//! bounds on strings.

mod attachment;
mod checkpoints;
mod compact;
mod lifecycle;
mod mode;
mod model;
mod project;
mod read;
mod resolve;
mod turn;
mod usage;

use crate::methods::errors::storage;
use crate::methods::{Ctx, Reply};
use crate::state::DaemonState;
use serde_json::json;
use std::sync::Arc;
use zeroclaw_agent::history;
use zeroclaw_agent::session::Session;
use zeroclaw_agent::store::SessionRow;
use zeroclaw_protocol::codes;
use zeroclaw_protocol::methods::SessionSummary;
use zeroclaw_rpc::RpcError;

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
fn attached(ctx: &Ctx, id: &str) -> Result<Arc<Session>, Refused> {
    match ctx.0.daemon.agent.sessions.live(id) {
        Some(session) if session.is_attached(ctx.0.id) => Ok(session),
        _ => Err(Refused {
            daemon: ctx.0.daemon.clone(),
            id: id.to_owned(),
        }),
    }
}

/// A call on a session the caller is not attached to.
struct Refused {
    daemon: Arc<DaemonState>,
    id: String,
}

impl Refused {
    /// -32003 if the session exists, -32000 if it does not.
    fn reply<R: Send + 'static>(self) -> Reply<R> {
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
        waiting: daemon.agent.sessions.is_waiting(&row.id),
        turn_id: None,
        sandbox: Some(super::sandbox::session_sandbox(daemon, row.sandbox)),
        parent_session_id: row.parent.as_ref().map(|p| p.session_id.clone()),
        parent_tool_call_id: row.parent.as_ref().map(|p| p.tool_call_id.clone()),
        mode: row.mode,
    }
}

/// The longest session title, in bytes: a title is a label for lists, stored with the
/// session and sent in every `session/list`.
const MAX_TITLE_BYTES: usize = 1024;
/// The longest model name, in bytes; real ones are under 100.
const MAX_MODEL_BYTES: usize = 256;

/// Refuses a string member longer than `max` bytes.
fn bounded(member: &str, value: Option<&str>, max: usize) -> Result<(), RpcError> {
    match value {
        Some(v) if v.len() > max => Err(RpcError::invalid_params(format!(
            "`{member}` is {} bytes; at most {max} are allowed",
            v.len()
        ))),
        _ => Ok(()),
    }
}

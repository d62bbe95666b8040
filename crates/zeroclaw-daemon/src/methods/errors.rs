//! How the domain's errors are told on the wire: their JSON-RPC code, message and data.

use serde_json::{Value, json};
use zeroclaw_agent::provider::{ErrorKind, Provider, ProviderError};
use zeroclaw_agent::store::StoreError;
use zeroclaw_agent::turn::{Failure, StartError, TurnError};
use zeroclaw_protocol::codes;
use zeroclaw_rpc::RpcError;

/// `-32603` for a store that failed outside a turn.
pub fn storage(e: StoreError) -> RpcError {
    tracing::error!(error = %e, "storage failed");
    RpcError::internal(format!(
        "{e} (is the disk full, or the database read-only?)"
    ))
}

/// A failed turn: a provider error is `-32004`, a storage failure `-32603`; either way
/// `data.turnId` names the turn and `data.stored` says whether anything of it was kept.
pub fn turn_error(e: &TurnError, provider: &Provider) -> RpcError {
    let mut error = match &e.failure {
        Failure::Provider { error, model } => {
            provider_error(error, provider, model, Some(&e.turn_id))
        }
        Failure::Storage(_) => RpcError::internal(&e.failure),
    };
    let data = error.data.get_or_insert_with(|| json!({}));
    if let Value::Object(map) = data {
        map.insert("turnId".into(), json!(e.turn_id));
        map.insert("stored".into(), json!(e.stored));
    }
    error
}

/// A turn that could not start: `-32002` for a busy session, `LIMIT_REACHED` at the turn limit.
pub fn start_error(e: StartError) -> RpcError {
    match e {
        StartError::Busy {
            session_id,
            running,
        } => RpcError::new(
            codes::SESSION_BUSY,
            format!(
                "session {session_id:?} is already running turn {running}; wait for it or `session/cancel` it"
            ),
        )
        .with_data(json!({ "turnId": running })),
        StartError::LimitReached { limit } => RpcError::new(
            codes::LIMIT_REACHED,
            format!("{limit} turns are already running (agent.max_running_turns); wait for one to finish"),
        )
        .with_data(json!({ "limit": limit })),
    }
}

/// The `-32004` error for a model call made with `model` (a session's own model may differ
/// from the configured default), inside the turn `turn_id` when there is one.
pub fn provider_error(
    e: &ProviderError,
    provider: &Provider,
    model: &str,
    turn_id: Option<&str>,
) -> RpcError {
    let mut data = json!({
        "kind": kind_name(e.kind),
        "provider": provider.name(),
        "baseUrl": provider.shown_url(),
        "model": model,
    });
    if let Some(status) = e.status {
        data["status"] = json!(status);
    }
    if let Some(turn_id) = turn_id {
        data["turnId"] = json!(turn_id);
    }
    RpcError::new(codes::PROVIDER_ERROR, e.message.clone()).with_data(data)
}

/// The `kind` member of a provider error's data.
fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Unreachable => "unreachable",
        ErrorKind::MissingKey => "missing_api_key",
        ErrorKind::Auth => "auth",
        ErrorKind::ModelNotFound => "model_not_found",
        ErrorKind::RateLimited => "rate_limited",
        ErrorKind::Http => "http",
        ErrorKind::Timeout => "timeout",
        ErrorKind::Stream => "stream",
        ErrorKind::Provider => "provider",
        ErrorKind::ContextLength => "context_length",
    }
}

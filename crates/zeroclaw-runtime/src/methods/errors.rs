//! How the domain's errors are told on the wire: their JSON-RPC code, message and data.

use crate::provider::{ErrorKind, Provider, ProviderError};
use serde_json::json;
use zeroclaw_protocol::codes;
use zeroclaw_rpc::RpcError;

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
        "baseUrl": provider.config.base_url,
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
    }
}

//! `initialize`, `status`, `shutdown`.

use super::{Ctx, decode};
use crate::connection::{ClientHello, ready};
use crate::state::SERVER_VERSION;
use serde::Deserialize;
use serde_json::{Value, json};
use zeroclaw_rpc::{BoxFuture, HandlerResult, PROTOCOL_VERSION, RpcError, codes};

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    protocol_version: Option<Value>,
    #[serde(default)]
    client_info: Option<ClientInfo>,
    #[serde(default)]
    capabilities: Option<ClientCapabilities>,
}

#[derive(Debug, Default, Deserialize)]
struct ClientInfo {
    name: Option<String>,
    version: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct ClientCapabilities {
    elicitation: Option<serde_json::Map<String, Value>>,
}

pub fn initialize(ctx: Ctx, params: Option<Value>) -> BoxFuture<HandlerResult> {
    ready(handshake(&ctx, params))
}

fn handshake(ctx: &Ctx, params: Option<Value>) -> HandlerResult {
    let params: InitializeParams = decode(params)?;
    let requested = match params.protocol_version {
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => n,
        Some(other) => {
            return Err(RpcError::invalid_params(format!(
                "`protocolVersion` must be an integer, got {other}"
            )));
        }
        None => {
            return Err(RpcError::invalid_params(format!(
                "`protocolVersion` is required, e.g. {{\"protocolVersion\":{PROTOCOL_VERSION}}}"
            )));
        }
    };
    if requested.as_i64() != Some(PROTOCOL_VERSION) {
        return Err(RpcError::new(
            codes::VERSION_MISMATCH,
            format!(
                "protocol version {requested} is not supported; this daemon ({SERVER_VERSION}) speaks version {PROTOCOL_VERSION}. Upgrade the older of the two"
            ),
        )
        .with_data(json!({ "supported": [PROTOCOL_VERSION], "requested": requested })));
    }
    let info = params.client_info.unwrap_or_default();
    ctx.0.mark_initialized(ClientHello {
        name: info.name,
        version: info.version,
        elicitation: params.capabilities.is_some_and(|c| c.elicitation.is_some()),
    });
    Ok(json!({
        "protocolVersion": PROTOCOL_VERSION,
        "serverVersion": SERVER_VERSION,
        "pid": ctx.0.daemon.pid,
        "capabilities": {
            "methods": super::names(),
            "events": super::EVENTS,
        },
    }))
}

pub fn status(ctx: Ctx, params: Option<Value>) -> BoxFuture<HandlerResult> {
    ready(decode::<serde::de::IgnoredAny>(params).map(|_| {
        let daemon = &ctx.0.daemon;
        json!({
            "serverVersion": SERVER_VERSION,
            "protocolVersion": PROTOCOL_VERSION,
            "pid": daemon.pid,
            "uptimeMs": u64::try_from(daemon.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "endpoint": daemon.endpoint_text,
            "dataDir": daemon.data_dir_text,
            "ephemeral": daemon.ephemeral,
            "clients": daemon.clients.current(),
            "sessions": { "total": daemon.sessions.total(), "running": daemon.sessions.running_count() },
        })
    }))
}

pub fn shutdown(ctx: Ctx, params: Option<Value>) -> BoxFuture<HandlerResult> {
    ready(decode::<serde::de::IgnoredAny>(params).map(|_| {
        tracing::info!(peer = %ctx.0.peer.label(), "shutdown requested");
        ctx.0.daemon.shutdown.cancel();
        json!({})
    }))
}

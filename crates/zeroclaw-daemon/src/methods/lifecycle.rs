//! `initialize`, `status`, `shutdown`.

use super::{Ctx, Handle, Reply};
use crate::config::ProviderKind;
use crate::connection::ClientHello;
use crate::state::{DaemonState, SERVER_VERSION};
use serde::Serialize;
use serde_json::{Value, json};
use zeroclaw_protocol::{
    EVENTS, Empty, InitializeParams, InitializeResult, NoParams, PROTOCOL_VERSION,
    ServerCapabilities, StatusResult, codes, methods as m,
};
use zeroclaw_rpc::{Answer, RpcError};

impl Handle for m::Initialize {
    fn handle(ctx: Ctx, params: InitializeParams) -> Reply<InitializeResult> {
        handshake(&ctx, params).into()
    }
}

fn handshake(ctx: &Ctx, params: InitializeParams) -> Result<InitializeResult, RpcError> {
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
    // Answering the agent's questions, or serving its files, is acting in the session:
    // `operate` or more.
    let operates = super::permits(
        &ctx.0.authority,
        super::Access::Scope(zeroclaw_protocol::Scope::Operate),
    );
    let capabilities = params.capabilities.unwrap_or_default();
    ctx.0.mark_initialized(ClientHello {
        name: info.name,
        version: info.version,
        elicitation: capabilities.elicitation.is_some() && operates,
        fs: capabilities.fs.filter(|_| operates).unwrap_or_default(),
    });
    Ok(InitializeResult {
        protocol_version: PROTOCOL_VERSION,
        server_version: SERVER_VERSION.to_owned(),
        pid: ctx.0.daemon.pid,
        capabilities: ServerCapabilities {
            methods: super::names_for(&ctx.0.authority)
                .into_iter()
                .map(str::to_owned)
                .collect(),
            events: EVENTS.iter().map(|e| (*e).to_owned()).collect(),
        },
    })
}

/// The members of `status`'s answer that never change for a daemon.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FixedStatus<'a> {
    server_version: &'a str,
    protocol_version: i64,
    pid: u32,
    endpoint: String,
    data_dir: String,
    ephemeral: bool,
    gateway: Option<zeroclaw_protocol::GatewayStatus>,
    sandbox: zeroclaw_protocol::SandboxStatus,
    /// Must stay the last member: [`fixed_status`] cuts the text open at its closing `}}`
    /// so each answer can add `provider.lastCall`.
    provider: zeroclaw_protocol::ProviderStatus,
}

/// `{"serverVersion":…,"ephemeral":…,` — the fixed members, ready for the changing ones.
fn fixed_status(daemon: &DaemonState) -> String {
    let fixed = FixedStatus {
        server_version: SERVER_VERSION,
        protocol_version: PROTOCOL_VERSION,
        pid: daemon.pid,
        endpoint: daemon.paths.endpoint.to_string(),
        data_dir: daemon.paths.data_dir.display().to_string(),
        ephemeral: daemon.ephemeral,
        gateway: daemon.gateway.get().cloned().flatten(),
        sandbox: super::sandbox::status(daemon),
        provider: zeroclaw_protocol::ProviderStatus {
            kind: match daemon.config.agent.provider.kind {
                ProviderKind::Openai => "openai",
                ProviderKind::Anthropic => "anthropic",
            }
            .to_owned(),
            model: daemon.config.agent.provider.model.clone(),
            base_url: daemon.agent.provider.shown_url().to_owned(),
            last_call: None,
        },
    };
    // A struct of strings, numbers and a bool always serialises to `{…}`; `provider` is its
    // last member, so the text ends in `}}`: both are taken off, and each answer closes
    // `provider` after adding its `lastCall` (see `Status`'s handler).
    let mut text = serde_json::to_string(&fixed).unwrap_or_else(|_| "{}".to_owned());
    if text.ends_with("}}") {
        text.truncate(text.len() - 2);
    }
    text
}

/// `,"lastCall":{…}}` or `}`: the end of `status.provider`, which changes with each call.
fn provider_tail(daemon: &DaemonState, json: &mut String) {
    if let Some(call) = daemon.agent.provider.last_call() {
        let call = zeroclaw_protocol::ProviderCall {
            ok: call.ok,
            at: call.at,
            error: call.error,
        };
        if let Ok(text) = serde_json::to_string(&call) {
            json.push_str(r#","lastCall":"#);
            json.push_str(&text);
        }
    }
    json.push_str("},");
}

/// `status` is the call clients poll (and the benchmark's hot path), so its answer is the
/// fixed members serialised once plus five numbers, written without a `Value`. It reads as
/// [`StatusResult`] (the `status_reads_as_its_protocol_type` test keeps it so).
impl Handle for m::Status {
    fn handle(ctx: Ctx, _: NoParams) -> Reply<StatusResult> {
        let daemon = &ctx.0.daemon;
        let fixed = daemon.status_fixed.get_or_init(|| fixed_status(daemon));
        let uptime = u64::try_from(daemon.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut digits = itoa::Buffer::new();
        let mut json = String::with_capacity(fixed.len() + 96);
        json.push_str(fixed);
        provider_tail(daemon, &mut json);
        json.push_str(r#""uptimeMs":"#);
        json.push_str(digits.format(uptime));
        json.push_str(r#","clients":"#);
        json.push_str(digits.format(daemon.clients.current()));
        json.push_str(r#","sessions":{"total":"#);
        json.push_str(digits.format(daemon.agent.sessions.total()));
        json.push_str(r#","running":"#);
        json.push_str(digits.format(daemon.agent.sessions.running_count()));
        json.push_str(r#","loaded":"#);
        json.push_str(digits.format(daemon.agent.sessions.loaded_count()));
        json.push_str(r#"},"mcpServers":"#);
        if daemon.agent.mcp.is_empty() {
            json.push_str("[]");
        } else {
            let servers = super::mcp::statuses(&daemon.agent.mcp);
            json.push_str(&serde_json::to_string(&servers).unwrap_or_else(|_| "[]".into()));
        }
        json.push('}');
        Reply::Raw(Answer::from_serialized(json))
    }
}

impl Handle for m::Shutdown {
    fn handle(ctx: Ctx, _: NoParams) -> Reply<Empty> {
        tracing::info!(peer = %ctx.0.peer.label(), "shutdown requested");
        ctx.0.daemon.shutdown.cancel();
        Reply::Now(Ok(Empty {}))
    }
}

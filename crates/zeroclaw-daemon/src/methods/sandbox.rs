//! The sandbox on the wire: `status.sandbox`, a session's `sandbox`, and who may choose
//! one wider than `[sandbox]` (docs/sandbox.md, "Configuration and sessions").

use crate::connection::Authority;
use crate::state::DaemonState;
use serde_json::json;
use zeroclaw_agent::sandbox::{Choice, Mode};
use zeroclaw_protocol::{SandboxMode, SandboxRequest, SandboxStatus, Scope, SessionSandbox, codes};
use zeroclaw_rpc::RpcError;

pub fn wire_mode(mode: Mode) -> SandboxMode {
    match mode {
        Mode::ReadOnly => SandboxMode::ReadOnly,
        Mode::WorkspaceWrite => SandboxMode::WorkspaceWrite,
        Mode::Full => SandboxMode::Full,
    }
}

fn mode_of(mode: SandboxMode) -> Mode {
    match mode {
        SandboxMode::ReadOnly => Mode::ReadOnly,
        SandboxMode::WorkspaceWrite => Mode::WorkspaceWrite,
        SandboxMode::Full => Mode::Full,
    }
}

/// A session's sandbox as its turns run it: its own, else `[sandbox]`'s.
pub fn session_sandbox(daemon: &DaemonState, own: Option<Choice>) -> SessionSandbox {
    let choice = own.unwrap_or(daemon.config.agent.sandbox.choice());
    SessionSandbox {
        mode: wire_mode(choice.mode),
        network: choice.effective_network(),
    }
}

/// `status.sandbox`: the configured policy and what the start-up probe found.
pub fn status(daemon: &DaemonState) -> SandboxStatus {
    let config = &daemon.config.agent.sandbox;
    let support = &daemon.agent.sandbox.support;
    SandboxStatus {
        mode: wire_mode(config.mode),
        network: config.network,
        writable_roots: config
            .writable_roots
            .iter()
            .map(|r| r.display().to_string())
            .collect(),
        require: config.require,
        available: support.is_available(),
        mechanism: support.mechanism(),
        landlock_abi: support.landlock_abi(),
        reason: support.unavailable_reason().map(str::to_owned),
        gaps: support.gaps(),
    }
}

/// The sandbox `session/new` stores with the session: `None` if the caller asked for
/// nothing (the session follows `[sandbox]`). Wider than the config only with admin
/// authority; otherwise `-32003`, saying what would widen it.
pub fn choose(
    daemon: &DaemonState,
    authority: &Authority,
    request: Option<SandboxRequest>,
) -> Result<Option<Choice>, RpcError> {
    let Some(request) = request else {
        return Ok(None);
    };
    let config = daemon.config.agent.sandbox.choice();
    let choice = Choice {
        mode: request.mode.map_or(config.mode, mode_of),
        network: request.network.unwrap_or(config.network),
    };
    let admin = match authority {
        Authority::Local => true,
        Authority::Gateway(principal) => principal.scope >= Scope::Admin,
    };
    if !admin && let Err(why) = choice.within(config) {
        return Err(RpcError::new(
            codes::NOT_ALLOWED,
            format!(
                "`sandbox` may only be stricter than the daemon's: {why}; widening it needs a \
                 token of scope admin (or the local socket)"
            ),
        )
        .with_data(json!({
            "requested": SessionSandbox { mode: wire_mode(choice.mode), network: choice.network },
            "configured": SessionSandbox { mode: wire_mode(config.mode), network: config.network },
        })));
    }
    Ok(Some(choice))
}

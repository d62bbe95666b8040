//! `session/set_mode`: a session's permission mode (docs/protocol.md, "Permission modes").
//!
//! The caller must be attached (so the session is in memory while it changes). The mode is
//! stored, set on the live session and announced with `mode_changed` to every attached
//! connection (`Session::change_mode`); a running turn applies it from its next model call
//! and its next tool call. `auto` is refused where the sandbox does not confine the
//! session's tools, unless `[approvals] allow_auto_without_sandbox` allows it.

use super::{attached, not_found};
use crate::methods::errors::storage;
use crate::methods::{Ctx, Handle, Reply};
use serde_json::json;
use zeroclaw_protocol::codes;
use zeroclaw_protocol::methods::{self as m, PermissionMode, SetModeParams, SetModeResult};
use zeroclaw_rpc::RpcError;

impl Handle for m::SessionSetMode {
    fn handle(ctx: Ctx, p: SetModeParams) -> Reply<SetModeResult> {
        let session = match attached(&ctx, &p.session_id) {
            Ok(session) => session,
            Err(refused) => return refused.reply(),
        };
        let daemon = ctx.0.daemon.clone();
        if p.mode == PermissionMode::Auto {
            let config = &daemon.config.agent;
            let sandbox_mode = session.sandbox.unwrap_or(config.sandbox.choice()).mode;
            let refused = zeroclaw_agent::turn::auto_refused(
                config,
                sandbox_mode,
                &daemon.agent.sandbox.support,
            );
            if let Some(why) = refused {
                return Reply::Now(Err(RpcError::new(codes::NOT_ALLOWED, why).with_data(
                    json!({ "mode": p.mode, "sandboxMode": sandbox_mode.as_str() }),
                )));
            }
        }
        Reply::later(async move {
            let store = &daemon.agent.sessions.store;
            let previous = session
                .change_mode(store, p.mode, None)
                .await
                .map_err(storage)?
                // Deleted meanwhile (`session/delete` needs no attachment).
                .ok_or_else(|| not_found(&session.id))?;
            Ok(SetModeResult {
                mode: p.mode,
                previous,
            })
        })
    }
}

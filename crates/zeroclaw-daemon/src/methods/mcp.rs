//! `mcp/servers`, `mcp/tools`: the MCP servers and their tools (`zeroclaw mcp`).

use super::{Ctx, Handle, Reply};
use std::sync::Arc;
use zeroclaw_agent::mcp::Mcp;
use zeroclaw_protocol::codes;
use zeroclaw_protocol::methods::{self as m, *};
use zeroclaw_rpc::RpcError;

pub fn statuses(mcp: &Mcp) -> Vec<McpServerStatus> {
    mcp.status()
        .into_iter()
        .map(|s| McpServerStatus {
            name: s.name,
            state: s.state.as_str().to_owned(),
            tools: u64::try_from(s.tools).unwrap_or(u64::MAX),
            error: s.error,
        })
        .collect()
}

/// The session's own servers, if the caller is attached to it.
fn session_servers(ctx: &Ctx, id: &str) -> Result<Option<Arc<Mcp>>, RpcError> {
    match ctx.0.daemon.agent.sessions.live(id) {
        Some(session) if session.is_attached(ctx.0.id) => Ok(session.mcp()),
        _ => Err(RpcError::new(
            codes::NOT_ALLOWED,
            format!("this connection is not attached to session {id:?}; call `session/load` first"),
        )),
    }
}

impl Handle for m::McpServers {
    fn handle(ctx: Ctx, p: McpServersParams) -> Reply<McpServersResult> {
        let own = match p.session_id.as_deref().map(|id| session_servers(&ctx, id)) {
            Some(Err(e)) => return Reply::Now(Err(e)),
            Some(Ok(own)) => Some(own),
            None => None,
        };
        Reply::later(async move {
            let daemon = &ctx.0.daemon;
            let mcp: &Mcp = match &own {
                Some(Some(own)) => own,
                Some(None) => {
                    return Ok(McpServersResult {
                        servers: Vec::new(),
                    });
                }
                None => &daemon.agent.mcp,
            };
            if p.wait {
                tokio::select! {
                    () = mcp.settled(true) => {}
                    () = daemon.shutdown.cancelled() => {}
                }
            }
            Ok(McpServersResult {
                servers: statuses(mcp),
            })
        })
    }
}

impl Handle for m::McpTools {
    fn handle(ctx: Ctx, p: McpToolsParams) -> Reply<McpToolsResult> {
        let Some(defs) = ctx.0.daemon.agent.mcp.tools_of(&p.name) else {
            return Reply::Now(Err(RpcError::invalid_params(format!(
                "no MCP server {:?} in the daemon's config; `mcp/servers` lists them",
                p.name
            ))));
        };
        Reply::Now(Ok(McpToolsResult {
            tools: defs
                .into_iter()
                .map(|d| McpToolInfo {
                    name: d.name,
                    description: d.description,
                    input_schema: d.input_schema,
                })
                .collect(),
        }))
    }
}

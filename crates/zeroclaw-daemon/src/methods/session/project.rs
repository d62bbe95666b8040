//! What a session's project holds (docs/project.md): `session/context`, `commands/list`
//! and `commands/expand`. Each reads the files as the session's next turn will (through
//! the same cache), so what they answer is what that turn gets. Reading needs no
//! attachment: it shows files, it changes nothing.

use super::not_found;
use crate::methods::errors::storage;
use crate::methods::{Ctx, Handle, Reply};
use crate::state::DaemonState;
use zeroclaw_agent::project::{self, Loaded};
use zeroclaw_protocol::methods::{self as m, *};
use zeroclaw_rpc::RpcError;

/// The project files of session `id`, read now.
pub(super) async fn loaded(daemon: &DaemonState, id: &str) -> Result<Loaded, RpcError> {
    let cwd = match daemon.agent.sessions.live(id) {
        Some(session) => session.cwd.clone(),
        None => {
            daemon
                .agent
                .sessions
                .store
                .session(id)
                .await
                .map_err(storage)?
                .ok_or_else(|| not_found(id))?
                .cwd
        }
    };
    let user = zeroclaw_agent::turn::Env::of(&daemon.agent).user_side();
    let files = daemon.agent.project_files.clone();
    Ok(project::load_async(user, cwd.into(), files).await)
}

impl Handle for m::SessionContext {
    fn handle(ctx: Ctx, p: SessionIdParams) -> Reply<ProjectContext> {
        Reply::later(async move { Ok(loaded(&ctx.0.daemon, &p.session_id).await?.report()) })
    }
}

impl Handle for m::CommandsList {
    fn handle(ctx: Ctx, p: SessionIdParams) -> Reply<CommandsListResult> {
        Reply::later(async move {
            let loaded = loaded(&ctx.0.daemon, &p.session_id).await?;
            Ok(CommandsListResult {
                commands: loaded.command_infos(),
            })
        })
    }
}

impl Handle for m::CommandsExpand {
    fn handle(ctx: Ctx, p: ExpandParams) -> Reply<ExpandResult> {
        Reply::later(async move {
            let loaded = loaded(&ctx.0.daemon, &p.session_id).await?;
            let Some(command) = loaded.command(&p.name) else {
                let names: Vec<&str> = loaded.commands.iter().map(|c| c.name.as_str()).collect();
                return Err(RpcError::invalid_params(format!(
                    "no custom command {:?} in this session's project; there are: {}",
                    p.name,
                    if names.is_empty() {
                        "none".to_owned()
                    } else {
                        names.join(", ")
                    }
                )));
            };
            Ok(ExpandResult {
                prompt: project::expand(command.template(), &p.arguments),
            })
        })
    }
}

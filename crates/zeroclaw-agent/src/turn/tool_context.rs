//! What a turn's tool calls run against: one [`ToolContext`], built when the turn starts
//! and lent to each call.

use super::ask_user::{Elicitation, NoOne};
use super::client_files::ClientFs;
use super::{Env, Origin};
use crate::sandbox::ToolSandbox;
use crate::session::{ActiveTurn, Session};
use crate::tools::spill::{self, SpillTo};
use crate::tools::{AskUser, ClientFiles, ToolContext, ToolLimits};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The context of the turn `active` of `session`, prompted by `origin`.
pub(super) fn build(
    env: Env<'_>,
    session: &Session,
    active: &ActiveTurn,
    origin: &Origin,
) -> ToolContext {
    let config = env.config;
    ToolContext {
        sandbox: sandbox(env, session, origin),
        cwd: session.cwd.clone().into(),
        // Cancelled with the turn.
        cancel: active.cancel.child_token(),
        process_records: Some(crate::tools::orphans::dir(&env.dirs.data_dir)),
        spill: (config.tools.saved_output_limit_bytes > 0).then(|| SpillTo {
            dir: spill::session_dir(&env.dirs.data_dir, &session.id),
            limit: config.tools.saved_output_limit_bytes,
        }),
        limits: ToolLimits {
            output_limit_bytes: config.tools.output_limit_bytes,
            bash_default_timeout: Duration::from_secs(config.tools.bash_timeout_secs.max(1)),
            ..ToolLimits::default()
        },
        ask_user: match (&origin.unattended, &origin.peer) {
            (Some(unattended), _) => Some(Arc::new(NoOne(unattended.clone())) as Arc<dyn AskUser>),
            (None, Some(peer)) if origin.elicitation => Some(Arc::new(Elicitation {
                peer: peer.clone(),
                session_id: session.id.clone(),
                turn_id: active.id.clone(),
                timeout: Duration::from_secs(config.agent.ask_user_timeout_secs),
            }) as Arc<dyn AskUser>),
            (None, _) => None,
        },
        scrub: crate::state::scrub(config),
        // The prompting client's file system, if it declared one (an unattended run has no
        // client: the disk).
        client_files: origin
            .peer
            .as_ref()
            .filter(|_| origin.fs.read_text_file || origin.fs.write_text_file)
            .map(|peer| {
                Arc::new(ClientFs {
                    peer: peer.clone(),
                    session_id: session.id.clone(),
                    capabilities: origin.fs,
                }) as Arc<dyn ClientFiles>
            }),
        // Set by `before_turn` from the project's skills.
        skills: Vec::new(),
    }
}

/// The turn's sandbox, its `Checker` made once for every call. An unattended run's is its
/// entry's (strict by default), whatever the session or `[sandbox]` say; a person's
/// session has its own or the config's.
fn sandbox(env: Env<'_>, session: &Session, origin: &Origin) -> ToolSandbox {
    let config = &env.config.sandbox;
    let (choice, require) = match &origin.unattended {
        Some(unattended) => (unattended.sandbox.choice(), unattended.sandbox.require),
        None => (session.sandbox.unwrap_or(config.choice()), config.require),
    };
    env.sandbox
        .for_turn(config, choice, require, PathBuf::from(&session.cwd))
}

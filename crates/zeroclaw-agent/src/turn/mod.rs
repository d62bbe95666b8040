//! The turn: prompt → model stream → tool calls (with approval) → results → the model
//! again, until it ends its turn, is cancelled, or reaches `agent.max_steps`.
//!
//! [`start`] takes the session's slot and spawns the turn (`spawn.rs`); `step.rs` is the
//! loop, read top to bottom in `Turn::run` and `Turn::steps`, whose seams are named steps
//! (`before_turn`, `offered_tools`, `compact`, `model_call`, `tool_calls`, `call_tool`):
//! what a later feature adds to a turn plugs in there. A cancellation is one path: every
//! step returns `Result<_, Halt>` and a step that waits does so through `or_cancelled`
//! (`halt.rs`). `tool_call.rs` runs one call against the turn's one [`ToolContext`]
//! (`tool_context.rs`); `approval.rs` gathers the facts of a call, `permission.rs` decides
//! (a pure function), and `approval.rs` asks the user when it says so; `ask_user.rs` is how
//! the `ask_user` tool reaches the person (an `elicitation/create` request to the client
//! that sent the prompt). A turn fails with a [`TurnError`], which the daemon's `methods/`
//! tells on the wire. The turn sees the agent only through its [`Env`].
//!
//! [`ToolContext`]: crate::tools::ToolContext

mod approval;
mod ask_user;
mod budget;
mod checkpoint;
mod client_files;
mod compact;
mod error;
mod exit_plan;
mod halt;
mod hooks;
mod meter;
mod model_call;
mod modes;
mod permission;
mod plan;
mod skill_scripts;
mod spawn;
mod start_snapshot;
mod steer;
mod step;
mod subagent;
mod target;
mod tool_call;
mod tool_context;
mod usage;

pub use budget::{Cap, Limit};
pub use compact::{CompactError, Compaction, Mode as CompactMode};
pub use error::{Failure, TurnError};
pub use hooks::session_start;
pub use modes::auto_refused;
pub use spawn::{StartError, start, start_as};

use crate::config::{Config, Policy};
use crate::link::Link;
use crate::mcp::Mcp;
use crate::provider::Provider;
use crate::state::{AgentState, Dirs};
use crate::store::Store;
use crate::tools::Tools;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a turn uses of the agent.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    pub store: &'a Store,
    pub provider: &'a Provider,
    pub config: &'a Config,
    pub tools: &'a Tools,
    /// The daemon's MCP servers: a turn waits for those still starting.
    pub mcp: &'a Mcp,
    /// The data dir (where tools keep their records of the processes `bash` started) and
    /// the config file: the daemon's own files, which tools reach only when approved.
    pub dirs: &'a Dirs,
    /// What the machine offers the sandbox, and the paths every sandbox hides.
    pub sandbox: &'a crate::sandbox::Sandbox,
    /// Snapshots of the session's cwd before and after the turn.
    pub checkpoints: &'a Arc<crate::checkpoints::Checkpointer>,
    /// The project files' cache.
    pub project_files: &'a Arc<crate::project::Files>,
    /// Told of model calls, tokens and tool calls (the daemon's metrics).
    pub observer: &'a dyn crate::state::TurnCount,
    /// The sessions in memory, where a `task` call puts its child session.
    pub sessions: &'a crate::session::Sessions,
    /// One permit per running subagent (`[agents] max_concurrent`).
    pub subagent_slots: &'a Arc<tokio::sync::Semaphore>,
}

impl<'a> Env<'a> {
    pub fn of(agent: &'a AgentState) -> Self {
        Self {
            store: &agent.sessions.store,
            provider: &agent.provider,
            config: &agent.config,
            tools: &agent.tools,
            mcp: &agent.mcp,
            dirs: &agent.dirs,
            sandbox: &agent.sandbox,
            checkpoints: &agent.checkpoints,
            project_files: &agent.project_files,
            observer: &*agent.turn_count,
            sessions: &agent.sessions,
            subagent_slots: &agent.subagent_slots,
        }
    }
}

/// Who sent the prompt: a connection (`ask_user` asks it), or nobody (an unattended run).
#[derive(Debug, Clone)]
pub struct Origin {
    /// The connection that sent the prompt; `None` for an unattended run.
    pub peer: Option<Arc<dyn Link>>,
    pub elicitation: bool,
    /// The rules of an unattended run (webhook or schedule): nobody can be asked.
    pub unattended: Option<Arc<Unattended>>,
    /// The file operations it does for the tools (`fs/*`); none: the disk.
    pub fs: zeroclaw_protocol::FsCapabilities,
}

impl Origin {
    /// For the log: the connection's label, or `webhook:<name>` / `schedule:<name>`.
    pub fn label(&self) -> String {
        match (&self.peer, &self.unattended) {
            (Some(peer), _) => peer.label().to_owned(),
            (None, Some(u)) => format!("{}:{}", u.source, u.name),
            (None, None) => "-".into(),
        }
    }
}

/// An unattended run's approval policy (docs/unattended.md): per tool `allow`, `deny` or
/// `ask` (an attached client may answer within the approval timeout); a tool the table
/// does not name follows `[approvals]` (or its MCP server's `approve`) with `ask` turned
/// into `deny` (`permission.rs` decides).
#[derive(Debug, Clone)]
pub struct Unattended {
    /// `webhook` or `schedule`.
    pub source: &'static str,
    pub name: String,
    pub approve: BTreeMap<String, Policy>,
    /// The run's sandbox: the entry's, or the strict default.
    pub sandbox: crate::sandbox::UnattendedSandbox,
    /// The turn's `provider_retry` and `provider_fallback` events, for the run's record.
    pub provider_log: Arc<ProviderLog>,
    /// The entry's own budgets, besides `[limits]` (`budget.rs`).
    pub budget: Vec<Limit>,
}

/// An unattended turn's `provider_retry` and `provider_fallback` events, as sent, kept for
/// its run's record. Bounded: the first [`ProviderLog::MAX`] are kept, later ones are
/// dropped (a turn that retries that often has the first ones to show why).
#[derive(Debug, Default)]
pub struct ProviderLog(std::sync::Mutex<Vec<serde_json::Value>>);

impl ProviderLog {
    pub const MAX: usize = 64;

    fn push(&self, update: &zeroclaw_protocol::Update<'_>) {
        let mut events = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if events.len() < Self::MAX
            && let Ok(value) = serde_json::to_value(update)
        {
            events.push(value);
        }
    }

    /// The events kept so far, in order, emptying the log.
    pub fn take(&self) -> Vec<serde_json::Value> {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

impl Unattended {
    /// What the model is told when the policy refuses a call.
    pub fn denied(&self) -> String {
        format!(
            "denied by the unattended policy of {} {}: no one can approve this run",
            self.source, self.name
        )
    }
}

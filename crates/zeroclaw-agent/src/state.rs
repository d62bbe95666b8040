//! What every turn (and every connection of the daemon around it) shares of the agent.

use crate::checkpoints::Checkpointer;
use crate::config::Config;
use crate::mcp::{Mcp, Settings};
use crate::provider::Provider;
use crate::sandbox::Sandbox;
use crate::session::Sessions;
use crate::tools::{EnvScrub, Tools, orphans};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::Semaphore;
use tokio_util::task::TaskTracker;

/// The directories the agent works in, given by whoever runs it.
#[derive(Debug, Clone)]
pub struct Dirs {
    /// Where tools keep their records of the processes `bash` started (`tools/orphans.rs`)
    /// and long outputs (`tools/spill.rs`); a tool reaches it only when approved.
    pub data_dir: PathBuf,
    /// The configuration file, which a tool reaches only when approved.
    pub config_file: PathBuf,
}

impl Dirs {
    /// The config dir: where the user's own `AGENTS.md`, skills and commands are.
    pub fn config_dir(&self) -> &std::path::Path {
        self.config_file
            .parent()
            .unwrap_or_else(|| std::path::Path::new("."))
    }
}

/// Told as turns start and end: the daemon counts them (a running turn keeps an
/// `--ephemeral` daemon up). Also told of what a turn does that the daemon measures (its
/// metrics): model calls, tokens, tool calls; those default to nothing.
pub trait TurnCount: Send + Sync + std::fmt::Debug {
    fn turn_started(&self);
    fn turn_ended(&self);
    /// A model call was opened (or failed to): how long it took the provider to accept
    /// it, and the kind of its error (`ErrorKind::as_str`) if it failed.
    fn model_call(&self, _seconds: f64, _error: Option<&'static str>) {}
    /// A model call's usage, as the provider reported it.
    fn tokens_used(&self, _input: u64, _output: u64) {}
    /// A tool call ended: `ok`, `error` (its result is an error) or `cancelled`.
    fn tool_call(&self, _tool: &str, _outcome: &'static str) {}
}

#[derive(Debug)]
pub struct AgentState {
    pub dirs: Dirs,
    pub config: Arc<Config>,
    pub sessions: Sessions,
    pub provider: Provider,
    /// The tools turns offer the model; built once, changeable at run time (MCP servers).
    pub tools: Arc<Tools>,
    /// The servers of `[[mcp_servers]]`, their tools registered in `tools`.
    pub mcp: Mcp,
    /// Running turns, so shutdown can cancel them and wait for their history to be stored.
    pub turns: TaskTracker,
    /// One permit per running turn (`agent.max_running_turns`).
    pub turn_slots: Arc<Semaphore>,
    /// One permit per running subagent (`[agents] max_concurrent`).
    pub subagent_slots: Arc<Semaphore>,
    /// Told of every turn that starts and ends.
    pub turn_count: Arc<dyn TurnCount>,
    /// What the machine offers the sandbox (probed once) and what it hides.
    pub sandbox: Sandbox,
    /// The snapshots of sessions' workspaces (`checkpoints/`).
    pub checkpoints: Arc<Checkpointer>,
    /// The project files turns read (AGENTS.md, skills, commands), read again only when
    /// they change.
    pub project_files: Arc<crate::project::Files>,
}

impl AgentState {
    /// Starts the configured MCP servers (in the background) around the built-in tools.
    pub fn new(
        dirs: Dirs,
        config: Arc<Config>,
        sessions: Sessions,
        provider: Provider,
        turn_count: Arc<dyn TurnCount>,
        sandbox: Sandbox,
    ) -> Self {
        let turn_slots = Arc::new(Semaphore::new(config.agent.max_running_turns));
        let subagent_slots = Arc::new(Semaphore::new(config.agents.max_concurrent));
        // The daemon's own directories are never captured, whatever a session's cwd.
        let checkpoints = Arc::new(Checkpointer::new(
            &dirs.data_dir,
            sandbox.hidden.clone(),
            config.agent.checkpoints,
        ));
        let tools = Arc::new(Tools::builtin());
        let mcp = Mcp::start(
            &config.mcp_servers,
            tools.clone(),
            Settings {
                records: Some(orphans::dir(&dirs.data_dir)),
                scrub: scrub(&config),
                cwd: None,
            },
        );
        Self {
            dirs,
            config,
            sessions,
            provider,
            tools,
            mcp,
            turns: TaskTracker::new(),
            turn_slots,
            subagent_slots,
            turn_count,
            sandbox,
            checkpoints,
            project_files: Arc::default(),
        }
    }
}

/// The daemon's variables no process it starts inherits (bash's commands, MCP servers).
pub fn scrub(config: &Config) -> EnvScrub {
    EnvScrub::new(
        config.provider.api_key_env.as_deref(),
        &config.tools.scrub_env,
    )
}

//! The turn: prompt → model stream → tool calls (with approval) → results → the model
//! again, until it ends its turn, is cancelled, or reaches `agent.max_steps`.
//!
//! [`start`] takes the session's slot and spawns the turn (`spawn.rs`); `step.rs` is the
//! loop; `approval.rs` asks the user before a tool runs, `tool_call.rs` runs one call and
//! `ask_user.rs` is how the `ask_user` tool reaches the person (an `elicitation/create`
//! request to the client that sent the prompt). A turn fails with a
//! [`TurnError`], which `methods/` tells on the wire. The turn sees the daemon only through
//! its [`Env`].

mod approval;
mod ask_user;
mod client_files;
mod compact;
mod error;
mod spawn;
mod step;
mod target;
mod tool_call;

pub use compact::{CompactError, Compaction, Mode as CompactMode};
pub use error::{Failure, TurnError};
pub use spawn::{StartError, start};

use crate::config::Config;
use crate::mcp::Mcp;
use crate::provider::Provider;
use crate::state::DaemonState;
use crate::store::Store;
use crate::tools::Tools;
use zeroclaw_ipc::Paths;
use zeroclaw_rpc::PeerHandle;

/// What a turn uses of the daemon.
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
    pub paths: &'a Paths,
}

impl<'a> Env<'a> {
    pub fn of(daemon: &'a DaemonState) -> Self {
        Self {
            store: &daemon.sessions.store,
            provider: &daemon.provider,
            config: &daemon.config,
            tools: &daemon.tools,
            mcp: &daemon.mcp,
            paths: &daemon.paths,
        }
    }
}

/// The connection that sent the prompt: `ask_user` asks it.
#[derive(Debug, Clone)]
pub struct Origin {
    pub peer: PeerHandle,
    pub elicitation: bool,
    /// The file operations it does for the tools (`fs/*`); none: the disk.
    pub fs: zeroclaw_protocol::FsCapabilities,
}

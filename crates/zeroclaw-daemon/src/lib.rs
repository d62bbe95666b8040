//! The zeroclaw daemon: the agent (`zeroclaw-agent`) composed with its doors.
//!
//! Layers, each knowing only the one below: [`daemon`](crate::run) (doors: listen,
//! accept, stop) → `methods` (the handshake gate, the method table and its typed handlers)
//! → `unattended` (turns nobody attached started: webhooks, schedules) → `connection`
//! (one connection's state) → `state` (what connections share: the agent's parts and the
//! daemon's) → `link` (a connection's peer as the agent's `Link`), `auth`,
//! `unattended::rules` (the parts of unattended work that run nothing: queues,
//! signatures, templates, ticks) → `config`, `clients`. Below them all, the agent:
//! sessions, turns, providers, tools, the store.
//!
//! The public API is what a binary needs to run a daemon ([`run`], [`DaemonOptions`],
//! [`config`]), what `zeroclaw store` needs ([`maintenance`]) and one entry for tests
//! ([`testing`]).

mod auth;
mod clients;
pub mod config;
mod connection;
mod daemon;
mod link;
pub mod maintenance;
/// The projects whose hooks may run, for `zeroclaw trust` (docs/project.md): a file in the
/// data dir, which the agent reads at each turn's start.
pub mod trust {
    pub use zeroclaw_agent::project::Project;
    pub use zeroclaw_agent::project::hooks::PROJECT_FILE;
    pub use zeroclaw_agent::project::trust::set;
}
mod methods;
pub mod service;
mod state;
pub mod testing;
mod toml_errors;
mod unattended;

pub use daemon::{DaemonError, DaemonOptions, GatewayChoice, run};

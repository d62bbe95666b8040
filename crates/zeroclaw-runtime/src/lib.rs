//! The zeroclaw daemon.
//!
//! Layers, each knowing only the one below: [`daemon`](crate::run) (doors: listen,
//! accept, stop) → `methods` (the handshake gate, the method table and its typed handlers)
//! → the domain: `session` (who is attached, which turn runs) → `turn` (the agent loop) →
//! `provider`, `tools` and `store`. `connection` holds one connection's state.
//!
//! The public API is what a binary needs to run a daemon ([`run`], [`DaemonOptions`],
//! [`config`]), what `zeroclaw store` needs ([`maintenance`]) and one entry for tests
//! ([`testing`]).

mod auth;
mod clients;
pub mod config;
mod connection;
mod daemon;
mod history;
pub mod maintenance;
mod mcp;
mod methods;
mod provider;
mod runs;
mod session;
mod state;
mod store;
pub mod testing;
mod tools;
mod turn;
mod unattended;

pub use daemon::{DaemonError, DaemonOptions, GatewayChoice, run};

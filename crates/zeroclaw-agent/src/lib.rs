//! The zeroclaw agent: sessions, turns, providers, tools, MCP servers and the store. It
//! knows no door: no socket, no HTTP server, no JSON-RPC peer, no token. The daemon
//! (`zeroclaw-daemon`) composes the doors around it, and reaches it through these modules.
//!
//! Layers, each knowing only the ones below (`tests/layers.rs` checks them): `turn` (the
//! agent loop) → `state` (what turns share) → `session` (who is attached, which turn
//! runs) → `history` → `provider` and `mcp` → `tools` and `store` → `config`, `link`
//! (a client attached to a session, as the agent sees it: the daemon implements it) and
//! `project` (AGENTS.md, skills, custom commands: what a session's project holds) →
//! `sandbox` (which sandbox policy applies; the mechanism is `zeroclaw-sandbox`).

pub mod checkpoints;
pub mod config;
pub mod history;
pub mod link;
pub mod mcp;
#[cfg(windows)]
mod process_tree;
pub mod project;
pub mod prompt;
pub mod provider;
pub mod sandbox;
pub mod session;
pub mod state;
pub mod store;
pub mod tools;
pub mod turn;

//! `zeroclaw acp` end to end: the built binary as a child process, driven over its real
//! stdin and stdout by the ACP crate's client side (`editor.rs`), against the real daemon
//! and the scripted fake provider. One file per behaviour.
//!
//! Steps are ordered by what the editor is sent (updates, requests, answers), by the
//! daemon's log and by the requests the fake provider records, never by sleeping.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![cfg_attr(windows, allow(unused_imports, dead_code))]

#[path = "../common/mod.rs"]
mod common;

mod editor;

mod ask_user;
mod cancel;
// Issue 34: $/cancel_request of session/new, load and fork (the hooks are shell loops).
#[cfg(unix)]
mod cancel_requests;
mod commands;
// Issue 34: context_compacted as compaction_update.
mod compaction;
mod daemon_gone;
mod editor_fs;
mod editor_leaves;
mod fork;
mod handshake;
mod load;
// Issue 34: resume, close, delete, config options, $/cancel_request.
mod lifecycle;
mod modes;
// The MCP test server is found as a Linux build; under Wine it is not run yet.
#[cfg(unix)]
mod mcp;
mod permissions;
// Issue 33: the agent's plan.
mod plan;
mod prompt;
// Issue 33: a subagent's events.
mod subagents;
// Issue 34: session_info_update and session/set_title.
mod titles;

//! Sessions end to end: the real daemon, a scripted fake LLM provider on 127.0.0.1, and
//! NDJSON clients. One file per behaviour, all in this one test binary: as a binary each,
//! every file would link the whole dependency set again, which doubled the build of the
//! tests.
//!
//! Steps are ordered by what the daemon reports (events, answers, its log) and by the
//! requests the fake provider records, never by sleeping. The only timeouts are the
//! configured ones a test is about (approval, ask_user, idle), and hang guards.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// What only the Unix-only tests use.
#![cfg_attr(windows, allow(unused_imports, dead_code))]

#[path = "../common/mod.rs"]
mod common;

mod accept_edits;
mod anthropic;
// Issue 33: the agent's plan and the tools users expect.
mod apply_patch;
mod approval_preview;
mod approval_resolved;
mod approvals;
mod ask_user;
mod backpressure;
mod big_history;
// Issue 34: `[limits]` budgets.
mod budgets;
mod cancel;
mod glob;
mod images;
mod todo_write;
mod web_fetch;
// Scripted with bash, modes and symlinks.
#[cfg(unix)]
mod checkpoints;
mod compaction;
mod disconnects;
mod hardening;
// Scripted with sh.
#[cfg(unix)]
mod hooks;
mod limits;
mod many_turns;
mod plan_mode;
// The MCP tests find the test server as a Linux build; under Wine they are not run yet.
#[cfg(unix)]
mod mcp;
mod project;
mod provider_errors;
// Issue 34: provider resilience.
mod provider_fallback;
mod provider_retries;
mod replay;
mod restart;
mod session_methods;
mod set_mode;
mod set_model;
// Issue 32: a project skill's scripts wait for trust.
mod skill_scripts;
mod steer;
mod streaming;
mod subagents;
mod tools;
mod usage;

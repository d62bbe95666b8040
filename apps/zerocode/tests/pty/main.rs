//! zerocode end to end: the real `zerocode` binary in a real pseudo-terminal, the real
//! daemon (started by zerocode itself, as a user would have it), and a scripted fake LLM
//! provider on 127.0.0.1.
//!
//! Steps are ordered by what appears on the terminal and by the requests the fake provider
//! records, never by sleeping. The only timeouts are hang guards: the expect timeout, and a
//! bounded poll for the ephemeral daemon's socket to go away.
//!
//! The daemon binary: zerocode looks for `zeroclaw` beside its own executable (as it does
//! when installed). Cargo only builds `zeroclaw` when something needs it, so the first test
//! to run builds it with `cargo build -p zeroclaw` into the same target directory and
//! profile as this test's `zerocode` (a no-op when it is up to date).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

mod approvals;
mod basics;
mod checkpoints;
mod commands;
mod input;
// Issue 33: the agent's plan.
mod modes;
mod plan;
mod rendering;
mod steer;
mod subagents;
mod titles;
// Issue 34: usage and cost, provider retries and fallbacks, budgets, images.
mod usage;

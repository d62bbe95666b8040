//! Unattended turns end to end (docs/unattended.md): the real daemon with its gateway on
//! 127.0.0.1:0, real HTTP deliveries (reqwest) signed with HMAC-SHA256, the fake provider,
//! and schedules on a test clock the test writes. One file per behaviour. Ordered by the
//! daemon's answers and log lines and the provider's recorded requests, never by sleeping.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod harness;

// Issue 34: budgets per run.
mod budgets;
mod cli;
mod events;
mod headers;
mod one_daemon;
// Issue 34: provider retries and fallbacks in the run record.
mod policy;
mod provider_events;
mod queue;
mod refusals;
mod replays;
#[cfg(unix)]
mod restart;
// The daemon's local zone is pinned with `TZ`, which only Unix reads.
#[cfg(unix)]
mod schedules;
mod signatures;
mod standard;

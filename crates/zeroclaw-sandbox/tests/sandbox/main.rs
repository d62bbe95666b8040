//! The sandbox against real processes on the real kernel: one file per behaviour, all in
//! this one test binary. Every escape is tried in each sandboxed mode, with a user
//! namespace and without (the fallback), and its allowed counterpart is run too.
//!
//! Steps are ordered by the processes themselves (a command's exit, FIFOs a background
//! process blocks on), never by sleeping; the only timeout is the harness's hang guard.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[cfg(target_os = "linux")]
mod common;

#[cfg(target_os = "linux")]
mod act;
#[cfg(target_os = "linux")]
mod allowed;
#[cfg(target_os = "linux")]
mod background;
#[cfg(target_os = "linux")]
mod checks;
#[cfg(target_os = "linux")]
mod explain;
#[cfg(target_os = "linux")]
mod full;
#[cfg(target_os = "linux")]
mod hidden;
#[cfg(target_os = "linux")]
mod network;
#[cfg(target_os = "linux")]
mod policy_errors;
#[cfg(target_os = "linux")]
mod processes;
#[cfg(target_os = "linux")]
mod spawn_failure;
#[cfg(target_os = "linux")]
mod writes;

// Windows and macOS: the sandbox is reported unavailable and only `full` runs (under Wine
// in CI, through scripts/windows-tests.sh).
#[cfg(not(target_os = "linux"))]
mod unavailable;

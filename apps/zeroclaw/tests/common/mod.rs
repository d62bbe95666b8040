//! The one harness of zeroclaw's integration tests: the real `zeroclaw` binary in a temp
//! dir, the fake LLM provider on 127.0.0.1, and NDJSON connections to the daemon.
//!
//! - [`daemon`]: a temp dir and the daemon process started in it, its stderr log.
//! - [`limits`]: resource limits set on the daemon process (file size, descriptors).
//! - [`conn`]: a raw NDJSON connection, for the wire rules.
//! - [`client`]: a connection that drives turns, answers questions, keeps stray frames.
//! - [`env`]: a daemon configured to talk to a fake provider, and its `config.toml`.
//! - [`replies`]: what the fake provider answers, and what the daemon sent it.
//! - [`os`]: the operating system's side: processes, users, files on disk.
//!
//! Steps are ordered by events the daemon reports (its log lines on stderr, its answers on
//! the socket, its exit) and by the requests the fake provider records, never by sleeping.
//! Timeouts here are hang guards only.

// Every test binary compiles this harness whole and uses a part of it: what one binary
// leaves unused (helpers, and the re-exports below), another uses.
#![allow(dead_code, unused_imports, clippy::unwrap_used, clippy::expect_used)]

pub mod client;
pub mod conn;
pub mod daemon;
pub mod env;
pub mod limits;
pub mod mcp;
pub mod os;
pub mod replies;

pub use client::*;
pub use conn::*;
pub use daemon::*;
pub use env::*;
pub use limits::*;
pub use mcp::*;
pub use os::*;
pub use replies::*;

use serde_json::Value;
use std::time::{Duration, Instant};

/// Upper bound for anything a test waits on. Generous: CI machines are shared and slow.
pub const HANG_GUARD: Duration = Duration::from_secs(60);

/// The `zeroclaw` binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_zeroclaw")
}

/// The error code of an answer, panicking if it is not an error.
pub fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {answer}"))
}

/// Waits (hang-guarded) until `pred` holds. Only for state the daemon reports no event
/// for (files a tool writes, processes in /proc); everything else waits on an event.
pub fn poll_until(what: &str, mut pred: impl FnMut() -> bool) {
    let deadline = Instant::now() + HANG_GUARD;
    while !pred() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

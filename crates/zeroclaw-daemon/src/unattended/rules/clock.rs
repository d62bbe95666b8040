//! The scheduler's clock: the system's, or, for tests only, a file the test writes.
//!
//! `ZEROCLAW_TEST_CLOCK=<file>` makes the scheduler read "now" (RFC 3339) from that file,
//! re-reading it every 20 ms, so an end-to-end test moves time by writing the file and
//! never waits for real minutes. It changes nothing but the scheduler's notion of time
//! (turns, tokens and the store keep the system clock). It is an environment variable
//! rather than a config key or a method because it is not a feature: the test harness
//! starts the real binary, which cannot be a test build.

use chrono::{DateTime, Utc};
use std::path::PathBuf;
use std::time::Duration;

/// The test-only variable naming the clock file (see the module docs).
pub const TEST_CLOCK_ENV: &str = "ZEROCLAW_TEST_CLOCK";

/// How often a real clock is looked at even with no tick due: a clock that jumps is
/// noticed within this.
const REAL_POLL: Duration = Duration::from_secs(30);
/// How often the test clock's file is read.
const FILE_POLL: Duration = Duration::from_millis(20);

#[derive(Debug, Clone)]
pub enum Clock {
    System,
    File(PathBuf),
}

impl Clock {
    /// The system clock, unless the test variable names a file.
    pub fn from_env() -> Self {
        match std::env::var_os(TEST_CLOCK_ENV) {
            Some(path) if !path.is_empty() => {
                tracing::warn!(file = %PathBuf::from(&path).display(), "the scheduler reads its time from a test clock file ({TEST_CLOCK_ENV})");
                Self::File(path.into())
            }
            _ => Self::System,
        }
    }

    /// [`Clock::from_env`] without its log line (for answering `schedules/list`).
    pub fn from_env_quiet() -> Self {
        match std::env::var_os(TEST_CLOCK_ENV) {
            Some(path) if !path.is_empty() => Self::File(path.into()),
            _ => Self::System,
        }
    }

    /// Now; `None` when the test clock's file cannot be read (or holds no time) yet.
    pub fn now(&self) -> Option<DateTime<Utc>> {
        match self {
            Self::System => Some(Utc::now()),
            Self::File(path) => {
                let text = std::fs::read_to_string(path).ok()?;
                DateTime::parse_from_rfc3339(text.trim())
                    .ok()
                    .map(|t| t.with_timezone(&Utc))
            }
        }
    }

    /// How long to wait before looking again, when the next tick is at `next`.
    pub fn wait(&self, now: DateTime<Utc>, next: Option<DateTime<Utc>>) -> Duration {
        match self {
            Self::File(_) => FILE_POLL,
            Self::System => next
                .and_then(|n| (n - now).to_std().ok())
                .map_or(REAL_POLL, |d| d.min(REAL_POLL))
                // A tick lands on its minute: wake just after it, not just before.
                .max(Duration::from_millis(50)),
        }
    }
}

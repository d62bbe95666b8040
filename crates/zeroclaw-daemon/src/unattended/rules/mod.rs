//! The parts of unattended work that run nothing: they need no turn and no daemon state,
//! so the daemon's state can hold them and tests can drive them with any input. Each
//! hook's and schedule's bounded queue and its webhook key (`queues.rs`), the signature
//! checks (GitHub's in `signature.rs`, Standard Webhooks in `standard.rs`) and the delivery
//! id, the prompt template (and its plain-token rule for headers), the scheduler's pure
//! core (`ticker.rs`) and its clock. The running parts, one level up in `unattended/`, use
//! them; nothing here uses those.

mod clock;
mod queues;
mod signature;
pub mod standard;
mod template;
mod ticker;

pub use clock::Clock;
pub use queues::{Queues, Target};
pub use signature::{body_sha256, delivery_id, verify};
pub use template::{Request, render};
pub use ticker::Ticker;

/// What started a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    Webhook,
    Schedule,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Webhook => "webhook",
            Self::Schedule => "schedule",
        }
    }
}

/// A recorded run waiting for its turn.
#[derive(Debug, Clone)]
pub struct Job {
    pub run_id: String,
    pub session_id: String,
    pub prompt: String,
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    ms_of(chrono::Utc::now())
}

pub fn ms_of<Tz: chrono::TimeZone>(t: chrono::DateTime<Tz>) -> i64 {
    t.timestamp_millis()
}

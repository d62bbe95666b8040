//! Unattended runs' parts that need no turn: each hook's and schedule's bounded queue and
//! its webhook key, the signature check, the delivery id, the prompt template, the
//! scheduler's pure core and its clock. `unattended/` (above `turn/`) runs them.

mod clock;
mod signature;
mod template;
mod ticker;

pub use clock::Clock;
pub use signature::{delivery_id, verify};
pub use template::{Request, render};
pub use ticker::Ticker;

use crate::config::{Config, ScheduleConfig, WebhookConfig};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

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

/// One hook or schedule: where its runs wait.
pub struct Target {
    pub source: Source,
    pub name: String,
    /// Bounded at the entry's `queue`. Overflow rule: a webhook delivery past it is
    /// answered 429 with `Retry-After` and nothing is recorded; a schedule's tick past it
    /// is skipped, logged and recorded as a `skipped` run. A slot is reserved before a
    /// run is recorded, so a recorded run always has its place.
    pub tx: mpsc::Sender<Job>,
    /// Held while a run is accepted (dedup, shared session, record, queue), so two
    /// deliveries of one hook never race each other.
    pub accept: tokio::sync::Mutex<()>,
    /// A webhook's HMAC key, read from its `secret_env` at start-up; `None`: the variable
    /// is unset and the hook answers 503. Never logged (see the `Debug` impl).
    secret: Option<Vec<u8>>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("source", &self.source)
            .field("name", &self.name)
            .field("active", &self.secret.is_some())
            .finish_non_exhaustive()
    }
}

impl Target {
    pub fn secret(&self) -> Option<&[u8]> {
        self.secret.as_deref()
    }
}

/// Every hook's and schedule's queue; the receiving ends wait for `unattended::start`.
#[derive(Debug, Default)]
pub struct Queues {
    targets: Vec<Arc<Target>>,
    receivers: Mutex<Vec<(Arc<Target>, mpsc::Receiver<Job>)>>,
}

impl Queues {
    pub fn new(config: &Config) -> Self {
        let mut targets = Vec::new();
        let mut receivers = Vec::new();
        let mut add = |source, name: &str, queue: usize, secret: Option<Vec<u8>>| {
            let (tx, rx) = mpsc::channel(queue.max(1));
            let target = Arc::new(Target {
                source,
                name: name.to_owned(),
                tx,
                accept: tokio::sync::Mutex::new(()),
                secret,
            });
            targets.push(target.clone());
            receivers.push((target, rx));
        };
        for WebhookConfig {
            name,
            secret_env,
            queue,
            ..
        } in &config.webhooks
        {
            let secret = std::env::var_os(secret_env)
                .filter(|v| !v.is_empty())
                .map(|v| v.to_string_lossy().into_owned().into_bytes());
            add(Source::Webhook, name, *queue, secret);
        }
        for ScheduleConfig { name, queue, .. } in &config.schedules {
            add(Source::Schedule, name, *queue, None);
        }
        Self {
            targets,
            receivers: Mutex::new(receivers),
        }
    }

    pub fn get(&self, source: Source, name: &str) -> Option<&Arc<Target>> {
        self.targets
            .iter()
            .find(|t| t.source == source && t.name == name)
    }

    /// The queues' receiving ends, once (the workers take them at start-up).
    pub fn take_receivers(&self) -> Vec<(Arc<Target>, mpsc::Receiver<Job>)> {
        std::mem::take(&mut *self.receivers.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    ms_of(chrono::Utc::now())
}

pub fn ms_of<Tz: chrono::TimeZone>(t: chrono::DateTime<Tz>) -> i64 {
    t.timestamp_millis()
}

//! Each hook's and schedule's bounded queue of runs, and its webhook key.

use super::{Job, Source, standard};
use crate::config::{Config, ScheduleConfig, Signature, WebhookConfig};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

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
    /// A webhook's HMAC key, read from its `secret_env` at start-up (under `signature =
    /// "standard"` decoded from `whsec_<base64>`); `Err`: why the hook has none and answers
    /// 503 (logged at start-up, naming the variable). Never logged (see the `Debug` impl).
    key: Result<Vec<u8>, String>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("source", &self.source)
            .field("name", &self.name)
            .field("active", &self.key.is_ok())
            .finish_non_exhaustive()
    }
}

impl Target {
    pub fn secret(&self) -> Option<&[u8]> {
        self.key.as_deref().ok()
    }

    /// Why a webhook has no key (its secret is unset or malformed), if it has none.
    pub fn inactive(&self) -> Option<&str> {
        self.key.as_ref().err().map(String::as_str)
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
        let mut add = |source, name: &str, queue: usize, key: Result<Vec<u8>, String>| {
            let (tx, rx) = mpsc::channel(queue.max(1));
            let target = Arc::new(Target {
                source,
                name: name.to_owned(),
                tx,
                accept: tokio::sync::Mutex::new(()),
                key,
            });
            targets.push(target.clone());
            receivers.push((target, rx));
        };
        for hook in &config.webhooks {
            add(Source::Webhook, &hook.name, hook.queue, key_of(hook));
        }
        for ScheduleConfig { name, queue, .. } in &config.schedules {
            add(
                Source::Schedule,
                name,
                *queue,
                Err("a schedule has no key".into()),
            );
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

/// A webhook's key from its `secret_env`, or why there is none (never the value).
fn key_of(hook: &WebhookConfig) -> Result<Vec<u8>, String> {
    let Some(value) = std::env::var_os(&hook.secret_env).filter(|v| !v.is_empty()) else {
        return Err("its secret_env is not set".into());
    };
    let value = value.to_string_lossy();
    match hook.signature {
        Signature::Github => Ok(value.into_owned().into_bytes()),
        Signature::Standard => standard::decode_secret(&value)
            .map_err(|why| format!("its secret_env's value is not usable: {why}")),
    }
}

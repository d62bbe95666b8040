//! Unattended work: turns that nobody attached started, from webhooks and schedules
//! (docs/unattended.md).
//!
//! Two halves, one line between them:
//! - [`rules`]: what runs nothing and needs no daemon state: the queues, signatures, the
//!   prompt template, when a schedule ticks, the clock. The daemon's state holds the
//!   queues, so this half sits below it; it never uses the running half.
//! - the running half, here: a run is recorded (`queued`) and queued by [`accept`] — from
//!   a webhook delivery (`webhook.rs`), a schedule's tick (`scheduler.rs`) or
//!   `schedule/run` — and one worker per hook or schedule runs its queue's runs one after
//!   another (`worker.rs`), each a turn with no person attached: the entry's `approve`
//!   policy decides, `ask_user` is told no one can answer. At start-up, [`recover`]
//!   (`recovery.rs`) settles what a previous daemon left before any door opens, then
//!   [`start`] starts the workers and the scheduler.

mod accept;
mod recovery;
pub mod rules;
mod scheduler;
mod webhook;
mod worker;

pub use accept::{Accepted, NewRun, Refused, accept};
pub use recovery::recover;
pub use scheduler::next_runs;
pub use webhook::deliver;

use crate::config::{Policy, SessionMode, Template};
use crate::state::DaemonState;
use rules::{Source, Target};
use std::collections::BTreeMap;
use std::sync::Arc;
use zeroclaw_agent::sandbox::UnattendedSandbox;
use zeroclaw_agent::turn::{Cap, Limit};

/// What a run needs of its hook's or schedule's config entry.
pub struct Entry {
    pub cwd: String,
    pub session: SessionMode,
    pub approve: BTreeMap<String, Policy>,
    pub template: Template,
    pub sandbox: UnattendedSandbox,
    /// The entry's budgets per run, named for a run's record.
    pub budget: Vec<Limit>,
}

/// The config entry of `target`.
pub fn entry(state: &DaemonState, source: Source, name: &str) -> Option<Entry> {
    let config = &state.config;
    let (cwd, session, approve, template, sandbox, budget) = match source {
        Source::Webhook => {
            let h = config.webhooks.iter().find(|h| h.name == name)?;
            let budget = limits(source, name, h.max_tokens, h.max_cost, h.max_steps);
            (
                &h.cwd,
                h.session,
                &h.approve,
                h.template(),
                h.sandbox,
                budget,
            )
        }
        Source::Schedule => {
            let s = config.schedules.iter().find(|s| s.name == name)?;
            let budget = limits(source, name, s.max_tokens, s.max_cost, s.max_steps);
            (
                &s.cwd,
                s.session,
                &s.approve,
                s.template(),
                s.sandbox,
                budget,
            )
        }
    };
    Some(Entry {
        cwd: cwd.to_string_lossy().into_owned(),
        session,
        approve: approve.clone(),
        // Validated when the config was loaded.
        template: template.ok()?,
        sandbox,
        budget,
    })
}

/// An entry's budgets, each named as the run's record shows it: `max_tokens (schedule
/// nightly)`.
fn limits(
    source: Source,
    name: &str,
    max_tokens: Option<u64>,
    max_cost: Option<f64>,
    max_steps: Option<u32>,
) -> Vec<Limit> {
    let named = |key: &str, cap| Limit {
        name: format!("{key} ({} {name})", source.as_str()),
        cap,
    };
    let tokens = max_tokens.map(|max| named("max_tokens", Cap::Tokens(max)));
    let cost = max_cost.map(|max| named("max_cost", Cap::Cost(max)));
    let steps = max_steps.map(|max| named("max_steps", Cap::Steps(max)));
    [tokens, cost, steps].into_iter().flatten().collect()
}

/// Starts a worker per queue and, if there are schedules, the scheduler; logs each webhook
/// that cannot be served. `gateway`: whether the gateway serves (webhooks need it). Called
/// after [`recover`], which queues again the runs a previous daemon left waiting.
pub fn start(state: &Arc<DaemonState>, gateway: bool) {
    for hook in &state.config.webhooks {
        let inactive = state
            .runs
            .get(Source::Webhook, &hook.name)
            .and_then(|t| t.inactive());
        if !gateway {
            tracing::warn!(webhook = %hook.name, "webhook inactive: the gateway is off");
        } else if let Some(why) = inactive {
            tracing::error!(webhook = %hook.name, secret_env = %hook.secret_env, "webhook inactive: {why}; requests to it get 503");
        }
    }
    for (target, rx) in state.runs.take_receivers() {
        state
            .agent
            .turns
            .spawn(worker::work(state.clone(), target, rx));
    }
    if !state.config.schedules.is_empty() {
        let state = state.clone();
        tokio::spawn(scheduler::run(state, rules::Clock::from_env()));
    }
}

/// For `target`: its source and name, as the turn's policy names them.
fn unattended_of(
    target: &Target,
    entry: &Entry,
    provider_log: Arc<zeroclaw_agent::turn::ProviderLog>,
) -> zeroclaw_agent::turn::Unattended {
    zeroclaw_agent::turn::Unattended {
        source: target.source.as_str(),
        name: target.name.clone(),
        approve: entry.approve.clone(),
        sandbox: entry.sandbox,
        provider_log,
        budget: entry.budget.clone(),
    }
}

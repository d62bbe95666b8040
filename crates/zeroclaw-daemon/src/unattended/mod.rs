//! Unattended turns: webhooks and schedules (docs/unattended.md). A run is recorded
//! (`queued`) and queued by [`accept`] — from a webhook delivery (`webhook.rs`), a
//! schedule's tick (`scheduler.rs`) or `schedule/run` — and one worker per hook or
//! schedule runs its queue's runs one after another (`worker.rs`), each a turn with no
//! person attached: the entry's `approve` policy decides, `ask_user` is told no one can
//! answer. [`start`] first recovers what a previous daemon left: `running` runs are
//! `failed` ("daemon stopped"), `queued` ones are queued again.

mod accept;
mod scheduler;
mod webhook;
mod worker;

pub use accept::{Accepted, NewRun, Refused, accept};
pub use scheduler::next_runs;
pub use webhook::deliver;

use crate::config::{Policy, SessionMode, Signature, Template};
use crate::runs::{Job, Source, Target};
use crate::state::DaemonState;
use std::collections::BTreeMap;
use std::sync::Arc;
use zeroclaw_agent::store::RunStatus;

/// What a run needs of its hook's or schedule's config entry.
pub struct Entry {
    pub cwd: String,
    pub session: SessionMode,
    pub approve: BTreeMap<String, Policy>,
    pub template: Template,
}

/// The config entry of `target`.
pub fn entry(state: &DaemonState, source: Source, name: &str) -> Option<Entry> {
    let config = &state.config;
    let (cwd, session, approve, template) = match source {
        Source::Webhook => {
            let hook = config.webhooks.iter().find(|h| h.name == name)?;
            (&hook.cwd, hook.session, &hook.approve, hook.template())
        }
        Source::Schedule => {
            let s = config.schedules.iter().find(|s| s.name == name)?;
            (&s.cwd, s.session, &s.approve, s.template())
        }
    };
    Some(Entry {
        cwd: cwd.to_string_lossy().into_owned(),
        session,
        approve: approve.clone(),
        // Validated when the config was loaded.
        template: template.ok()?,
    })
}

/// Recovers the runs a previous daemon left, then starts a worker per queue and the
/// scheduler. `gateway`: whether the gateway serves (webhooks need it).
pub async fn start(state: &Arc<DaemonState>, gateway: bool) {
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
    recover(state).await;
    forget_old_bodies(state).await;
    for (target, rx) in state.runs.take_receivers() {
        state
            .agent
            .turns
            .spawn(worker::work(state.clone(), target, rx));
    }
    if !state.config.schedules.is_empty() {
        let state = state.clone();
        tokio::spawn(scheduler::run(state, crate::runs::Clock::from_env()));
    }
}

async fn recover(state: &Arc<DaemonState>) {
    let store = &state.agent.sessions.store;
    let (failed, queued) = match store.recover_runs(crate::runs::now_ms()).await {
        Ok(found) => found,
        Err(e) => {
            tracing::error!(error = %e, "could not recover unattended runs");
            return;
        }
    };
    if failed > 0 {
        tracing::warn!(
            runs = failed,
            "marked unattended runs a previous daemon left running as failed (daemon stopped)"
        );
    }
    for row in queued {
        let source = if row.source == Source::Webhook.as_str() {
            Source::Webhook
        } else {
            Source::Schedule
        };
        let problem = match (state.runs.get(source, &row.name), &row.session_id) {
            (Some(target), Some(session_id)) => {
                let job = Job {
                    run_id: row.id.clone(),
                    session_id: session_id.clone(),
                    prompt: row.prompt.clone(),
                };
                match target.tx.try_send(job) {
                    Ok(()) => {
                        tracing::info!(run = %row.id, source = %source.as_str(), name = %row.name, "queued run left by a previous daemon started again");
                        continue;
                    }
                    Err(_) => "its queue is smaller than the runs left queued",
                }
            }
            (None, _) => "its webhook or schedule is no longer configured",
            (_, None) => "it has no session",
        };
        let _ = store
            .set_run(
                &row.id,
                RunStatus::Failed,
                None,
                Some(problem),
                Some(crate::runs::now_ms()),
            )
            .await;
        tracing::warn!(run = %row.id, problem, "a queued run left by a previous daemon cannot start");
    }
}

/// Forgets the body hashes past each GitHub-scheme hook's replay window, and all those of
/// hooks no longer configured (or no longer on that scheme), so the table stays bounded by
/// the windows of the hooks configured.
async fn forget_old_bodies(state: &Arc<DaemonState>) {
    let now = crate::runs::now_ms();
    let hooks = state
        .config
        .webhooks
        .iter()
        .filter(|h| h.signature == Signature::Github)
        .map(|h| (h.name.clone(), now.saturating_sub(h.replay_window_ms())))
        .collect();
    match state.agent.sessions.store.prune_bodies(hooks).await {
        Ok(0) => {}
        Ok(n) => tracing::debug!(bodies = n, "forgot webhook bodies past their replay window"),
        Err(e) => tracing::error!(error = %e, "could not forget old webhook bodies"),
    }
}

/// For `target`: its source and name, as the turn's policy names them.
fn unattended_of(target: &Target, entry: &Entry) -> zeroclaw_agent::turn::Unattended {
    zeroclaw_agent::turn::Unattended {
        source: target.source.as_str(),
        name: target.name.clone(),
        approve: entry.approve.clone(),
    }
}

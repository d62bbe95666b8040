//! Recovery at start-up of what a previous daemon left: runs and webhook bodies.

use super::rules::{Job, Source, now_ms};
use crate::config::Signature;
use crate::state::DaemonState;
use std::sync::Arc;
use zeroclaw_agent::store::RunStatus;

/// Settles the runs a previous daemon left: `running` ones are marked `failed` ("daemon
/// stopped"); `queued` ones are queued again, in their queues' receiving ends that the
/// workers take later (or marked `failed`, saying why they cannot start); and the webhook
/// bodies past their replay window are forgotten. Called before any door opens, so no
/// delivery or `schedule/run` takes a queue's place before a run that was already waiting.
pub async fn recover(state: &Arc<DaemonState>) {
    recover_runs(state).await;
    forget_old_bodies(state).await;
}

async fn recover_runs(state: &Arc<DaemonState>) {
    let store = &state.agent.sessions.store;
    let (failed, queued) = match store.recover_runs(now_ms()).await {
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
                Some(now_ms()),
            )
            .await;
        tracing::warn!(run = %row.id, problem, "a queued run left by a previous daemon cannot start");
    }
}

/// Forgets the body hashes past each GitHub-scheme hook's replay window, and all those of
/// hooks no longer configured (or no longer on that scheme), so the table stays bounded by
/// the windows of the hooks configured.
async fn forget_old_bodies(state: &Arc<DaemonState>) {
    let now = now_ms();
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

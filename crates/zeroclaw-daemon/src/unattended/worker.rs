//! One worker per hook or schedule: its queue's runs, one after another, each a turn with
//! nobody attached. One run at a time per target session follows: a shared session has
//! one worker, and a turn a person started there is waited for.

use super::rules::{Job, Target, now_ms};
use super::{entry, unattended_of};
use crate::state::DaemonState;
use std::sync::Arc;
use tokio::sync::mpsc;
use zeroclaw_agent::store::{RunOutcome, RunStatus};
use zeroclaw_agent::turn::{self, Origin, ProviderLog, StartError};
use zeroclaw_protocol::{BudgetStop, StopReason};

pub async fn work(state: Arc<DaemonState>, target: Arc<Target>, mut rx: mpsc::Receiver<Job>) {
    loop {
        let job = tokio::select! {
            biased;
            // Runs still queued stay `queued` in the store; the next start runs them.
            () = state.shutdown.cancelled() => break,
            job = rx.recv() => job,
        };
        let Some(job) = job else { break };
        let run_id = job.run_id.clone();
        let provider_log = Arc::new(ProviderLog::default());
        let (status, error, budget) = run(&state, &target, job, &provider_log).await;
        let finished = now_ms();
        let events = provider_log.take();
        let outcome = RunOutcome {
            provider_events: (!events.is_empty())
                .then(|| serde_json::Value::Array(events).to_string()),
            budget: budget.and_then(|b| serde_json::to_string(&b).ok()),
        };
        if outcome != RunOutcome::default() {
            let store = &state.agent.sessions.store;
            if let Err(e) = store.set_run_outcome(&run_id, outcome).await {
                tracing::error!(run = %run_id, error = %e, "could not record how a run went");
            }
        }
        if let Err(e) = state
            .agent
            .sessions
            .store
            .set_run(&run_id, status, None, error.as_deref(), Some(finished))
            .await
        {
            tracing::error!(run = %run_id, error = %e, "could not record the end of a run");
        }
        tracing::info!(run = %run_id, source = %target.source.as_str(), name = %target.name, status = %status.as_str(), "run finished");
        state.metrics.run_ended(status.as_str());
    }
}

/// Runs one job's turn to its end: its final status, its error, and the budget it stopped
/// at.
async fn run(
    state: &Arc<DaemonState>,
    target: &Target,
    job: Job,
    provider_log: &Arc<ProviderLog>,
) -> (RunStatus, Option<String>, Option<BudgetStop>) {
    let failed = |why: String| (RunStatus::Failed, Some(why), None);
    let Some(entry) = entry(state, target.source, &target.name) else {
        return failed("its webhook or schedule is no longer configured".into());
    };
    let session = match state.agent.sessions.get(&job.session_id).await {
        Ok(Some(session)) => session,
        Ok(None) => return failed(format!("its session {} was deleted", job.session_id)),
        Err(e) => return failed(e.to_string()),
    };
    let turn_id = uuid::Uuid::new_v4().to_string();
    if let Err(e) = state
        .agent
        .sessions
        .store
        .set_run(&job.run_id, RunStatus::Running, Some(&turn_id), None, None)
        .await
    {
        state.agent.sessions.evict_if_idle(&session);
        return failed(e.to_string());
    }
    tracing::info!(run = %job.run_id, source = %target.source.as_str(), name = %target.name, session = %session.id, turn = %turn_id, "run started");
    let origin = Origin {
        peer: None,
        elicitation: false,
        unattended: Some(Arc::new(unattended_of(
            target,
            &entry,
            provider_log.clone(),
        ))),
        fs: Default::default(),
    };
    let answer = loop {
        match turn::start_as(
            &state.agent,
            session.clone(),
            origin.clone(),
            job.prompt.clone().into(),
            turn_id.clone(),
        ) {
            Ok(answer) => break answer,
            // A person's turn runs in the shared session: wait for it to end.
            Err(StartError::Busy { .. }) => {
                let running = session.active_turn();
                tokio::select! {
                    () = async { if let Some(t) = running { t.finished.cancelled().await } } => {}
                    () = state.shutdown.cancelled() => {
                        state.agent.sessions.evict_if_idle(&session);
                        return failed("daemon stopped".into());
                    }
                }
            }
            // The daemon runs its limit of turns: wait for one to end.
            Err(StartError::LimitReached { .. }) => {
                tokio::select! {
                    permit = state.agent.turn_slots.acquire() => drop(permit),
                    () = state.shutdown.cancelled() => {
                        state.agent.sessions.evict_if_idle(&session);
                        return failed("daemon stopped".into());
                    }
                }
            }
        }
    };
    match answer.await {
        Ok(Ok(result)) => match result.stop_reason {
            StopReason::Cancelled if state.shutdown.is_cancelled() => {
                failed("daemon stopped".into())
            }
            StopReason::Cancelled => (RunStatus::Cancelled, None, None),
            StopReason::Error => failed("the turn ended with an error".into()),
            // A budget stops the turn cleanly: the run is done, its record names the limit.
            StopReason::EndTurn | StopReason::MaxTurns | StopReason::Budget => {
                (RunStatus::Done, None, result.budget)
            }
        },
        Ok(Err(e)) => failed(e.to_string()),
        Err(_) => failed("the turn ended without a result; see the daemon log".into()),
    }
}

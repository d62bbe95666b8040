//! Accepting a run: its place in the queue reserved, its session found or made, its record
//! written (`queued`), then queued. Nothing accepted is lost: the record is in SQLite
//! before the answer, and a restart queues it again.

use super::entry;
use super::rules::{Job, Target, now_ms};
use crate::config::SessionMode;
use crate::state::DaemonState;
use std::sync::Arc;
use tokio::sync::mpsc::error::TrySendError;
use zeroclaw_agent::store::{Dedup, RunRow, RunStatus, StoreError};

/// What a run is made of.
#[derive(Debug, Default)]
pub struct NewRun {
    pub delivery_id: Option<String>,
    /// A webhook delivery: what else makes it a repeat (its signed body, within its hook's
    /// replay window).
    pub dedup: Option<Dedup>,
    /// A schedule's tick (Unix ms of its minute).
    pub tick: Option<i64>,
    pub prompt: String,
}

#[derive(Debug)]
pub enum Accepted {
    /// Recorded and queued.
    Queued(RunRow),
    /// The delivery was seen before: its first run; nothing new was started.
    Repeat(RunRow),
}

#[derive(Debug)]
pub enum Refused {
    /// The queue is full.
    Full,
    /// The daemon is stopping.
    Stopping,
    Storage(StoreError),
}

pub async fn accept(
    state: &Arc<DaemonState>,
    target: &Arc<Target>,
    new: NewRun,
) -> Result<Accepted, Refused> {
    let _one_at_a_time = target.accept.lock().await;
    if state.shutdown.is_cancelled() {
        return Err(Refused::Stopping);
    }
    let store = &state.agent.sessions.store;
    let permit = match target.tx.try_reserve() {
        Ok(permit) => Some(permit),
        Err(TrySendError::Full(())) => None,
        Err(TrySendError::Closed(())) => return Err(Refused::Stopping),
    };
    let dedup = new.dedup.unwrap_or(Dedup {
        body: None,
        since: i64::MIN,
    });
    if let Some(delivery) = &new.delivery_id {
        let first = store
            .delivered(&target.name, delivery, dedup)
            .await
            .map_err(Refused::Storage)?;
        if let Some(first) = first {
            return Ok(Accepted::Repeat(first));
        }
    }
    let permit = permit.ok_or(Refused::Full)?;
    let session_id = session_for(state, target).await.map_err(Refused::Storage)?;
    let row = RunRow {
        id: uuid::Uuid::new_v4().to_string(),
        source: target.source.as_str().to_owned(),
        name: target.name.clone(),
        delivery_id: new.delivery_id,
        session_id: Some(session_id.clone()),
        turn_id: None,
        status: RunStatus::Queued,
        error: None,
        tick: new.tick,
        prompt: new.prompt,
        created_at: now_ms(),
        finished_at: None,
        usage: None,
        provider_events: None,
        budget: None,
    };
    match store.insert_delivery(row.clone(), dedup).await {
        Ok(None) => {}
        Ok(Some(first)) => return Ok(Accepted::Repeat(first)),
        Err(e) => return Err(Refused::Storage(e)),
    }
    permit.send(Job {
        run_id: row.id.clone(),
        session_id,
        prompt: row.prompt.clone(),
    });
    Ok(Accepted::Queued(row))
}

/// A schedule's tick that found its queue full: recorded `skipped`.
pub async fn record_skipped(
    state: &DaemonState,
    target: &Target,
    tick: i64,
) -> Result<RunRow, StoreError> {
    let now = now_ms();
    let row = RunRow {
        id: uuid::Uuid::new_v4().to_string(),
        source: target.source.as_str().to_owned(),
        name: target.name.clone(),
        delivery_id: None,
        session_id: None,
        turn_id: None,
        status: RunStatus::Skipped,
        error: Some(format!(
            "the queue of schedule {} was full; this tick did not run",
            target.name
        )),
        tick: Some(tick),
        prompt: String::new(),
        created_at: now,
        finished_at: Some(now),
        usage: None,
        provider_events: None,
        budget: None,
    };
    state.agent.sessions.store.insert_run(row.clone()).await?;
    Ok(row)
}

/// The session a new run of `target` goes to: a new one (`session = "new"`), or the
/// entry's shared one, made on first use (and again if it was deleted).
async fn session_for(state: &DaemonState, target: &Target) -> Result<String, StoreError> {
    let store = &state.agent.sessions.store;
    let Some(entry) = entry(state, target.source, &target.name) else {
        // Targets are made from the same config: every target has its entry.
        return new_session(state, target, "", None).await;
    };
    let source = target.source.as_str();
    if entry.session == SessionMode::Shared {
        if let Some(id) = store.shared_session(source, &target.name).await?
            && store.session(&id).await?.is_some()
        {
            return Ok(id);
        }
        let id = new_session(state, target, &entry.cwd, Some(entry.sandbox.choice())).await?;
        store.set_shared_session(source, &target.name, &id).await?;
        return Ok(id);
    }
    new_session(state, target, &entry.cwd, Some(entry.sandbox.choice())).await
}

async fn new_session(
    state: &DaemonState,
    target: &Target,
    cwd: &str,
    sandbox: Option<zeroclaw_agent::sandbox::Choice>,
) -> Result<String, StoreError> {
    let id = uuid::Uuid::new_v4().to_string();
    let title = format!(
        "{} {}",
        target.name,
        chrono::Local::now().format("%Y-%m-%d %H:%M")
    );
    state
        .agent
        .sessions
        .store
        .create_session_with(
            &id,
            Some(&title),
            cwd,
            &state.config.agent.provider.model,
            // Reported as the session's; the run's turn takes its entry's anyway.
            sandbox,
        )
        .await?;
    state.agent.sessions.count_change(1);
    Ok(id)
}

//! The schedules' clock loop: each schedule's [`Ticker`] polled with the clock's time in
//! the daemon's local time zone; a due tick is accepted like any run, or, when its queue
//! is full, skipped, logged and recorded `skipped`.

use super::accept::record_skipped;
use super::rules::{self, Clock, Source, Ticker, ms_of};
use super::{Accepted, NewRun, Refused, accept, entry};
use crate::config::parse_cron;
use crate::state::DaemonState;
use chrono::{DateTime, Local, TimeZone, Utc};
use std::sync::Arc;

pub async fn run(state: Arc<DaemonState>, clock: Clock) {
    let now = loop {
        if let Some(now) = clock.now() {
            break now;
        }
        tokio::select! {
            () = state.shutdown.cancelled() => return,
            () = tokio::time::sleep(clock.wait(Utc::now(), None)) => {}
        }
    };
    let local = now.with_timezone(&Local);
    let mut tickers = Vec::new();
    for schedule in &state.config.schedules {
        // Validated at start-up.
        let Ok(cron) = parse_cron(&schedule.cron) else {
            continue;
        };
        let last = match state.agent.sessions.store.last_tick(&schedule.name).await {
            Ok(last) => last.and_then(|ms| Local.timestamp_millis_opt(ms).single()),
            Err(e) => {
                tracing::error!(schedule = %schedule.name, error = %e, "could not read the schedule's last tick");
                None
            }
        };
        let (ticker, missed) = Ticker::start(cron, local, last, schedule.catch_up);
        if let Some(tick) = missed {
            tracing::info!(schedule = %schedule.name, tick = %tick.to_rfc3339(), "catching up the latest tick missed while the daemon was down");
            fire(&state, &schedule.name, tick, local).await;
        }
        tickers.push((schedule.name.clone(), ticker));
    }
    tracing::info!(schedules = tickers.len(), "scheduler started");
    loop {
        // A test clock's file being rewritten reads as nothing for a moment: wait.
        let now = clock.now().unwrap_or_else(Utc::now);
        if let Some(now) = clock.now() {
            let local = now.with_timezone(&Local);
            for (name, ticker) in &mut tickers {
                if let Some(tick) = ticker.poll(local) {
                    fire(&state, name, tick, local).await;
                }
            }
        }
        let next = tickers
            .iter()
            .filter_map(|(_, t)| t.next())
            .min()
            .map(|t| t.with_timezone(&Utc));
        tokio::select! {
            () = state.shutdown.cancelled() => return,
            () = tokio::time::sleep(clock.wait(now, next)) => {}
        }
    }
}

async fn fire(state: &Arc<DaemonState>, name: &str, tick: DateTime<Local>, now: DateTime<Local>) {
    let (Some(target), Some(entry)) = (
        state.runs.get(Source::Schedule, name),
        entry(state, Source::Schedule, name),
    ) else {
        return;
    };
    let now = now.to_rfc3339_opts(chrono::SecondsFormat::Secs, false);
    let prompt = rules::render(&entry.template, name, &now, None);
    let new = NewRun {
        delivery_id: None,
        dedup: None,
        tick: Some(ms_of(tick)),
        prompt,
    };
    match accept(state, target, new).await {
        Ok(Accepted::Queued(row) | Accepted::Repeat(row)) => {
            tracing::info!(schedule = %name, tick = %tick.to_rfc3339(), run = %row.id, "schedule tick");
        }
        Err(Refused::Full) => match record_skipped(state, target, ms_of(tick)).await {
            Ok(row) => {
                tracing::warn!(schedule = %name, tick = %tick.to_rfc3339(), run = %row.id, "schedule tick skipped: its queue is full")
            }
            Err(e) => {
                tracing::error!(schedule = %name, error = %e, "could not record a skipped tick")
            }
        },
        Err(Refused::Stopping) => {}
        Err(Refused::Storage(e)) => {
            tracing::error!(schedule = %name, error = %e, "could not record a schedule's run");
        }
    }
}

/// Each schedule's next run from now (by the scheduler's clock), for `schedules/list`.
pub fn next_runs(state: &DaemonState) -> Vec<Option<DateTime<Local>>> {
    let now = Clock::from_env_quiet()
        .now()
        .unwrap_or_else(Utc::now)
        .with_timezone(&Local);
    state
        .config
        .schedules
        .iter()
        .map(|s| {
            let cron = parse_cron(&s.cron).ok()?;
            Ticker::start(cron, now, None, false).0.next()
        })
        .collect()
}

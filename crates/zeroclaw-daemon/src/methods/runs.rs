//! `runs/*` and `schedule(s)/*`: unattended runs (docs/unattended.md).

use super::errors::storage;
use super::{Ctx, Handle, Reply};
use crate::unattended::rules::Source;
use crate::unattended::{self, Accepted, NewRun, Refused};
use serde_json::json;
use zeroclaw_agent::history::timestamp;
use zeroclaw_agent::store::RunRow;
use zeroclaw_protocol::codes;
use zeroclaw_protocol::methods::{self as m, *};
use zeroclaw_rpc::RpcError;

const DEFAULT_RUNS: usize = 50;
const MAX_RUNS: usize = 1000;

/// A stored run as the protocol shows it.
pub fn wire(row: RunRow) -> Run {
    Run {
        run_id: row.id,
        source: row.source,
        name: row.name,
        delivery_id: row.delivery_id,
        session_id: row.session_id,
        turn_id: row.turn_id,
        status: row.status.as_str().to_owned(),
        error: row.error,
        created_at: timestamp(row.created_at),
        finished_at: row.finished_at.map(timestamp),
        usage: row.usage,
        // Written by this daemon as a JSON array; anything else reads as none.
        provider_events: row
            .provider_events
            .as_deref()
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or_default(),
        budget: row
            .budget
            .as_deref()
            .and_then(|text| serde_json::from_str(text).ok()),
    }
}

impl Handle for m::RunsList {
    fn handle(ctx: Ctx, p: RunsListParams) -> Reply<RunsListResult> {
        if let Some(source) = p.source.as_deref()
            && source != "webhook"
            && source != "schedule"
        {
            return Reply::Now(Err(RpcError::invalid_params(format!(
                "`source` is \"webhook\" or \"schedule\", got {source:?}"
            ))));
        }
        Reply::later(async move {
            let limit = p.limit.unwrap_or(DEFAULT_RUNS).clamp(1, MAX_RUNS);
            let rows = ctx
                .0
                .daemon
                .agent
                .sessions
                .store
                .runs(p.source, p.name, limit)
                .await
                .map_err(storage)?;
            Ok(RunsListResult {
                runs: rows.into_iter().map(wire).collect(),
            })
        })
    }
}

fn no_run(id: &str) -> RpcError {
    RpcError::new(
        codes::SESSION_NOT_FOUND,
        format!("no run {id:?}; `runs/list` shows the runs there are"),
    )
    .with_data(json!({ "runId": id }))
}

impl Handle for m::RunsGet {
    fn handle(ctx: Ctx, p: RunsGetParams) -> Reply<Run> {
        Reply::later(async move {
            let row = ctx
                .0
                .daemon
                .agent
                .sessions
                .store
                .run(&p.id)
                .await
                .map_err(storage)?;
            row.map(wire).ok_or_else(|| no_run(&p.id))
        })
    }
}

impl Handle for m::SchedulesList {
    fn handle(ctx: Ctx, _: NoParams) -> Reply<SchedulesListResult> {
        let daemon = &ctx.0.daemon;
        let next = unattended::next_runs(daemon);
        let schedules = daemon
            .config
            .schedules
            .iter()
            .zip(next)
            .map(|(s, next)| ScheduleInfo {
                name: s.name.clone(),
                cron: s.cron.clone(),
                cwd: s.cwd.to_string_lossy().into_owned(),
                session: match s.session {
                    crate::config::SessionMode::New => "new".into(),
                    crate::config::SessionMode::Shared => "shared".into(),
                },
                catch_up: s.catch_up,
                queue: s.queue,
                next_run: next.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, false)),
            })
            .collect();
        Reply::Now(Ok(SchedulesListResult { schedules }))
    }
}

impl Handle for m::ScheduleRun {
    fn handle(ctx: Ctx, p: ScheduleRunParams) -> Reply<Run> {
        Reply::later(async move {
            let daemon = &ctx.0.daemon;
            let (Some(target), Some(entry)) = (
                daemon.runs.get(Source::Schedule, &p.name),
                unattended::entry(daemon, Source::Schedule, &p.name),
            ) else {
                return Err(RpcError::invalid_params(format!(
                    "no schedule {:?}; `schedules/list` shows them",
                    p.name
                )));
            };
            let now = chrono::Local::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, false);
            let new = NewRun {
                delivery_id: None,
                dedup: None,
                tick: None,
                prompt: crate::unattended::rules::render(&entry.template, &p.name, &now, None),
            };
            match unattended::accept(daemon, target, new).await {
                Ok(Accepted::Queued(row) | Accepted::Repeat(row)) => Ok(wire(row)),
                Err(Refused::Full) => Err(RpcError::new(
                    codes::LIMIT_REACHED,
                    format!(
                        "schedule {} has a full queue of runs waiting; try again later",
                        p.name
                    ),
                )),
                Err(Refused::Stopping) => Err(RpcError::internal("the daemon is stopping")),
                Err(Refused::Storage(e)) => Err(storage(e)),
            }
        })
    }
}

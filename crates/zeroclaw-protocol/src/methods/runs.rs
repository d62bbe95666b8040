//! Unattended runs (docs/unattended.md): `runs/list`, `runs/get`, `schedules/list` and
//! `schedule/run`; with what a run and a schedule are.

use super::NoParams;
use serde::{Deserialize, Serialize};

method!(
    /// Unattended runs (webhooks and schedules), newest first.
    RunsList, "runs/list", RunsListParams, RunsListResult
);
method!(
    /// One unattended run by id.
    RunsGet, "runs/get", RunsGetParams, Run
);
method!(
    /// The `[[schedules]]`, each with its next run.
    SchedulesList, "schedules/list", NoParams, SchedulesListResult
);
method!(
    /// Runs a schedule now: its run is recorded and queued; the answer is the run.
    ScheduleRun, "schedule/run", ScheduleRunParams, Run
);

/// An unattended run (docs/unattended.md): a webhook delivery or a schedule's tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub run_id: String,
    /// `webhook` or `schedule`.
    pub source: String,
    /// The hook's or schedule's name.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    /// `queued`, `running`, `done`, `failed`, `cancelled` or `skipped`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// RFC 3339.
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// The run's turn's token usage and cost; absent before its first model call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<super::UsageTotals>,
    /// The run's `provider_retry` and `provider_fallback` events (docs/protocol.md §10),
    /// as they were sent, in order; absent when there were none. At most 64 are kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provider_events: Vec<serde_json::Value>,
    /// The budget the run's turn stopped at (`stopReason: "budget"`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<super::BudgetStop>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunsListParams {
    /// `webhook` or `schedule`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Only the runs of this hook or schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// 1 to 1000; 50 if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunsListResult {
    pub runs: Vec<Run>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RunsGetParams {
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScheduleRunParams {
    pub name: String,
}

/// One `[[schedules]]` entry as `schedules/list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ScheduleInfo {
    pub name: String,
    pub cron: String,
    pub cwd: String,
    /// `new` or `shared`.
    pub session: String,
    pub catch_up: bool,
    pub queue: usize,
    /// RFC 3339 in the daemon's local time zone; absent if the expression never matches again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SchedulesListResult {
    pub schedules: Vec<ScheduleInfo>,
}

//! `zeroclaw runs [NAME] [--json]`, `zeroclaw schedules [--json]`, `zeroclaw schedules run
//! NAME [--wait]`: unattended runs (docs/unattended.md). Times are RFC 3339.

use super::{connect, describe_call_error, print_json};
use std::time::Duration;
use zeroclaw_client::protocol::{
    NoParams, RunsGet, RunsGetParams, RunsList, RunsListParams, ScheduleRun, ScheduleRunParams,
    SchedulesList,
};
use zeroclaw_ipc::Paths;

/// How often `schedules run --wait` asks for its run's status.
const WAIT_POLL: Duration = Duration::from_millis(250);

/// How many runs `zeroclaw runs` lists, newest first.
const LIST_LIMIT: usize = 100;

pub async fn list(paths: &Paths, name: Option<&str>, as_json: bool) -> Result<(), String> {
    let client = connect(paths).await?;
    let params = RunsListParams {
        source: None,
        name: name.map(str::to_owned),
        limit: Some(LIST_LIMIT),
    };
    let answer = client
        .request::<RunsList>(&params)
        .await
        .map_err(|e| format!("zeroclaw runs failed: {}", describe_call_error(&e)))?;
    if as_json {
        return print_json(serde_json::to_value(&answer.runs));
    }
    if answer.runs.is_empty() {
        println!(
            "no runs yet; [[webhooks]] and [[schedules]] in config.toml start them (docs/unattended.md)"
        );
        return Ok(());
    }
    println!(
        "{:<36}  {:<8}  {:<20}  {:<9}  {:<24}  {:<36}  ERROR",
        "RUN", "SOURCE", "NAME", "STATUS", "CREATED", "SESSION"
    );
    for r in &answer.runs {
        println!(
            "{:<36}  {:<8}  {:<20}  {:<9}  {:<24}  {:<36}  {}",
            r.run_id,
            r.source,
            r.name,
            r.status,
            r.created_at,
            r.session_id.as_deref().unwrap_or("-"),
            r.error.as_deref().unwrap_or("")
        );
    }
    Ok(())
}

pub async fn schedules(paths: &Paths, as_json: bool) -> Result<(), String> {
    let client = connect(paths).await?;
    let answer = client
        .request::<SchedulesList>(&NoParams)
        .await
        .map_err(|e| format!("zeroclaw schedules failed: {}", describe_call_error(&e)))?;
    if as_json {
        return print_json(serde_json::to_value(&answer.schedules));
    }
    if answer.schedules.is_empty() {
        println!("no schedules configured; add [[schedules]] to config.toml (docs/unattended.md)");
        return Ok(());
    }
    println!(
        "{:<24}  {:<16}  {:<25}  {:<7}  CWD",
        "NAME", "CRON", "NEXT RUN", "SESSION"
    );
    for s in &answer.schedules {
        println!(
            "{:<24}  {:<16}  {:<25}  {:<7}  {}",
            s.name,
            s.cron,
            s.next_run.as_deref().unwrap_or("-"),
            s.session,
            s.cwd
        );
    }
    Ok(())
}

/// Runs a schedule now; prints its run id. With `wait`, waits for the run to end and
/// prints its status: exit 0 when `done`, 1 otherwise.
pub async fn run_now(paths: &Paths, name: &str, wait: bool) -> Result<u8, String> {
    let client = connect(paths).await?;
    let params = ScheduleRunParams {
        name: name.to_owned(),
    };
    let run = client
        .request::<ScheduleRun>(&params)
        .await
        .map_err(|e| describe_call_error(&e))?;
    println!("{}", run.run_id);
    if !wait {
        return Ok(0);
    }
    let params = RunsGetParams { id: run.run_id };
    loop {
        let run = client
            .request::<RunsGet>(&params)
            .await
            .map_err(|e| describe_call_error(&e))?;
        if !matches!(run.status.as_str(), "queued" | "running") {
            match run.error {
                Some(error) => println!("{}: {error}", run.status),
                None => println!("{}", run.status),
            }
            return Ok(if run.status == "done" { 0 } else { 1 });
        }
        tokio::time::sleep(WAIT_POLL).await;
    }
}

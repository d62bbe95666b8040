//! `zeroclaw runs [NAME] [--json]`, `zeroclaw schedules [--json]`, `zeroclaw schedules run
//! NAME [--wait]`: unattended runs (docs/unattended.md). Times are RFC 3339.

use super::{connect, describe_call_error, pretty};
use serde_json::{Value, json};
use std::time::Duration;
use zeroclaw_ipc::Paths;

/// How often `schedules run --wait` asks for its run's status.
const WAIT_POLL: Duration = Duration::from_millis(250);

fn text(v: &Value) -> String {
    v.as_str().unwrap_or("-").to_owned()
}

pub async fn list(paths: &Paths, name: Option<&str>, as_json: bool) -> Result<(), String> {
    let client = connect(paths).await?;
    let mut params = json!({ "limit": 100 });
    if let Some(name) = name {
        params["name"] = json!(name);
    }
    let answer = client
        .call("runs/list", params)
        .await
        .map_err(|e| format!("runs/list failed: {}", describe_call_error(&e)))?;
    if as_json {
        println!("{}", pretty(&answer["runs"]));
        return Ok(());
    }
    let runs = answer["runs"].as_array().cloned().unwrap_or_default();
    if runs.is_empty() {
        println!(
            "no runs yet; [[webhooks]] and [[schedules]] in config.toml start them (docs/unattended.md)"
        );
        return Ok(());
    }
    println!(
        "{:<36}  {:<8}  {:<20}  {:<9}  {:<24}  {:<36}  ERROR",
        "RUN", "SOURCE", "NAME", "STATUS", "CREATED", "SESSION"
    );
    for r in runs {
        println!(
            "{:<36}  {:<8}  {:<20}  {:<9}  {:<24}  {:<36}  {}",
            text(&r["runId"]),
            text(&r["source"]),
            text(&r["name"]),
            text(&r["status"]),
            text(&r["createdAt"]),
            text(&r["sessionId"]),
            r["error"].as_str().unwrap_or("")
        );
    }
    Ok(())
}

pub async fn schedules(paths: &Paths, as_json: bool) -> Result<(), String> {
    let client = connect(paths).await?;
    let answer = client
        .call("schedules/list", json!({}))
        .await
        .map_err(|e| format!("schedules/list failed: {}", describe_call_error(&e)))?;
    if as_json {
        println!("{}", pretty(&answer["schedules"]));
        return Ok(());
    }
    let schedules = answer["schedules"].as_array().cloned().unwrap_or_default();
    if schedules.is_empty() {
        println!("no schedules configured; add [[schedules]] to config.toml (docs/unattended.md)");
        return Ok(());
    }
    println!(
        "{:<24}  {:<16}  {:<25}  {:<7}  CWD",
        "NAME", "CRON", "NEXT RUN", "SESSION"
    );
    for s in schedules {
        println!(
            "{:<24}  {:<16}  {:<25}  {:<7}  {}",
            text(&s["name"]),
            text(&s["cron"]),
            text(&s["nextRun"]),
            text(&s["session"]),
            text(&s["cwd"])
        );
    }
    Ok(())
}

/// Runs a schedule now; prints its run id. With `wait`, waits for the run to end and
/// prints its status: exit 0 when `done`, 1 otherwise.
pub async fn run_now(paths: &Paths, name: &str, wait: bool) -> Result<u8, String> {
    let client = connect(paths).await?;
    let run = client
        .call("schedule/run", json!({ "name": name }))
        .await
        .map_err(|e| describe_call_error(&e))?;
    let id = text(&run["runId"]);
    println!("{id}");
    if !wait {
        return Ok(0);
    }
    loop {
        let run = client
            .call("runs/get", json!({ "id": id }))
            .await
            .map_err(|e| describe_call_error(&e))?;
        let status = text(&run["status"]);
        if !matches!(status.as_str(), "queued" | "running") {
            match run["error"].as_str() {
                Some(error) => println!("{status}: {error}"),
                None => println!("{status}"),
            }
            return Ok(if status == "done" { 0 } else { 1 });
        }
        tokio::time::sleep(WAIT_POLL).await;
    }
}

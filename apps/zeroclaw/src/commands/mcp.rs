//! `zeroclaw mcp [--wait] [--json]`, `zeroclaw mcp tools NAME`: the daemon's MCP servers.

use super::{connect, describe_call_error, pretty};
use serde_json::{Value, json};
use zeroclaw_ipc::Paths;

pub async fn list(paths: &Paths, wait: bool, as_json: bool) -> Result<(), String> {
    let client = connect(paths).await?;
    let answer = client
        .call("mcp/servers", json!({ "wait": wait }))
        .await
        .map_err(|e| format!("mcp/servers failed: {}", describe_call_error(&e)))?;
    if as_json {
        println!("{}", pretty(&answer["servers"]));
        return Ok(());
    }
    let servers = answer["servers"].as_array().cloned().unwrap_or_default();
    if servers.is_empty() {
        println!("no MCP servers configured; add [[mcp_servers]] to config.toml (docs/mcp.md)");
        return Ok(());
    }
    println!(
        "{:<32}  {:<10}  {:>5}  LAST ERROR",
        "NAME", "STATE", "TOOLS"
    );
    for s in servers {
        let text = |v: &Value| v.as_str().unwrap_or("-").to_owned();
        println!(
            "{:<32}  {:<10}  {:>5}  {}",
            text(&s["name"]),
            text(&s["state"]),
            s["tools"].as_u64().unwrap_or(0),
            text(&s["error"])
        );
    }
    Ok(())
}

pub async fn tools(paths: &Paths, name: &str, as_json: bool) -> Result<(), String> {
    let client = connect(paths).await?;
    let answer = client
        .call("mcp/tools", json!({ "name": name }))
        .await
        .map_err(|e| describe_call_error(&e))?;
    if as_json {
        println!("{}", pretty(&answer["tools"]));
        return Ok(());
    }
    let tools = answer["tools"].as_array().cloned().unwrap_or_default();
    if tools.is_empty() {
        println!("{name} offers no tools now (`zeroclaw mcp` shows its state)");
    }
    for t in tools {
        println!("{}", t["name"].as_str().unwrap_or("?"));
        if let Some(d) = t["description"].as_str().filter(|d| !d.is_empty()) {
            println!("    {d}");
        }
        println!("    input: {}", t["inputSchema"]);
    }
    Ok(())
}

//! `zeroclaw mcp [--wait] [--json]`, `zeroclaw mcp tools NAME`: the daemon's MCP servers.

use super::{connect, describe_call_error, print_json};
use zeroclaw_client::protocol::{McpServers, McpServersParams, McpTools, McpToolsParams};
use zeroclaw_ipc::Paths;

pub async fn list(paths: &Paths, wait: bool, as_json: bool) -> Result<(), String> {
    let client = connect(paths).await?;
    let params = McpServersParams {
        wait,
        session_id: None,
    };
    let answer = client
        .request::<McpServers>(&params)
        .await
        .map_err(|e| format!("zeroclaw mcp failed: {}", describe_call_error(&e)))?;
    if as_json {
        return print_json(serde_json::to_value(&answer.servers));
    }
    if answer.servers.is_empty() {
        println!("no MCP servers configured; add [[mcp_servers]] to config.toml (docs/mcp.md)");
        return Ok(());
    }
    println!(
        "{:<32}  {:<10}  {:>5}  LAST ERROR",
        "NAME", "STATE", "TOOLS"
    );
    for s in answer.servers {
        println!(
            "{:<32}  {:<10}  {:>5}  {}",
            s.name,
            s.state,
            s.tools,
            s.error.as_deref().unwrap_or("-")
        );
    }
    Ok(())
}

pub async fn tools(paths: &Paths, name: &str, as_json: bool) -> Result<(), String> {
    let client = connect(paths).await?;
    let params = McpToolsParams {
        name: name.to_owned(),
    };
    let answer = client
        .request::<McpTools>(&params)
        .await
        .map_err(|e| describe_call_error(&e))?;
    if as_json {
        return print_json(serde_json::to_value(&answer.tools));
    }
    if answer.tools.is_empty() {
        println!("{name} offers no tools now (`zeroclaw mcp` shows its state)");
    }
    for t in answer.tools {
        println!("{}", t.name);
        if !t.description.is_empty() {
            println!("    {}", t.description);
        }
        println!("    input: {}", t.input_schema);
    }
    Ok(())
}

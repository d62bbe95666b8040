//! One tool of an MCP server as the model sees it: its `tools/list` entry read into a
//! definition, `<server>__<tool>` with the server's schema. The tool itself (`McpTool`,
//! which calls the server) lives beside the server, in `server.rs`.

use serde_json::{Value, json};

use super::names;
use crate::tools::ToolDef;

/// What the model is shown of a `tools/list` entry of the server `server`, with the
/// server's own name for the tool; `None` if it has no name.
pub(super) fn definition(server: &str, listed: &rmcp::model::Tool) -> Option<(String, ToolDef)> {
    let listed = serde_json::to_value(listed).ok()?;
    let tool = listed.get("name")?.as_str()?.to_owned();
    let mut schema = listed
        .get("inputSchema")
        .cloned()
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({"type": "object"}));
    if schema.get("type").is_none() {
        schema["type"] = json!("object");
    }
    let description = listed
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let read_only = listed
        .get("annotations")
        .and_then(|a| a.get("readOnlyHint"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let def = ToolDef {
        name: names::tool_name(server, &tool),
        description: format!("[MCP server {server}] {description}"),
        input_schema: schema,
        read_only,
    };
    Some((tool, def))
}

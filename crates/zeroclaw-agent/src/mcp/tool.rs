//! One tool of an MCP server, as the model sees it: `<server>__<tool>` with the server's
//! schema, run through the [`Tool`] trait like any other, its approval from the server's
//! `approve`.

use std::sync::Arc;

use serde_json::{Value, json};

use super::names;
use super::server::Server;
use crate::config::Policy;
use crate::tools::{Tool, ToolContext, ToolDef, ToolOutput};

pub struct McpTool {
    server: Arc<Server>,
    /// The server's own name for it.
    tool: String,
    def: ToolDef,
}

impl McpTool {
    /// From a `tools/list` entry; `None` if it has no name.
    pub fn new(server: Arc<Server>, listed: &rmcp::model::Tool) -> Option<Self> {
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
            name: names::tool_name(server.name(), &tool),
            description: format!("[MCP server {}] {description}", server.name()),
            input_schema: schema,
            read_only,
        };
        Some(Self { server, tool, def })
    }
}

impl Tool for McpTool {
    /// Passed through to the server as given, after the schema's basic checks.
    type Args = Value;

    fn definition(&self) -> ToolDef {
        self.def.clone()
    }

    fn policy(&self) -> Option<Policy> {
        Some(self.server.config.approve.policy(&self.tool))
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> ToolOutput {
        self.server.call(&self.tool, args, ctx).await
    }
}

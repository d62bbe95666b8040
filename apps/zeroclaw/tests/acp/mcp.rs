//! `session/new {mcpServers}`: the editor's MCP servers are the session's own, their tools
//! offered to the model and run after the editor's permission.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, McpServer, NewSessionRequest, StopReason,
};
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn the_editors_mcp_servers_serve_the_session() {
    let env = Env::new("", "");
    env.fake.push(tool_call("call_1", "own__pid", json!({}), 2));
    env.fake.push(openai::text(&["Got its pid."]));
    let editor = Editor::new(Permission::Select("allow_once"));
    let servers: Vec<McpServer> = serde_json::from_value(json!([
        {"name": "own", "command": mcp_test_server(), "args": [], "env": []}
    ]))
    .unwrap();
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await?;
        let session = cx
            .send_request(NewSessionRequest::new(&env.work).mcp_servers(servers))
            .block_task()
            .await?;
        cx.send_request(text_prompt(&session.session_id.0, "what is its pid?"))
            .block_task()
            .await
    }));
    assert_eq!(exit.outcome.unwrap().stop_reason, StopReason::EndTurn);
    let requests = env.fake.wait_for_requests(2);
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(offered.contains(&"own__pid"), "{offered:?}");
    let seen = editor.seen();
    assert_eq!(seen.permissions.len(), 1, "session servers ask by default");
    assert_eq!(
        seen.status(1),
        Some(agent_client_protocol::v1::schema::ToolCallStatus::Completed)
    );
    let pid = tool_content(&requests[1].body, "call_1");
    assert!(pid.trim().parse::<u32>().is_ok(), "{pid}");
}

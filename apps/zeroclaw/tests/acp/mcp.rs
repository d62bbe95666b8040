//! `session/new {mcpServers}`: the editor's MCP servers are the session's own, their tools
//! offered to the model and run after the editor's permission; `session/fork {mcpServers}`
//! gives the fork its own; `session/close` stops them once nobody else holds the session.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, CloseSessionRequest, ForkSessionRequest, McpServer, NewSessionRequest,
    ResumeSessionRequest, StopReason,
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

/// The test server as the editor's server `own`; with `ignore_eof` it does not exit when its
/// stdin closes, so only a stop by the daemon ends it.
fn own_server(ignore_eof: bool) -> Vec<McpServer> {
    let env = if ignore_eof {
        json!([{"name": "MCP_TEST_IGNORE_EOF", "value": "1"}])
    } else {
        json!([])
    };
    serde_json::from_value(json!([
        {"name": "own", "command": mcp_test_server(), "args": [], "env": env}
    ]))
    .unwrap()
}

// Process checks read /proc.
#[cfg(target_os = "linux")]
#[test]
fn close_stops_the_sessions_mcp_server_unless_another_client_holds_it() {
    let env = Env::new("", "");
    env.fake.push(tool_call("call_1", "own__pid", json!({}), 2));
    env.fake.push(openai::text(&["Got its pid."]));
    let editor = Editor::new(Permission::Select("allow_once"));
    let mut probe = env.daemon.client();
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await?;
        let session = cx
            .send_request(NewSessionRequest::new(&env.work).mcp_servers(own_server(true)))
            .block_task()
            .await?
            .session_id
            .0
            .to_string();
        cx.send_request(text_prompt(&session, "what is its pid?"))
            .block_task()
            .await?;
        let pid: u32 = tool_content(&env.fake.wait_for_requests(2)[1].body, "call_1")
            .trim()
            .parse()
            .unwrap();

        // Another client holds the session: the editor's close leaves the server serving it.
        probe.call("session/load", json!({"sessionId": session}));
        cx.send_request(CloseSessionRequest::new(session.clone()))
            .block_task()
            .await?;
        env.fake.push(tool_call("call_2", "own__pid", json!({}), 2));
        env.fake.push(openai::text(&["The same."]));
        let turn = probe.prompt(&session, "and now?", decide_all("allow_once"));
        let again: u32 = output(turn.one("tool_result")).trim().parse().unwrap();
        assert_eq!(
            again, pid,
            "the same server answered after the editor's close"
        );

        // The editor holds it alone: its close stops the server.
        cx.send_request(ResumeSessionRequest::new(session.clone(), &env.work))
            .block_task()
            .await?;
        probe.call("session/close", json!({"sessionId": session}));
        assert!(!process_gone(pid));
        cx.send_request(CloseSessionRequest::new(session.clone()))
            .block_task()
            .await?;
        poll_until("the session's server to stop", || process_gone(pid));
        Ok(())
    }));
    exit.outcome.unwrap();
    assert!(exit.status.success(), "{}", exit.stderr);
}

#[test]
fn a_fork_runs_the_editors_mcp_servers_as_a_new_session_does() {
    let env = Env::new("", "");
    env.fake.push(openai::text(&["First answer."]));
    env.fake.push(tool_call("call_1", "own__pid", json!({}), 2));
    env.fake.push(openai::text(&["Got its pid."]));
    let editor = Editor::new(Permission::Select("allow_once"));
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await?;
        // The source has no servers of its own: the fork's come from the fork request.
        let source = cx
            .send_request(NewSessionRequest::new(&env.work))
            .block_task()
            .await?
            .session_id;
        cx.send_request(text_prompt(&source.0, "first question"))
            .block_task()
            .await?;
        let fork = cx
            .send_request(
                ForkSessionRequest::new(source.clone(), &env.work).mcp_servers(own_server(false)),
            )
            .block_task()
            .await?
            .session_id;
        cx.send_request(text_prompt(&fork.0, "what is its pid?"))
            .block_task()
            .await
    }));
    assert_eq!(exit.outcome.unwrap().stop_reason, StopReason::EndTurn);
    let requests = env.fake.wait_for_requests(3);
    let offered = |n: usize| -> Vec<String> {
        requests[n].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
            .collect()
    };
    assert!(!offered(0).contains(&"own__pid".to_owned()));
    assert!(
        offered(1).contains(&"own__pid".to_owned()),
        "{:?}",
        offered(1)
    );
    let pid = tool_content(&requests[2].body, "call_1");
    assert!(pid.trim().parse::<u32>().is_ok(), "{pid}");
}

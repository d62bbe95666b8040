//! An MCP server from the config: the daemon panel lists it, and its tool runs in a turn
//! prompted from the dashboard like any tool (approval card, result, answer).

use crate::browser::{Browser, Test, click, element, until_text};
use crate::common::{mcp_stdio_server, tool_call};
use crate::page::{Dash, open, prompt};
use serde_json::json;
use zeroclaw_testkit::openai;

pub const TESTS: &[Test] = &[(
    "mcp::an_mcp_servers_tool_runs_in_a_dashboard_turn_and_the_server_is_listed",
    an_mcp_servers_tool_runs_in_a_dashboard_turn_and_the_server_is_listed,
)];

fn an_mcp_servers_tool_runs_in_a_dashboard_turn_and_the_server_is_listed(b: &Browser) {
    let dash = Dash::with(&format!(
        "[gateway]\nlisten = \"127.0.0.1:0\"\n\n{}",
        mcp_stdio_server("test", "")
    ));
    // Settled before the page reads `status`.
    dash.env
        .daemon
        .client()
        .call("mcp/servers", json!({"wait": true}));
    let id = dash.session("mcp");
    dash.env.fake.push(tool_call(
        "call_1",
        "test__echo",
        json!({"text": "hello from mcp"}),
        2,
    ));
    dash.env.fake.push(openai::text(&["The server echoed it."]));
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        until_text(c, "#mcp-list li", "test: ready, 9 tools").await;
        open(c, &id).await;
        prompt(c, "echo it through mcp").await;
        // The server's `approve` is "ask" by default: the card asks, like bash's.
        let card = ".tool[data-call='call_1']";
        element(
            c,
            &format!("{card} .approval button[data-decision='allow_once']"),
        )
        .await;
        click(c, &format!("{card} button[data-decision='allow_once']")).await;
        until_text(c, &format!("{card} .tool-result"), "hello from mcp").await;
        until_text(c, ".msg.assistant", "The server echoed it.").await;
    });
}

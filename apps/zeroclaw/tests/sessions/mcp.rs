//! MCP servers as tool sources, with real servers: the testkit's `mcp-test-server` (rmcp's
//! server side, over stdio and streamable HTTP) and, when `.ci/run` installed it, the
//! reference `@modelcontextprotocol/server-everything` from npm. The model's calls go
//! through a whole turn: `tool_call`, approvals, `tool_result`, the next model request.
//!
//! Ordering: a turn waits for servers still starting; `mcp/servers {wait: true}` answers
//! once none is starting or restarting. Only /proc state (a child gone) is polled.

use crate::common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use zeroclaw_testkit::openai;

fn call(id: &str, tool: &str, args: Value) -> zeroclaw_testkit::Reply {
    tool_call(id, tool, args, 2)
}

/// The daemon's MCP servers once none is starting or restarting.
fn servers(client: &mut Client) -> Vec<Value> {
    let answer = client.call("mcp/servers", json!({"wait": true}));
    answer["servers"].as_array().unwrap().clone()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_servers_tools_are_offered_with_their_schemas_and_run_only_when_approved() {
    let env = Env::new("", &mcp_stdio_server("test", ""));
    env.fake
        .push(call("call_1", "test__echo", json!({"text": "hello mcp"})));
    env.fake.push(openai::text(&["done"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "echo it", decide_all("allow_once"));
    assert_eq!(
        turn.types(),
        [
            "tool_call",
            "approval_request",
            "approval_resolved",
            "tool_result",
            "agent_message_chunk",
            "turn_complete"
        ]
    );
    assert_eq!(turn.one("approval_request")["name"], "test__echo");
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(output(result), "hello mcp");

    let requests = env.fake.wait_for_requests(2);
    let first = &requests[0].body;
    let names = tool_names(first);
    for name in ["bash", "test__echo", "test__hang", "test__ask"] {
        assert!(names.contains(&name.to_owned()), "{name} not in {names:?}");
    }
    let echo = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "test__echo")
        .unwrap();
    let schema = &echo["function"]["parameters"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["text"]["type"], "string");
    assert_eq!(schema["required"], json!(["text"]));
    assert_eq!(tool_content(&requests[1].body, "call_1"), "hello mcp");

    // Rejected: the server is never called, the model is told.
    env.fake
        .push(call("call_2", "test__echo", json!({"text": "again"})));
    env.fake.push(openai::text(&["ok"]));
    let turn = client.prompt(&session, "echo again", decide_all("reject"));
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    assert!(output(result).contains("rejected"), "{result}");

    // `status` and `mcp/tools` show the server.
    let status = client.call("status", json!({}));
    let server = &status["mcpServers"][0];
    assert_eq!(server["name"], "test");
    assert_eq!(server["state"], "ready");
    assert_eq!(server["tools"], 9);
    let tools = client.call("mcp/tools", json!({"name": "test"}));
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"test__echo"), "{names:?}");
}

#[test]
fn approve_per_tool_allows_denies_and_asks_as_configured() {
    let env = Env::new(
        "",
        &mcp_stdio_server(
            "test",
            "approve = { echo = \"allow\", fail = \"allow\", env = \"deny\" }",
        ),
    );
    env.fake
        .push(call("c1", "test__echo", json!({"text": "free"})));
    env.fake.push(call("c2", "test__fail", json!({})));
    env.fake
        .push(call("c3", "test__env", json!({"name": "HOME"})));
    env.fake.push(openai::text(&["done"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "go", no_questions);
    let results = turn.of_type("tool_result");
    assert_eq!(results.len(), 3);
    assert_eq!(output(results[0]), "free");
    assert_eq!(results[1]["isError"], true);
    assert_eq!(output(results[1]), "it failed on purpose");
    assert_eq!(results[2]["isError"], true);
    assert!(output(results[2]).contains("deny"), "{}", results[2]);
}

#[test]
fn a_crash_mid_call_is_a_tool_error_and_the_next_call_works_after_the_restart() {
    let env = Env::new("", &mcp_stdio_server("test", "approve = \"allow\""));
    env.fake.push(call("c1", "test__crash", json!({})));
    env.fake.push(openai::text(&["it crashed"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "crash it", no_questions);
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    assert!(output(result).contains("exited"), "{result}");

    let server = &servers(&mut client)[0];
    assert_eq!(server["state"], "ready", "{server}");
    assert!(
        server["error"].as_str().unwrap().contains("closed"),
        "{server}"
    );
    env.fake
        .push(call("c2", "test__echo", json!({"text": "back"})));
    env.fake.push(openai::text(&["fine"]));
    let turn = client.prompt(&session, "again", no_questions);
    assert_eq!(output(turn.one("tool_result")), "back");
}

#[test]
fn a_hanging_call_hits_its_timeout_and_the_server_is_kept() {
    let env = Env::new(
        "",
        &mcp_stdio_server("test", "approve = \"allow\"\ntimeout_secs = 1"),
    );
    env.fake.push(call("c1", "test__hang", json!({})));
    env.fake
        .push(call("c2", "test__echo", json!({"text": "still here"})));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "hang", no_questions);
    let results = turn.of_type("tool_result");
    assert_eq!(results[0]["isError"], true);
    assert!(
        output(results[0]).contains("did not answer within 1 s"),
        "{}",
        results[0]
    );
    assert_eq!(output(results[1]), "still here");

    // Three in a row: the server is restarted.
    for id in ["h1", "h2", "h3"] {
        env.fake.push(call(id, "test__hang", json!({})));
    }
    env.fake.push(openai::text(&["ok"]));
    let turn = client.prompt(&session, "hang thrice", no_questions);
    assert_eq!(turn.of_type("tool_result").len(), 3);
    let server = &servers(&mut client)[0];
    assert_eq!(server["state"], "ready", "{server}");
    assert_eq!(server["error"], "3 calls in a row timed out");
}

#[test]
fn a_list_change_reaches_the_next_model_call() {
    let env = Env::new("", &mcp_stdio_server("test", "approve = \"allow\""));
    env.fake
        .push(call("c1", "test__add_tool", json!({"name": "extra"})));
    env.fake.push(call("c2", "test__extra", json!({"x": 1})));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "add a tool", no_questions);
    let results = turn.of_type("tool_result");
    assert_eq!(output(results[0]), "added extra");
    assert_eq!(results[1]["isError"], false, "{}", results[1]);
    assert!(output(results[1]).starts_with("extra:"), "{}", results[1]);
    let requests = env.fake.wait_for_requests(3);
    assert!(!tool_names(&requests[0].body).contains(&"test__extra".to_owned()));
    assert!(tool_names(&requests[1].body).contains(&"test__extra".to_owned()));
    assert_eq!(servers(&mut client)[0]["tools"], 10);
}

#[test]
fn a_servers_question_goes_to_the_socket_client_and_its_answer_back() {
    let env = Env::new("", &mcp_stdio_server("test", "approve = \"allow\""));
    env.fake.push(call(
        "c1",
        "test__ask",
        json!({"question": "Which colour?"}),
    ));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(
        &session,
        "ask",
        answer_all(json!({"action": "accept", "content": {"answer": "blue"}})),
    );
    assert_eq!(turn.elicitations.len(), 1);
    let params = &turn.elicitations[0]["params"];
    assert_eq!(params["message"], "Which colour?");
    assert_eq!(params["sessionId"], json!(session));
    assert_eq!(
        params["requestedSchema"]["properties"]["answer"]["type"],
        "string"
    );
    assert_eq!(output(turn.one("tool_result")), "answer: blue");
}

/// The test server over streamable HTTP on `addr`, and its URL once it listens.
fn http_server(addr: &str) -> (std::process::Child, String) {
    let mut http = spawn_process(
        std::process::Command::new(mcp_test_server())
            .args(["--http", addr])
            .stdout(std::process::Stdio::piped()),
    );
    let url = {
        use std::io::BufRead;
        let mut line = String::new();
        std::io::BufReader::new(http.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        line.trim().to_owned()
    };
    (http, url)
}

#[test]
fn an_http_server_that_went_away_is_a_tool_error_and_reconnected_once_back() {
    let (mut first, url) = http_server("127.0.0.1:0");
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let env = Env::new(
        "",
        &format!("[[mcp_servers]]\nname = \"web\"\nurl = {url:?}\napprove = \"allow\"\n"),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    env.fake
        .push(call("c1", "web__echo", json!({"text": "first"})));
    env.fake.push(openai::text(&["ok"]));
    let turn = client.prompt(&session, "echo", no_questions);
    assert_eq!(output(turn.one("tool_result")), "first");

    // The server goes away: the next call is a tool error, not a hang.
    first.kill().unwrap();
    first.wait().unwrap();
    env.fake
        .push(call("c2", "web__echo", json!({"text": "gone"})));
    env.fake.push(openai::text(&["it failed"]));
    let turn = client.prompt(&session, "echo", no_questions);
    assert_eq!(turn.one("tool_result")["isError"], true);

    // Back on the same address: the daemon reconnects (with its backoff) and calls work.
    let (mut second, _) = http_server(&addr);
    let web = &servers(&mut client)[0];
    assert_eq!(web["state"], "ready", "{web}");
    env.fake
        .push(call("c3", "web__echo", json!({"text": "back"})));
    env.fake.push(openai::text(&["fine"]));
    let turn = client.prompt(&session, "echo", no_questions);
    assert_eq!(output(turn.one("tool_result")), "back");
    let _ = second.kill();
    let _ = second.wait();
}

#[test]
fn env_and_header_variables_are_substituted_secrets_scrubbed_and_a_missing_one_named() {
    let (mut http, url) = http_server("127.0.0.1:0");
    let stdio = mcp_stdio_server(
        "test",
        "approve = \"allow\"\nenv = { SECRET = \"s-${MCP_TEST_SECRET}\" }",
    );
    let broken = "[[mcp_servers]]\nname = \"broken\"\ncommand = \"true\"\nenv = { X = \"${MCP_TEST_NOT_SET}\" }\n";
    let web = format!(
        "[[mcp_servers]]\nname = \"web\"\nurl = {url:?}\napprove = \"allow\"\nheaders = {{ X-Test = \"Bearer ${{MCP_TEST_SECRET}}\" }}\n"
    );
    let config = format!("{stdio}{broken}{web}");
    let env = Env::with_env(
        "",
        &config,
        &[("MCP_TEST_SECRET", "s3cret"), ("SOME_API_KEY", "leak")],
    );
    env.fake
        .push(call("c1", "test__env", json!({"name": "SECRET"})));
    env.fake
        .push(call("c2", "test__env", json!({"name": "SOME_API_KEY"})));
    env.fake
        .push(call("c3", "web__header", json!({"name": "x-test"})));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "look", no_questions);
    let results = turn.of_type("tool_result");
    assert_eq!(output(results[0]), "s-s3cret");
    assert_eq!(output(results[1]), "(unset)");
    assert_eq!(output(results[2]), "Bearer s3cret", "{}", results[2]);

    let all = servers(&mut client);
    let broken = all.iter().find(|s| s["name"] == "broken").unwrap();
    assert_eq!(broken["state"], "failed");
    assert!(
        broken["error"]
            .as_str()
            .unwrap()
            .contains("MCP_TEST_NOT_SET"),
        "{broken}"
    );
    let web = all.iter().find(|s| s["name"] == "web").unwrap();
    assert_eq!(web["state"], "ready", "{web}");
    assert!(!env.daemon.log_text().contains("s3cret"));
    let _ = http.kill();
    let _ = http.wait();
}

// Process checks read /proc.
#[cfg(target_os = "linux")]
#[test]
fn a_sessions_own_servers_stop_when_it_is_unloaded() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    let answer = client.call(
        "session/new",
        json!({
            "cwd": env.work,
            "mcpServers": [{
                "name": "own",
                "command": mcp_test_server(),
                "args": [],
                "env": [{"name": "MCP_TEST_IGNORE_EOF", "value": "1"}]
            }]
        }),
    );
    let session = answer["sessionId"].as_str().unwrap().to_owned();
    env.fake.push(call("c1", "own__pid", json!({})));
    env.fake.push(openai::text(&["ok"]));
    let turn = client.prompt(&session, "pid?", decide_all("allow_once"));
    let pid: u32 = output(turn.one("tool_result")).parse().unwrap();
    assert!(!process_gone(pid));
    // Another session does not see them.
    let other = client.new_session(&env.work);
    env.fake.push(openai::text(&["none"]));
    client.prompt(&other, "tools?", no_questions);
    let requests = env.fake.wait_for_requests(3);
    assert!(tool_names(&requests[1].body).contains(&"own__pid".to_owned()));
    assert!(!tool_names(&requests[2].body).contains(&"own__pid".to_owned()));
    drop(client);
    poll_until("the session's server to stop", || process_gone(pid));

    // `session/load {mcpServers}` (as an ACP editor sends it) starts them again.
    let mut client = env.daemon.client();
    client.call(
        "session/load",
        json!({
            "sessionId": session,
            "mcpServers": [{"name": "own", "command": mcp_test_server(), "args": [], "env": []}]
        }),
    );
    env.fake.push(call("c2", "own__pid", json!({})));
    env.fake.push(openai::text(&["ok"]));
    let turn = client.prompt(&session, "pid again?", decide_all("allow_once"));
    let again: u32 = output(turn.one("tool_result")).parse().unwrap();
    assert_ne!(again, pid);
    let own = client.call("mcp/servers", json!({"sessionId": session, "wait": true}));
    assert_eq!(own["servers"][0]["name"], "own");
    assert_eq!(own["servers"][0]["state"], "ready");
}

/// The test server's pid, from a turn that calls its `pid` tool.
// Process checks read /proc.
#[cfg(target_os = "linux")]
fn server_pid(env: &Env) -> u32 {
    env.fake.push(call("c1", "test__pid", json!({})));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "pid?", no_questions);
    output(turn.one("tool_result")).parse().unwrap()
}

// Process checks read /proc.
#[cfg(target_os = "linux")]
#[test]
fn no_mcp_child_outlives_the_daemon() {
    let config = mcp_stdio_server(
        "test",
        "approve = \"allow\"\nenv = { MCP_TEST_IGNORE_EOF = \"1\" }",
    );
    // An orderly stop kills the server's process group.
    let mut env = Env::new("", &config);
    let pid = server_pid(&env);
    env.daemon.initialized().request("shutdown", json!({}));
    assert!(env.daemon.wait_exit().success());
    poll_until("the server to die with the daemon", || process_gone(pid));

    // A SIGKILLed daemon's server is reaped by the next daemon.
    env.daemon = env.dir.start(&[]);
    let pid = server_pid(&env);
    env.kill_and_restart();
    poll_until("the orphaned server to be reaped", || process_gone(pid));
}

/// `@modelcontextprotocol/server-everything`, if `.ci/run` installed it.
fn everything() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/node");
    let bin = root.join("node_modules/.bin/mcp-server-everything");
    if bin.exists() {
        return Some(bin);
    }
    eprintln!(
        "SKIPPED: {} is not installed (.ci/run installs @modelcontextprotocol/server-everything)",
        bin.display()
    );
    None
}

#[test]
fn a_third_party_server_from_npm_answers_a_whole_turn() {
    let Some(everything) = everything() else {
        return;
    };
    let config = format!(
        "[[mcp_servers]]\nname = \"everything\"\ncommand = {:?}\nargs = [\"stdio\"]\napprove = \"allow\"\ntimeout_secs = 60\n",
        everything.display().to_string()
    );
    let env = Env::new("", &config);
    env.fake.push(call(
        "c1",
        "everything__echo",
        json!({"message": "from zeroclaw"}),
    ));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "echo", no_questions);
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], false, "{result}");
    assert!(output(result).contains("from zeroclaw"), "{result}");
    let requests = env.fake.wait_for_requests(2);
    assert!(tool_names(&requests[0].body).contains(&"everything__echo".to_owned()));
    assert_eq!(servers(&mut client)[0]["state"], "ready");
}

#[test]
fn zeroclaw_mcp_lists_the_servers_and_a_servers_tools() {
    let env = Env::new(
        "",
        &format!(
            "{}[[mcp_servers]]\nname = \"gone\"\ncommand = \"/nonexistent/mcp-server\"\n",
            mcp_stdio_server("test", "")
        ),
    );
    let out = env.dir.command(&["mcp", "--wait"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let test = text.lines().find(|l| l.starts_with("test ")).unwrap();
    assert!(test.contains("ready") && test.contains(" 9 "), "{text}");
    let gone = text.lines().find(|l| l.starts_with("gone ")).unwrap();
    assert!(
        gone.contains("failed") && gone.contains("cannot start"),
        "{text}"
    );

    let out = env.dir.command(&["mcp", "tools", "test"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("test__echo\n    [MCP server test] Returns its text."),
        "{text}"
    );
    let out = env.dir.command(&["status"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("mcp        2 servers: test ready (9 tools), gone failed"),
        "{text}"
    );
}

#[test]
fn a_malformed_entry_stops_start_up_naming_it() {
    let dir = TestDir::new();
    dir.write_config("[[mcp_servers]]\nname = \"ok\"\ncommand = \"x\"\n\n[[mcp_servers]]\nname = \"bad_name\"\ncommand = \"x\"\n");
    let out = dir.command(&["daemon"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("mcp_servers[1] (\"bad_name\")"), "{err}");
}

//! A provider of `kind = "anthropic"`: its wire format end to end (thinking, text and
//! tool use streamed; the tool result sent back), and its API key kept out of the log and
//! the database.

use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::anthropic;

#[test]
fn the_anthropic_wire_format_streams_thinking_text_and_tool_use_end_to_end() {
    const KEY: &str = "zc-test-key-7f3a9c";
    let env = Env::with_env(
        "kind = \"anthropic\"\napi_key_env = \"MY_KEY\"",
        "",
        &[("MY_KEY", KEY)],
    );
    env.fake.push(
        anthropic::Builder::new()
            .thinking("Let me ")
            .thinking("check.")
            .text("Running it.")
            .tool_use("toolu_1", "bash", r#"{"command":"echo via-anthropic"}"#, 6)
            .usage(20, 7)
            .build(),
    );
    env.fake.push(
        anthropic::Builder::new()
            .text("All done.")
            .usage(30, 3)
            .build(),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "run it", decide_all("allow_once"));
    assert_eq!(
        turn.types(),
        [
            "agent_thought_chunk",
            "agent_thought_chunk",
            "agent_message_chunk",
            "tool_call",
            "approval_request",
            "approval_resolved",
            "tool_result",
            "agent_message_chunk",
            "turn_complete"
        ]
    );
    let call = turn.one("tool_call");
    assert_eq!(call["toolCallId"], "toolu_1");
    assert_eq!(call["rawInput"], json!({"command": "echo via-anthropic"}));
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], false);
    assert!(output(result).contains("via-anthropic"));
    let answer = turn.result();
    assert_eq!(answer["text"], "Running it.\n\nAll done.");
    assert_eq!(
        answer["usage"],
        json!({"inputTokens": 50, "outputTokens": 10})
    );

    let requests = env.fake.wait_for_requests(2);
    for request in &requests {
        assert_eq!(request.path, "/v1/messages");
        assert_eq!(request.header("x-api-key"), Some(KEY));
        assert!(request.header("anthropic-version").is_some());
        assert!(request.header("authorization").is_none());
    }
    let messages = requests[1].body["messages"].as_array().unwrap();
    let tool_result = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| m["content"].as_array().unwrap())
        .find(|block| block["type"] == "tool_result")
        .unwrap_or_else(|| panic!("no tool_result block: {messages:#?}"));
    assert_eq!(tool_result["tool_use_id"], "toolu_1");
    assert!(
        tool_result["content"]
            .as_str()
            .unwrap()
            .contains("via-anthropic")
    );
    let tool_use = messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["content"].as_array().unwrap())
        .find(|block| block["type"] == "tool_use")
        .unwrap();
    assert_eq!(tool_use["id"], "toolu_1");
    assert_eq!(tool_use["input"], json!({"command": "echo via-anthropic"}));

    // The key is in no log line and nowhere in the database.
    assert!(!env.daemon.log_text().contains(KEY));
    let databases = assert_no_file_holds(&env.dir.config_dir().join("data"), KEY);
    assert!(!databases.is_empty());
}

//! A streamed answer: thought and message chunks in order, then `turn_complete`, then the
//! prompt's result; what the model is sent; what is stored.

use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn a_streamed_answer_arrives_as_ordered_chunks_then_turn_complete_then_the_result() {
    let env = Env::new("", "");
    env.fake.push(
        openai::Builder::new()
            .reasoning("Thinking ")
            .reasoning_field("harder.")
            .text("Hel")
            .text("lo, ")
            .text("world")
            .usage(12, 3)
            .build(),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "say hello", no_questions);

    assert_eq!(
        turn.types(),
        [
            "agent_thought_chunk",
            "agent_thought_chunk",
            "agent_message_chunk",
            "agent_message_chunk",
            "agent_message_chunk",
            "turn_complete"
        ]
    );
    let texts: Vec<&str> = turn
        .events
        .iter()
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert_eq!(texts, ["Thinking ", "harder.", "Hel", "lo, ", "world"]);
    assert_eq!(turn.events[5]["stopReason"], "end_turn");

    let result = turn.result();
    let turn_id = result["turnId"].as_str().unwrap();
    assert!(!turn_id.is_empty());
    for event in &turn.events {
        assert_eq!(event["sessionId"], json!(session), "{event}");
        assert_eq!(event["turnId"], json!(turn_id), "{event}");
    }
    assert_eq!(result["stopReason"], "end_turn");
    assert_eq!(result["text"], "Hello, world");
    assert_eq!(
        result["usage"],
        json!({"inputTokens": 12, "outputTokens": 3})
    );

    // What the model was sent: the prompt, and the tools.
    let request = &env.fake.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.body["model"], "fake");
    assert_eq!(request.body["stream"], true);
    let last = request.body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last, &json!({"role": "user", "content": "say hello"}));
    let tools: Vec<&str> = request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "bash",
            "read_file",
            "write_file",
            "edit_file",
            "list_dir",
            "grep",
            "ask_user",
            "todo_write",
            "glob",
            "web_fetch",
            "apply_patch",
            "task"
        ]
    );

    // The turn is stored: prompt, thought, answer.
    let messages = client.messages(&session);
    assert_eq!(kinds(&messages), ["user", "thought", "assistant"]);
    assert_eq!(messages[0]["text"], "say hello");
    assert_eq!(messages[1]["text"], "Thinking harder.");
    assert_eq!(messages[2]["text"], "Hello, world");
    for m in &messages {
        assert_eq!(m["turnId"], json!(turn_id));
        assert!(m.get("cancelled").is_none(), "{m}");
    }
}

#[test]
fn a_malformed_sse_line_in_the_stream_is_skipped_and_the_turn_completes() {
    let env = Env::new("", "");
    env.fake.push(
        openai::Builder::new()
            .text("before ")
            .raw_line("data: {this is not json")
            .text("after")
            .build(),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "go", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert_eq!(turn.result()["text"], "before after");
    assert_eq!(turn.of_type("agent_message_chunk").len(), 2);
}

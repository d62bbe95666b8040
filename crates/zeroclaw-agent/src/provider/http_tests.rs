//! Provider-level tests over real HTTP: the real reqwest client against the real fake HTTP
//! server of `zeroclaw-testkit`, one model call at a time (`Provider::open` then
//! `OpenStep::read`).

use super::client::OpenStep;
use crate::config::{ProviderConfig, ProviderKind};
use crate::provider::{
    ChatMessage, ChatRequest, Delta, ErrorKind, Provider, ProviderError, StepResult, ToolCall,
    Unpaced,
};
use crate::store::Usage;
use crate::tools::{ToolDef, Tools};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use zeroclaw_testkit::{FakeProvider, Gate, HANG_GUARD, Reply, anthropic, openai};

const MODEL: &str = "test-model";
const SYSTEM: &str = "You are a test.";

fn config(base_url: String, kind: ProviderKind) -> ProviderConfig {
    ProviderConfig {
        kind,
        base_url,
        model: MODEL.into(),
        api_key_env: None,
        connect_timeout_secs: 5,
        idle_timeout_secs: 30,
        max_retries: 0,
        max_tokens: None,
        context_window: None,
        ..ProviderConfig::default()
    }
}

fn openai_config(fake: &FakeProvider) -> ProviderConfig {
    config(fake.base_url(), ProviderKind::Openai)
}

fn anthropic_config(fake: &FakeProvider) -> ProviderConfig {
    config(fake.base_url(), ProviderKind::Anthropic)
}

fn provider(config: ProviderConfig) -> Provider {
    Provider::with_api_key(config, None).unwrap()
}

fn hello() -> Vec<ChatMessage> {
    vec![ChatMessage::user("hello")]
}

/// What one model call produced: every delta, in order, and how it ended.
struct Run {
    deltas: Vec<Delta>,
    result: Result<StepResult, ProviderError>,
}

impl Run {
    fn text(&self) -> String {
        self.deltas
            .iter()
            .filter_map(|d| match d {
                Delta::Text(t) => Some(t.as_str()),
                Delta::Thought(_) => None,
            })
            .collect()
    }

    fn ok(self) -> (Vec<Delta>, StepResult) {
        match self.result {
            Ok(step) => (self.deltas, step),
            Err(e) => panic!("the call failed: {e:?}"),
        }
    }

    fn err(self) -> ProviderError {
        match self.result {
            Ok(step) => panic!("the call succeeded: {step:?}"),
            Err(e) => e,
        }
    }
}

/// The built-in tools' definitions, as a turn offers them.
fn definitions() -> Vec<ToolDef> {
    Tools::builtin().snapshot().definitions().to_vec()
}

/// One model call with the real tool list: open, then read to the end.
async fn call_with(provider: &Provider, messages: &[ChatMessage]) -> Run {
    let tools = definitions();
    let request = ChatRequest {
        model: &provider.config.model,
        system: Some(SYSTEM),
        messages,
        tools: &tools,
    };
    let step = match provider.open(&request, &|_| {}).await {
        Ok(step) => step,
        Err(e) => {
            return Run {
                deltas: Vec::new(),
                result: Err(e),
            };
        }
    };
    let mut deltas = Vec::new();
    let result = step.read(&mut |d| deltas.push(d), &Unpaced).await;
    Run { deltas, result }
}

/// Opens the stream, which must succeed.
async fn open(provider: &Provider, request: &ChatRequest<'_>) -> OpenStep {
    match provider.open(request, &|_| {}).await {
        Ok(step) => step,
        Err(e) => panic!("the stream did not open: {e:?}"),
    }
}

async fn call(provider: &Provider) -> Run {
    call_with(provider, &hello()).await
}

fn text(s: &str) -> Delta {
    Delta::Text(s.into())
}

fn thought(s: &str) -> Delta {
    Delta::Thought(s.into())
}

/// Tool arguments long enough to be cut into 50 pieces, with escapes and non-ASCII text.
const ARGS: &str =
    r#"{"command":"printf '%s\\n' \"héllo wörld\" && ls -la /tmp | head -n 20","timeout_secs":30}"#;

// ---------------------------------------------------------------------------------------
// OpenAI-compatible streams
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn openai_text_deltas_arrive_in_order_and_concatenate() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(openai::text(&["Hel", "lo", ", ", "wörld", "!"]));
    let (deltas, step) = call(&provider(openai_config(&fake))).await.ok();
    assert_eq!(
        deltas,
        [
            text("Hel"),
            text("lo"),
            text(", "),
            text("wörld"),
            text("!")
        ]
    );
    assert!(step.tool_calls.is_empty());
    assert_eq!(step.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn openai_events_cut_across_http_chunks_are_reassembled() {
    // Every 3 bytes its own HTTP chunk: events, lines and UTF-8 characters straddle them.
    let fake = FakeProvider::start().await.unwrap();
    fake.push(openai::text(&["Grüße, ", "wörld ", "→ ok"]).fragmented(3));
    let run = call(&provider(openai_config(&fake))).await;
    assert_eq!(run.text(), "Grüße, wörld → ok");
    let (deltas, step) = run.ok();
    assert_eq!(deltas.len(), 3);
    assert_eq!(step.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn openai_reasoning_fields_become_thoughts() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(
        openai::Builder::new()
            .reasoning("first, ")
            .reasoning_field("then")
            // vLLM sends both spellings with the same text while it renames the field.
            .delta(json!({"reasoning_content": " both", "reasoning": " both"}))
            .text("answer")
            .build(),
    );
    let (deltas, _) = call(&provider(openai_config(&fake))).await.ok();
    assert_eq!(
        deltas,
        [
            thought("first, "),
            thought("then"),
            thought(" both"),
            text("answer")
        ]
    );
}

#[tokio::test]
async fn openai_tool_call_arguments_split_across_chunks_assemble_exactly() {
    for split_into in [1, 7, 50] {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(
            openai::Builder::new()
                .tool_call(0, "call_abc", "bash", ARGS, split_into)
                .build(),
        );
        let (deltas, step) = call(&provider(openai_config(&fake))).await.ok();
        assert!(deltas.is_empty(), "split {split_into}: {deltas:?}");
        assert_eq!(
            step.tool_calls,
            [ToolCall::new("call_abc".into(), "bash".into(), ARGS.into())],
            "split {split_into}"
        );
        let call = &step.tool_calls[0];
        assert_eq!(call.raw_arguments, ARGS);
        assert_eq!(
            call.arguments.as_ref().unwrap(),
            &serde_json::from_str::<Value>(ARGS).unwrap()
        );
        assert_eq!(step.finish_reason.as_deref(), Some("tool_calls"));
    }
}

/// One `tool_calls` delta for call `index`.
fn tool_delta(index: u64, head: Option<(&str, &str)>, args: &str) -> Value {
    let mut call = json!({"index": index, "function": {"arguments": args}});
    if let Some((id, name)) = head {
        call["id"] = json!(id);
        call["type"] = json!("function");
        call["function"]["name"] = json!(name);
    }
    json!({"tool_calls": [call]})
}

#[tokio::test]
async fn openai_parallel_tool_calls_interleaved_assemble_in_index_order() {
    let read_args = r#"{"path":"Cargo.toml"}"#;
    let list_args = r#"{"path":"src"}"#;
    let fake = FakeProvider::start().await.unwrap();
    // Index 1 starts first; the pieces of the two calls alternate.
    fake.push(
        openai::Builder::new()
            .text("Looking.")
            .delta(tool_delta(1, Some(("call_list", "list_dir")), ""))
            .delta(tool_delta(0, Some(("call_read", "read_file")), ""))
            .delta(tool_delta(1, None, r#"{"path":"#))
            .delta(tool_delta(0, None, r#"{"path":"Car"#))
            .delta(tool_delta(1, None, r#""src"}"#))
            .delta(tool_delta(0, None, r#"go.toml"}"#))
            .finish(Some("tool_calls"))
            .build(),
    );
    let (deltas, step) = call(&provider(openai_config(&fake))).await.ok();
    assert_eq!(deltas, [text("Looking.")]);
    assert_eq!(
        step.tool_calls,
        [
            ToolCall::new("call_read".into(), "read_file".into(), read_args.into()),
            ToolCall::new("call_list".into(), "list_dir".into(), list_args.into()),
        ]
    );
}

#[tokio::test]
async fn openai_parallel_tool_calls_sequential_and_in_one_chunk() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(
        openai::Builder::new()
            .tool_call(0, "call_a", "bash", r#"{"command":"ls"}"#, 4)
            .tool_call(1, "call_b", "bash", r#"{"command":"pwd"}"#, 4)
            .build(),
    );
    // Some servers send every call whole in one delta, without `index`.
    fake.push(
        openai::Builder::new()
            .delta(json!({"tool_calls": [
                {"id": "call_x", "type": "function", "function": {"name": "list_dir", "arguments": "{}"}},
                {"id": "call_y", "type": "function", "function": {"name": "read_file", "arguments": {"path": "a"}}},
            ]}))
            .build(),
    );
    let provider = provider(openai_config(&fake));
    let (_, step) = call(&provider).await.ok();
    assert_eq!(
        step.tool_calls,
        [
            ToolCall::new("call_a".into(), "bash".into(), r#"{"command":"ls"}"#.into()),
            ToolCall::new(
                "call_b".into(),
                "bash".into(),
                r#"{"command":"pwd"}"#.into()
            ),
        ]
    );
    let (_, step) = call(&provider).await.ok();
    let calls: Vec<(&str, &str, Value)> = step
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone().unwrap()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_x", "list_dir", json!({})),
            ("call_y", "read_file", json!({"path": "a"})),
        ]
    );
}

#[tokio::test]
async fn openai_usage_is_parsed() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(openai::Builder::new().text("hi").usage(123, 45).build());
    fake.push(openai::Builder::new().text("no usage").build());
    let provider = provider(openai_config(&fake));
    let (_, step) = call(&provider).await.ok();
    assert_eq!(
        step.usage,
        Some(Usage {
            input_tokens: 123,
            output_tokens: 45
        })
    );
    let (_, step) = call(&provider).await.ok();
    assert_eq!(step.usage, None);
}

#[tokio::test]
async fn cached_input_tokens_are_read_from_both_wire_formats() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(
        openai::Builder::new()
            .text("hi")
            .usage(100, 5)
            .cached(60)
            .build(),
    );
    let (_, step) = call(&provider(openai_config(&fake))).await.ok();
    // OpenAI's `prompt_tokens` already counts the cached ones.
    assert_eq!(step.usage.map(|u| u.input_tokens), Some(100));
    assert_eq!(step.cached_input_tokens, 60);

    let fake = FakeProvider::start().await.unwrap();
    fake.push(
        anthropic::Builder::new()
            .text("hi")
            .usage(20, 5)
            .cache_read(300)
            .build(),
    );
    let (_, step) = call(&provider(anthropic_config(&fake))).await.ok();
    // Anthropic's `input_tokens` does not: they are added.
    assert_eq!(
        step.usage,
        Some(Usage {
            input_tokens: 320,
            output_tokens: 5
        })
    );
    assert_eq!(step.cached_input_tokens, 300);
}

#[tokio::test]
async fn openai_null_or_empty_finish_reason_is_tolerated() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(openai::Builder::new().text("a").finish(None).build());
    fake.push(openai::Builder::new().text("b").finish(Some("")).build());
    let provider = provider(openai_config(&fake));
    for expected in ["a", "b"] {
        let run = call(&provider).await;
        assert_eq!(run.text(), expected);
        let (_, step) = run.ok();
        assert_eq!(step.finish_reason, None);
    }
}

#[tokio::test]
async fn openai_missing_tool_call_ids_get_unique_generated_ones() {
    let nameless = |name: &str| json!({"tool_calls": [{"index": 0, "type": "function", "function": {"name": name, "arguments": "{}"}}]});
    let fake = FakeProvider::start().await.unwrap();
    fake.push(openai::Builder::new().delta(nameless("list_dir")).build());
    fake.push(openai::Builder::new().delta(nameless("list_dir")).build());
    fake.push(
        openai::Builder::new()
            .delta(json!({"tool_calls": [
                {"index": 0, "function": {"name": "list_dir", "arguments": "{}"}},
                {"index": 1, "id": "", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}},
            ]}))
            .build(),
    );
    let provider = provider(openai_config(&fake));
    let mut ids = Vec::new();
    for _ in 0..3 {
        let (_, step) = call(&provider).await.ok();
        for c in &step.tool_calls {
            assert!(!c.id.trim().is_empty(), "{c:?}");
            assert!(c.arguments.is_ok(), "{c:?}");
            ids.push(c.id.clone());
        }
    }
    assert_eq!(ids.len(), 4);
    // Unique across steps too: history and clients pair calls and results by id.
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
}

#[tokio::test]
async fn openai_malformed_data_line_is_skipped() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(
        openai::Builder::new()
            .text("before ")
            .raw_line("data: {not json")
            .raw_line("data: ")
            .text("after")
            .usage(3, 2)
            .build(),
    );
    let run = call(&provider(openai_config(&fake))).await;
    assert_eq!(run.text(), "before after");
    let (_, step) = run.ok();
    assert_eq!(step.finish_reason.as_deref(), Some("stop"));
    assert_eq!(step.usage.map(|u| u.output_tokens), Some(2));
}

/// Chunks that are JSON but not of the expected shape (a server's own extension, a bug) are
/// skipped like unparsable ones; the text around them still arrives.
#[tokio::test]
async fn events_of_an_unexpected_shape_are_skipped_in_both_formats() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(
        openai::Builder::new()
            .text("before ")
            .raw_line(r#"data: {"choices": "not a list"}"#)
            .raw_line("")
            .raw_line(r#"data: {"choices": [{"delta": 7}]}"#)
            .raw_line("")
            .text("after")
            .build(),
    );
    assert_eq!(
        call(&provider(openai_config(&fake))).await.text(),
        "before after"
    );
    fake.push(
        anthropic::Builder::new()
            .text("before ")
            .raw_line("event: content_block_delta")
            .raw_line(r#"data: {"type": "content_block_delta", "index": 0, "delta": "text"}"#)
            .raw_line("")
            .raw_line(r#"data: {"type": 7}"#)
            .raw_line("")
            .text("after")
            .build(),
    );
    assert_eq!(
        call(&provider(anthropic_config(&fake))).await.text(),
        "before after"
    );
}

#[tokio::test]
async fn openai_in_stream_error_chunk_is_a_provider_error() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(
        openai::Builder::new()
            .text("partial")
            .raw_chunk(openai::error_body(
                "the model is overloaded",
                "server_error",
                None,
            ))
            .build(),
    );
    let run = call(&provider(openai_config(&fake))).await;
    assert_eq!(run.deltas, [text("partial")]);
    let error = run.err();
    assert_eq!(error.kind, ErrorKind::Provider);
    assert!(
        error.message.contains("the model is overloaded"),
        "{error:?}"
    );
}

#[tokio::test]
async fn openai_stream_without_done_that_ends_cleanly_is_accepted() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(
        openai::Builder::new()
            .text("ok")
            .usage(1, 1)
            .no_done()
            .build(),
    );
    let run = call(&provider(openai_config(&fake))).await;
    assert_eq!(run.text(), "ok");
    let (_, step) = run.ok();
    assert_eq!(step.finish_reason.as_deref(), Some("stop"));
    assert!(step.usage.is_some());
}

// ---------------------------------------------------------------------------------------
// Request bodies
// ---------------------------------------------------------------------------------------

/// A conversation with every message kind: a prompt, an assistant step with text and a
/// tool call, that call's result, and a follow-up prompt.
fn conversation() -> Vec<ChatMessage> {
    vec![
        ChatMessage::user("list the files"),
        ChatMessage::Assistant {
            text: "Running ls.".into(),
            tool_calls: vec![ToolCall::new(
                "call_1".into(),
                "bash".into(),
                r#"{"command":"ls"}"#.into(),
            )],
        },
        ChatMessage::ToolResult {
            call_id: "call_1".into(),
            name: "bash".into(),
            output: "a.txt\nb.txt\n[exit code 0]".into(),
            is_error: false,
        },
        ChatMessage::user("and now?"),
    ]
}

#[tokio::test]
async fn openai_request_body_and_headers() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(openai::text(&["ok"]));
    let mut config = openai_config(&fake);
    config.api_key_env = Some("ZEROCLAW_TEST_OPENAI_KEY".into());
    let provider = Provider::with_api_key(config, Some("sk-test-123".into())).unwrap();
    call_with(&provider, &conversation()).await.ok();

    let request = fake.next_request().await;
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test-123"));
    assert!(
        request
            .header("content-type")
            .is_some_and(|v| v.starts_with("application/json"))
    );
    let body = &request.body;
    assert_eq!(body["model"], MODEL);
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert!(body.get("max_tokens").is_none(), "{body}");

    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
    assert_eq!(messages[0]["content"], SYSTEM);
    assert_eq!(messages[1]["content"], "list the files");
    assert_eq!(messages[2]["content"], "Running ls.");
    assert_eq!(
        messages[2]["tool_calls"],
        json!([{
            "id": "call_1",
            "type": "function",
            "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"},
        }])
    );
    assert!(messages[2]["tool_calls"][0]["function"]["arguments"].is_string());
    assert_eq!(messages[3]["tool_call_id"], "call_1");
    assert_eq!(messages[3]["content"], "a.txt\nb.txt\n[exit code 0]");
    assert_eq!(messages[4]["content"], "and now?");

    let tools = body["tools"].as_array().unwrap();
    let defs = definitions();
    assert_eq!(tools.len(), defs.len());
    for (tool, def) in tools.iter().zip(&defs) {
        assert_eq!(tool["type"], "function");
        assert_eq!(tool["function"]["name"], def.name);
        assert_eq!(tool["function"]["description"], def.description);
        assert_eq!(tool["function"]["parameters"], def.input_schema);
    }
}

#[tokio::test]
async fn openai_request_without_key_has_no_authorization_and_honours_max_tokens() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(openai::text(&["ok"]));
    let mut config = openai_config(&fake);
    config.max_tokens = Some(77);
    call(&provider(config)).await.ok();
    let request = fake.next_request().await;
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.body["max_tokens"], 77);
}

// ---------------------------------------------------------------------------------------
// Anthropic streams and requests
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn anthropic_thinking_text_and_split_tool_use() {
    for split_into in [1, 7, 50] {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(
            anthropic::Builder::new()
                .thinking("Let me ")
                .thinking("think.")
                .text("Sure, ")
                .text("running it.")
                .tool_use("toolu_1", "bash", ARGS, split_into)
                .tool_use("toolu_2", "list_dir", "", 1)
                .usage(42, 17)
                .build(),
        );
        let (deltas, step) = call(&provider(anthropic_config(&fake))).await.ok();
        assert_eq!(
            deltas,
            [
                thought("Let me "),
                thought("think."),
                text("Sure, "),
                text("running it."),
            ],
            "split {split_into}"
        );
        assert_eq!(
            step.tool_calls,
            [
                ToolCall::new("toolu_1".into(), "bash".into(), ARGS.into()),
                ToolCall::new("toolu_2".into(), "list_dir".into(), "".into()),
            ],
            "split {split_into}"
        );
        assert_eq!(
            step.tool_calls[0].arguments.as_ref().unwrap(),
            &serde_json::from_str::<Value>(ARGS).unwrap()
        );
        assert_eq!(step.tool_calls[1].arguments, Ok(json!({})));
        assert_eq!(
            step.usage,
            Some(Usage {
                input_tokens: 42,
                output_tokens: 17
            })
        );
        assert_eq!(step.finish_reason.as_deref(), Some("tool_use"));
    }
}

#[tokio::test]
async fn anthropic_stop_reason_and_default_usage() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(anthropic::text(&["Hel", "lo"]));
    fake.push(
        anthropic::Builder::new()
            .text("cut")
            .stop_reason("max_tokens")
            .build()
            .fragmented(5),
    );
    let provider = provider(anthropic_config(&fake));
    let (deltas, step) = call(&provider).await.ok();
    assert_eq!(deltas, [text("Hel"), text("lo")]);
    assert_eq!(step.finish_reason.as_deref(), Some("end_turn"));
    assert_eq!(
        step.usage,
        Some(Usage {
            input_tokens: anthropic::DEFAULT_INPUT_TOKENS,
            output_tokens: 2
        })
    );
    assert!(step.tool_calls.is_empty());
    let (deltas, step) = call(&provider).await.ok();
    assert_eq!(deltas, [text("cut")]);
    assert_eq!(step.finish_reason.as_deref(), Some("max_tokens"));
}

#[tokio::test]
async fn anthropic_error_event_is_a_provider_error() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(
        anthropic::Builder::new()
            .text("partial")
            .error("overloaded_error", "Overloaded")
            .build(),
    );
    fake.push(anthropic::error("api_error", "Internal server error"));
    let provider = provider(anthropic_config(&fake));

    let run = call(&provider).await;
    assert_eq!(run.deltas, [text("partial")]);
    let error = run.err();
    assert_eq!(error.kind, ErrorKind::Provider);
    assert!(error.message.contains("Overloaded"), "{error:?}");
    assert!(error.message.contains("overloaded_error"), "{error:?}");

    let error = call(&provider).await.err();
    assert_eq!(error.kind, ErrorKind::Provider);
    assert!(error.message.contains("Internal server error"), "{error:?}");
}

#[tokio::test]
async fn anthropic_request_body_and_headers() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(anthropic::text(&["ok"]));
    let mut config = anthropic_config(&fake);
    config.api_key_env = Some("ZEROCLAW_TEST_ANTHROPIC_KEY".into());
    let provider = Provider::with_api_key(config, Some("sk-ant-test".into())).unwrap();
    call_with(&provider, &conversation()).await.ok();

    let request = fake.next_request().await;
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(request.header("authorization"), None);
    let body = &request.body;
    assert_eq!(body["model"], MODEL);
    assert_eq!(body["stream"], true);
    assert!(body["max_tokens"].as_u64().is_some_and(|n| n > 0), "{body}");
    assert_eq!(body["system"], SYSTEM);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "list the files"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Running ls."},
                {"type": "tool_use", "id": "call_1", "name": "bash", "input": {"command": "ls"}},
            ]},
            // The tool result and the next prompt: one user message, the result first.
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "a.txt\nb.txt\n[exit code 0]", "is_error": false},
                {"type": "text", "text": "and now?"},
            ]},
        ])
    );
    let tools = body["tools"].as_array().unwrap();
    let defs = definitions();
    assert_eq!(tools.len(), defs.len());
    for (tool, def) in tools.iter().zip(&defs) {
        assert_eq!(tool["name"], def.name);
        assert_eq!(tool["input_schema"], def.input_schema);
    }
}

#[tokio::test]
async fn anthropic_honours_max_tokens_and_maps_http_auth_errors() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(anthropic::error_status(
        401,
        "authentication_error",
        "invalid x-api-key",
    ));
    let mut config = anthropic_config(&fake);
    config.max_tokens = Some(1000);
    config.max_retries = 3;
    config.api_key_env = Some("ZEROCLAW_TEST_ANTHROPIC_KEY".into());
    let provider = Provider::with_api_key(config, Some("sk-ant-bad".into())).unwrap();
    let error = call(&provider).await.err();
    assert_eq!(error.kind, ErrorKind::Auth);
    assert_eq!(error.status, Some(401));
    assert!(error.message.contains("invalid x-api-key"), "{error:?}");
    assert!(
        error.message.contains("ZEROCLAW_TEST_ANTHROPIC_KEY"),
        "{error:?}"
    );
    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["max_tokens"], 1000);
}

// ---------------------------------------------------------------------------------------
// Retries and HTTP errors
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_500_is_retried_and_then_succeeds() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Reply::server_error());
    fake.push(openai::text(&["second ", "time"]));
    let mut config = openai_config(&fake);
    config.max_retries = 1;
    let run = call(&provider(config)).await;
    assert_eq!(run.text(), "second time");
    run.ok();
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn a_429_with_retry_after_is_retried_and_then_succeeds() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Reply::rate_limited(Some(1)));
    fake.push(openai::text(&["ok"]));
    let mut config = openai_config(&fake);
    config.max_retries = 1;
    let run = call(&provider(config)).await;
    assert_eq!(run.text(), "ok");
    run.ok();
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn a_429_past_the_retries_is_rate_limited() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Reply::rate_limited(None));
    let error = call(&provider(openai_config(&fake))).await.err();
    assert_eq!(error.kind, ErrorKind::RateLimited);
    assert_eq!(error.status, Some(429));
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn a_500_past_the_retries_is_an_http_error() {
    let fake = FakeProvider::start().await.unwrap();
    let max_retries = 2;
    for _ in 0..=max_retries {
        fake.push(Reply::server_error());
    }
    fake.push(openai::text(&["never sent"]));
    let mut config = openai_config(&fake);
    config.max_retries = max_retries;
    let error = call(&provider(config)).await.err();
    assert_eq!(error.kind, ErrorKind::Http);
    assert_eq!(error.status, Some(500));
    assert!(error.message.contains("500"), "{error:?}");
    assert!(
        error.message.contains("The server had an error"),
        "{error:?}"
    );
    assert_eq!(fake.request_count(), max_retries as usize + 1);
    assert_eq!(fake.pending_replies(), 1);
}

#[tokio::test]
async fn max_retries_zero_makes_one_request_only() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Reply::server_error());
    fake.push(openai::text(&["never sent"]));
    let error = call(&provider(openai_config(&fake))).await.err();
    assert_eq!(error.kind, ErrorKind::Http);
    assert_eq!(error.status, Some(500));
    assert_eq!(fake.request_count(), 1);
    assert_eq!(fake.pending_replies(), 1);
}

#[tokio::test]
async fn a_401_is_auth_naming_the_key_variable_or_suggesting_one() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Reply::unauthorized());
    fake.push(Reply::unauthorized());
    let mut config = openai_config(&fake);
    config.max_retries = 3;

    let mut with_var = config.clone();
    with_var.api_key_env = Some("ZEROCLAW_TEST_WRONG_KEY".into());
    let provider_with_var = Provider::with_api_key(with_var, Some("sk-wrong".into())).unwrap();
    let error = call(&provider_with_var).await.err();
    assert_eq!(error.kind, ErrorKind::Auth);
    assert_eq!(error.status, Some(401));
    assert!(
        error.message.contains("ZEROCLAW_TEST_WRONG_KEY"),
        "{error:?}"
    );
    assert!(
        error.message.contains("Incorrect API key provided"),
        "{error:?}"
    );
    assert_eq!(fake.request_count(), 1, "a 401 is not retried");

    let error = call(&provider(config)).await.err();
    assert_eq!(error.kind, ErrorKind::Auth);
    assert!(error.message.contains("provider.api_key_env"), "{error:?}");
    assert_eq!(fake.request_count(), 2, "a 401 is not retried");
}

#[tokio::test]
async fn a_404_is_model_not_found_for_openai_and_ollama_bodies() {
    let model = "llama-nope:7b";
    for reply in [
        Reply::openai_model_not_found(model),
        Reply::ollama_model_not_found(model),
    ] {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(reply);
        let mut config = openai_config(&fake);
        config.model = model.into();
        config.max_retries = 3;
        let error = call(&provider(config)).await.err();
        assert_eq!(error.kind, ErrorKind::ModelNotFound, "{error:?}");
        assert_eq!(error.status, Some(404));
        assert!(error.message.contains(model), "{error:?}");
        assert!(error.message.contains("provider.model"), "{error:?}");
        assert_eq!(fake.request_count(), 1, "a 404 is not retried");
        assert_eq!(fake.requests()[0].body["model"], model);
    }
}

#[tokio::test]
async fn other_4xx_are_not_retried() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Reply::status(
        400,
        openai::error_body("messages: bad", "invalid_request_error", None),
    ));
    fake.push(openai::text(&["never sent"]));
    let mut config = openai_config(&fake);
    config.max_retries = 3;
    let error = call(&provider(config)).await.err();
    assert_eq!(error.kind, ErrorKind::Http);
    assert_eq!(error.status, Some(400));
    assert!(error.message.contains("messages: bad"), "{error:?}");
    assert_eq!(fake.request_count(), 1);
}

// ---------------------------------------------------------------------------------------
// Connection failures, timeouts, cancellation
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_closed_port_is_unreachable_naming_the_base_url() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let mut config = config(base_url.clone(), ProviderKind::Openai);
    config.max_retries = 1;
    let error = call(&provider(config)).await.err();
    assert_eq!(error.kind, ErrorKind::Unreachable, "{error:?}");
    assert!(error.message.contains(&base_url), "{error:?}");
    assert_eq!(error.status, None);
}

#[tokio::test]
async fn a_server_that_never_answers_the_request_times_out() {
    // Accepts the connection and reads the request, but never sends a response head.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let holder = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut sink = [0u8; 4096];
        while socket.read(&mut sink).await.is_ok_and(|n| n > 0) {}
    });
    let mut config = config(format!("http://127.0.0.1:{port}/v1"), ProviderKind::Openai);
    config.idle_timeout_secs = 1;
    let error = call(&provider(config)).await.err();
    assert_eq!(error.kind, ErrorKind::Timeout, "{error:?}");
    assert!(error.message.contains("sent no answer"), "{error:?}");
    holder.abort();
}

#[tokio::test]
async fn a_stalled_stream_times_out() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(openai::Builder::new().text("partial").stall().build());
    let mut config = openai_config(&fake);
    config.idle_timeout_secs = 1;
    let run = call(&provider(config)).await;
    assert_eq!(run.deltas, [text("partial")]);
    let error = run.err();
    assert_eq!(error.kind, ErrorKind::Timeout, "{error:?}");
    assert!(error.message.contains("idle_timeout_secs"), "{error:?}");
}

#[tokio::test]
async fn a_reset_mid_stream_is_a_stream_error() {
    let fake = FakeProvider::start().await.unwrap();
    let gate = Gate::new();
    // The reset waits until the client has seen the first delta, so it cannot race the
    // response head (which would make it a failed request instead of a broken stream).
    fake.push(
        anthropic::Builder::new()
            .text("partial")
            .wait_for(&gate)
            .reset()
            .build(),
    );
    let provider = provider(anthropic_config(&fake));
    let tools = definitions();
    let messages = hello();
    let request = ChatRequest {
        model: MODEL,
        system: None,
        messages: &messages,
        tools: &tools,
    };
    let step = open(&provider, &request).await;
    let mut deltas = Vec::new();
    let result = step
        .read(
            &mut |d| {
                deltas.push(d);
                gate.open();
            },
            &Unpaced,
        )
        .await;
    assert_eq!(deltas, [text("partial")]);
    let error = result.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Stream, "{error:?}");
    // The cause is named, not just reqwest's "error decoding response body".
    assert!(
        !error.message.ends_with("error decoding response body"),
        "{error:?}"
    );
}

/// Dropping the `read` future must close the HTTP connection. The testkit's fake holds a
/// stalled socket until the client closes it but does not report that, so this test serves
/// the stream from its own listener and watches the socket for the client's close.
#[tokio::test]
async fn dropping_the_read_future_closes_the_connection() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        // Read the whole request (head, then `content-length` bytes of body).
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        let head_end = loop {
            let n = socket.read(&mut buf).await.unwrap();
            assert_ne!(n, 0, "the client closed before sending its request");
            request.extend_from_slice(&buf[..n]);
            if let Some(at) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
        };
        let head = String::from_utf8_lossy(&request[..head_end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map(|v| v.trim().parse().unwrap())
            .unwrap_or(0);
        while request.len() < head_end + length {
            let n = socket.read(&mut buf).await.unwrap();
            assert_ne!(n, 0, "the client closed in the middle of its request");
            request.extend_from_slice(&buf[..n]);
        }
        let event = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"partial\"}}]}\n\n";
        let mut reply = Vec::new();
        reply.extend_from_slice(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
        );
        reply.extend_from_slice(format!("{:x}\r\n", event.len()).as_bytes());
        reply.extend_from_slice(event);
        reply.extend_from_slice(b"\r\n");
        socket.write_all(&reply).await.unwrap();
        // Then stall: the next read ends only when the client closes (EOF or reset).
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => {}
            Ok(n) => panic!("the client sent {n} more bytes instead of closing"),
        }
    });

    let provider = provider(config(base_url, ProviderKind::Openai));
    let tools = definitions();
    let messages = hello();
    let request = ChatRequest {
        model: MODEL,
        system: None,
        messages: &messages,
        tools: &tools,
    };
    let step = open(&provider, &request).await;
    let (seen_tx, mut seen_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut on_delta = move |d: Delta| {
        let _ = seen_tx.send(d);
    };
    {
        let read = step.read(&mut on_delta, &Unpaced);
        tokio::select! {
            result = read => panic!("the stalled stream ended: {result:?}"),
            delta = seen_rx.recv() => assert_eq!(delta, Some(text("partial"))),
        }
        // `read` is dropped here, mid-stream.
    }
    tokio::time::timeout(HANG_GUARD, server)
        .await
        .expect("the client never closed the connection")
        .unwrap();
}

// ---------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_missing_key_fails_at_once_without_a_request() {
    let var = "ZEROCLAW_TEST_KEY_THAT_IS_NEVER_SET_7f3a9c";
    assert!(std::env::var_os(var).is_none());
    let fake = FakeProvider::start().await.unwrap();
    fake.push(openai::text(&["never sent"]));
    for mut config in [openai_config(&fake), anthropic_config(&fake)] {
        config.api_key_env = Some(var.into());
        config.max_retries = 3;
        // Through `new`, which reads the (unset) variable.
        let provider = Provider::new(config).unwrap();
        let messages = hello();
        let request = ChatRequest {
            model: MODEL,
            system: None,
            messages: &messages,
            tools: &[],
        };
        let Err(error) = provider.open(&request, &|_| {}).await else {
            panic!("open succeeded without a key");
        };
        assert_eq!(error.kind, ErrorKind::MissingKey);
        assert!(error.message.contains(var), "{error:?}");
    }
    assert_eq!(fake.request_count(), 0);
}

#[tokio::test]
async fn a_blank_key_counts_as_missing() {
    let fake = FakeProvider::start().await.unwrap();
    let mut config = openai_config(&fake);
    config.api_key_env = Some("ZEROCLAW_TEST_BLANK_KEY".into());
    let provider = Provider::with_api_key(config, Some("  ".into())).unwrap();
    let error = call(&provider).await.err();
    assert_eq!(error.kind, ErrorKind::MissingKey);
    assert_eq!(fake.request_count(), 0);
}

#[tokio::test]
async fn the_key_never_appears_in_debug_output() {
    let fake = FakeProvider::start().await.unwrap();
    let secret = "sk-very-secret-4242";
    for config in [openai_config(&fake), anthropic_config(&fake)] {
        let mut config = config;
        config.api_key_env = Some("ZEROCLAW_TEST_DEBUG_KEY".into());
        let provider = Provider::with_api_key(config, Some(secret.into())).unwrap();
        for shown in [format!("{provider:?}"), format!("{provider:#?}")] {
            assert!(!shown.contains(secret), "{shown}");
            assert!(!shown.contains("4242"), "{shown}");
        }
    }
}

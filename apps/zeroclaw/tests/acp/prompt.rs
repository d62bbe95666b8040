//! `session/prompt`: the answer streams as `agent_message_chunk`s before the prompt's
//! answer, whose stop reason is ACP's; resources become quoted context; images reach the
//! model, and a block that is not the image it says is refused.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{ContentBlock, PromptRequest, StopReason};
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn a_prompt_streams_its_answer_then_ends_the_turn() {
    let env = Env::new("", "");
    env.fake.push(
        openai::Builder::new()
            .reasoning("Thinking.")
            .text("Hello ")
            .text("from zeroclaw.")
            .usage(12, 5)
            .build(),
    );
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        let answer = cx
            .send_request(text_prompt(&session, "say hello"))
            .block_task()
            .await?;
        // Every update of the turn arrived before its answer.
        let seen = editor.seen();
        assert_eq!(
            seen.kinds(),
            [
                "agent_thought_chunk",
                "agent_message_chunk",
                "agent_message_chunk"
            ]
        );
        assert_eq!(seen.text_of("agent_thought_chunk"), "Thinking.");
        assert_eq!(seen.text_of("agent_message_chunk"), "Hello from zeroclaw.");
        assert!(
            seen.updates
                .iter()
                .all(|n| n.session_id.0.as_ref() == session)
        );
        Ok(answer)
    }));
    let answer = exit.outcome.unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    // The turn's usage (unstable in ACP): the provider's report of its one call.
    let usage = serde_json::to_value(answer.usage.unwrap()).unwrap();
    assert_eq!(
        usage,
        json!({"totalTokens": 17, "inputTokens": 12, "outputTokens": 5})
    );
    assert!(exit.status.success(), "{}", exit.stderr);
    let body = &env.fake.wait_for_requests(1)[0].body;
    let user = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(user["content"], "say hello");
}

#[test]
fn resources_and_links_in_a_prompt_reach_the_model_as_quoted_context() {
    let env = Env::new("", "");
    env.fake.push(openai::text(&["Seen."]));
    let exit = runtime().block_on(run(&env.dir, Editor::new(Permission::Hold), async |cx| {
        let session = open(&cx, &env.work).await?;
        let blocks: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "text", "text": "What does this do?"},
            {"type": "resource", "resource": {"uri": "file:///w/a.rs", "text": "fn main() {}"}},
            {"type": "resource_link", "name": "b.rs", "uri": "file:///w/b.rs"}
        ]))
        .unwrap();
        cx.send_request(PromptRequest::new(session, blocks))
            .block_task()
            .await
    }));
    assert_eq!(exit.outcome.unwrap().stop_reason, StopReason::EndTurn);
    let body = &env.fake.wait_for_requests(1)[0].body;
    let user = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(
        user["content"],
        "What does this do?\n\nContext from file:///w/a.rs:\n```\nfn main() {}\n```\n\n[referenced: b.rs (file:///w/b.rs)]"
    );
}

#[test]
fn an_image_in_a_prompt_reaches_the_model_and_a_false_one_is_refused() {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    let env = Env::new("", "");
    env.fake.push(openai::text(&["A pixel."]));
    let png = STANDARD.encode(zeroclaw_testkit::PNG);
    let exit = runtime().block_on(run(&env.dir, Editor::new(Permission::Hold), async |cx| {
        let session = open(&cx, &env.work).await?;
        let image: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "text", "text": "What is this?"},
            {"type": "image", "data": png, "mimeType": "image/png"}
        ]))
        .unwrap();
        let seen = cx
            .send_request(PromptRequest::new(session.clone(), image))
            .block_task()
            .await?;
        // Not a PNG's bytes: the daemon refuses it before any turn runs.
        let false_image: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "image", "data": "AA==", "mimeType": "image/png"}
        ]))
        .unwrap();
        let refused = cx
            .send_request(PromptRequest::new(session, false_image))
            .block_task()
            .await;
        Ok((seen.stop_reason, refused))
    }));
    let (stop, refused) = exit.outcome.unwrap();
    assert_eq!(stop, StopReason::EndTurn);
    let refused = refused.unwrap_err();
    assert_eq!(i32::from(refused.code), -32602, "{refused:?}");
    assert_eq!(env.fake.request_count(), 1);
    let body = &env.fake.wait_for_requests(1)[0].body;
    let user = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(
        user["content"],
        json!([
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{png}")}}
        ])
    );
}

#[test]
fn a_provider_failure_is_an_error_answer_with_our_code() {
    let env = Env::new("", "");
    env.fake.push(zeroclaw_testkit::Reply::unauthorized());
    let exit = runtime().block_on(run(&env.dir, Editor::new(Permission::Hold), async |cx| {
        let session = open(&cx, &env.work).await?;
        Ok(cx
            .send_request(text_prompt(&session, "hello?"))
            .block_task()
            .await)
    }));
    let error = exit.outcome.unwrap().unwrap_err();
    assert_eq!(i32::from(error.code), -32004, "{error:?}");
    assert!(exit.status.success(), "{}", exit.stderr);
}

#[test]
fn each_model_call_sends_a_usage_update_with_the_context_gauge_and_the_cost() {
    let env = Env::new(
        "",
        "[provider.pricing]\ninput = 1000000\noutput = 2000000\ncurrency = \"EUR\"\n",
    );
    env.fake.push(openai::text(&["counted"]));
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        cx.send_request(text_prompt(&session, "count"))
            .block_task()
            .await
    }));
    assert!(exit.outcome.is_ok(), "{}", exit.stderr);
    let seen = editor.seen();
    assert_eq!(seen.usage.len(), 1);
    let usage = serde_json::to_value(&seen.usage[0].update).unwrap();
    assert_eq!(usage["sessionUpdate"], "usage_update");
    assert!(usage["used"].as_u64().unwrap() > 0, "{usage}");
    assert!(
        usage["size"].as_u64().unwrap() >= usage["used"].as_u64().unwrap(),
        "{usage}"
    );
    // ACP's cost: the session's so far, in the prices' currency.
    assert!(usage["cost"]["amount"].as_f64().unwrap() > 0.0, "{usage}");
    assert_eq!(usage["cost"]["currency"], "EUR", "{usage}");
}

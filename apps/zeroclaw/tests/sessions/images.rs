//! Issue 34, images in prompts: `session/prompt`'s `content` carries an image to both
//! providers in their wire formats (OpenAI's `image_url` data URL, Anthropic's base64
//! `image` source), stored beside its message so it is sent again on later turns — after a
//! restart too — and a replay names it without its bytes (`session/attachment` has them).
//! A bad or oversized block, or a model that takes no images, is refused by name before
//! anything runs or is stored.

use crate::common::*;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use zeroclaw_testkit::{PNG, anthropic, openai};

fn image() -> Value {
    json!({"type": "image", "mimeType": "image/png", "data": STANDARD.encode(PNG)})
}

/// Sends `prompt` with `content` and drives the turn to its end.
fn prompt_with(client: &mut Client, session: &str, prompt: &str, content: Value) -> TurnLog {
    let id = client.send(
        "session/prompt",
        json!({"sessionId": session, "prompt": prompt, "content": content}),
    );
    client.drive(&id, no_questions)
}

#[test]
fn an_image_reaches_openai_as_a_data_url_and_is_sent_again_after_a_restart() {
    let mut env = Env::new("", "");
    env.fake.push(openai::text(&["a red pixel"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let content = json!([
        image(),
        {"type": "resource", "resource": {"uri": "file:///notes.md", "text": "NOTE"}},
    ]);
    let turn = prompt_with(&mut client, &session, "what is this?", content);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let data_url = format!("data:image/png;base64,{}", STANDARD.encode(PNG));
    let body = &env.fake.requests()[0].body;
    let user = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        user,
        json!({"role": "user", "content": [
            {"type": "text", "text": "what is this?\n\n<resource uri=\"file:///notes.md\">\nNOTE\n</resource>"},
            {"type": "image_url", "image_url": {"url": data_url}},
        ]})
    );

    // A replay names the image, and `session/attachment` answers its bytes.
    let (replay, _) = client.load_with_replay(&session);
    let prompt = replay
        .iter()
        .find(|e| e["type"] == "user_message_chunk")
        .unwrap();
    let images = prompt["images"].as_array().unwrap();
    assert_eq!(images.len(), 1, "{prompt}");
    assert_eq!(images[0]["mimeType"], "image/png");
    assert_eq!(images[0]["size"], PNG.len());
    assert!(
        prompt.to_string().len() < 1000,
        "no bytes in a replay: {prompt}"
    );
    let id = images[0]["attachmentId"].clone();
    let bytes = client.call(
        "session/attachment",
        json!({"sessionId": session, "attachmentId": id}),
    );
    assert_eq!(
        bytes,
        json!({"mimeType": "image/png", "data": STANDARD.encode(PNG)})
    );
    let messages = client.messages(&session);
    assert_eq!(messages[0]["images"][0]["attachmentId"], id);
    let error = client.fail(
        "session/attachment",
        json!({"sessionId": session, "attachmentId": "999.0"}),
    );
    assert_eq!(error["code"], -32602, "{error}");

    // The stored image is part of the conversation: the next turn, after a restart, sends
    // it again.
    drop(client);
    env.kill_and_restart();
    env.fake.push(openai::text(&["still red"]));
    let mut client = env.daemon.client();
    client.call("session/load", json!({"sessionId": session}));
    let turn = client.prompt(&session, "and now?", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let body = &env.fake.requests()[1].body;
    let first = &body["messages"].as_array().unwrap()[1];
    assert_eq!(first["role"], "user", "{body}");
    assert_eq!(first["content"][1]["image_url"]["url"], json!(data_url));
}

#[test]
fn an_image_reaches_anthropic_as_a_base64_image_block() {
    let env = Env::new("kind = \"anthropic\"", "");
    env.fake.push(
        anthropic::Builder::new()
            .text("a pixel")
            .usage(10, 2)
            .build(),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let link = json!({"type": "resource_link", "uri": "file:///w/a.rs", "name": "a.rs"});
    let turn = prompt_with(&mut client, &session, "look", json!([image(), link]));
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let body = &env.fake.requests()[0].body;
    let user = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        user,
        json!({"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": STANDARD.encode(PNG)}},
            {"type": "text", "text": "look\n\n[attached resource link: a.rs <file:///w/a.rs>]"},
        ]})
    );
}

#[test]
fn bad_content_and_text_only_models_are_refused_by_name_and_nothing_is_stored() {
    let env = Env::new("images = false", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let refused = |client: &mut Client, content: Value| {
        client.fail(
            "session/prompt",
            json!({"sessionId": session, "prompt": "p", "content": content}),
        )
    };
    let mut big = PNG.to_vec();
    big.resize(5 * 1024 * 1024 + 1, 0);
    let oversized =
        json!([{"type": "image", "mimeType": "image/png", "data": STANDARD.encode(&big)}]);
    let error = refused(&mut client, oversized);
    assert_eq!(error["code"], -32602, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("content[0]") && message.contains("5242880 bytes (5 MiB) per image"),
        "{message}"
    );
    let error = refused(
        &mut client,
        json!([{"type": "image", "mimeType": "image/png", "data": STANDARD.encode(b"GIF89a")}]),
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("not a image/png image"),
        "{error}"
    );
    let too_many: Vec<Value> = (0..11).map(|_| image()).collect();
    let error = refused(&mut client, json!(too_many));
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("at most 10 blocks"),
        "{error}"
    );
    // A well-formed image to a model configured as text-only.
    let error = refused(&mut client, json!([image()]));
    assert_eq!(error["code"], -32602, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("does not take images") && message.contains("images = true"),
        "{message}"
    );
    assert_eq!(env.fake.request_count(), 0);
    assert!(client.messages(&session).is_empty());
}

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
use zeroclaw_testkit::{FakeProvider, PNG, anthropic, openai};

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

/// The test PNG as Anthropic's request has it: a base64 `image` block.
fn anthropic_image() -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": STANDARD.encode(PNG)}})
}

/// The last message (the prompt) of request `at` that `fake` received.
fn sent_prompt(fake: &FakeProvider, at: usize) -> Value {
    let body = &fake.wait_for_requests(at + 1)[at].body;
    body["messages"].as_array().unwrap().last().unwrap().clone()
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
    let user = sent_prompt(&env.fake, 0);
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
    let user = sent_prompt(&env.fake, 0);
    assert_eq!(
        user,
        json!({"role": "user", "content": [
            anthropic_image(),
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

/// An `image` block of `size` bytes: a PNG's first bytes, then zeros (the daemon checks
/// the magic number, not the pixels).
fn sized_image(size: usize) -> Value {
    let mut bytes = PNG.to_vec();
    bytes.resize(size, 0);
    json!({"type": "image", "mimeType": "image/png", "data": STANDARD.encode(&bytes)})
}

/// The note a request has in place of the test PNG for a model that takes no images.
fn text_only_note() -> String {
    format!(
        "[image image/png, {} bytes, not shown: this model does not take images]",
        PNG.len()
    )
}

#[test]
fn an_image_only_prompt_reaches_anthropic_without_an_empty_text_block() {
    let env = Env::new("kind = \"anthropic\"", "");
    env.fake.push(
        anthropic::Builder::new()
            .text("a pixel")
            .usage(9, 2)
            .build(),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = prompt_with(&mut client, &session, "", json!([image()]));
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let user = sent_prompt(&env.fake, 0);
    // Anthropic refuses an empty text block ("text content blocks must be non-empty").
    assert_eq!(
        user,
        json!({"role": "user", "content": [
            anthropic_image(),
        ]})
    );
}

#[test]
fn after_set_model_to_a_text_only_model_earlier_images_go_as_notes() {
    let env = Env::new("", "");
    env.fake.push(openai::text(&["a pixel"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = prompt_with(&mut client, &session, "", json!([image()]));
    assert_eq!(turn.result()["stopReason"], "end_turn");
    // OpenAI's parts for an image-only prompt: the image alone, no empty text part.
    let data_url = format!("data:image/png;base64,{}", STANDARD.encode(PNG));
    assert_eq!(
        sent_prompt(&env.fake, 0)["content"],
        json!([{"type": "image_url", "image_url": {"url": data_url}}])
    );

    // A model known to take no images: a new image is refused up front, and the stored
    // one is sent as a note.
    client.call(
        "session/set_model",
        json!({"sessionId": session, "model": "llama3.2"}),
    );
    let error = client.fail(
        "session/prompt",
        json!({"sessionId": session, "prompt": "p", "content": [image()]}),
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("does not take images"),
        "{error}"
    );
    env.fake.push(openai::text(&["no picture"]));
    let turn = client.prompt(&session, "and now?", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let body = &env.fake.requests()[1].body;
    assert_eq!(body["model"], "llama3.2");
    let first = &body["messages"].as_array().unwrap()[1];
    assert_eq!(
        *first,
        json!({"role": "user", "content": text_only_note()}),
        "{body}"
    );
    assert!(!body.to_string().contains("image_url"), "{body}");
}

#[test]
fn a_text_only_fallback_gets_a_note_for_each_image() {
    let backup = FakeProvider::start_blocking().unwrap();
    let fallback = format!(
        "[[fallback]]\nbase_url = {:?}\nmodel = \"backup\"\nmax_retries = 0\nimages = false\n",
        backup.base_url()
    );
    // The primary (the env's fake) has no reply scripted: it answers 500.
    let env = Env::new("", &fallback);
    backup.push(openai::text(&["told of a picture"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = prompt_with(&mut client, &session, "look", json!([image()]));
    assert_eq!(turn.result()["text"], "told of a picture");
    let user = sent_prompt(&env.fake, 0);
    assert_eq!(user["content"][1]["type"], "image_url", "{user}");
    assert_eq!(
        sent_prompt(&backup, 0)["content"],
        json!(format!("{}\n\nlook", text_only_note()))
    );
}

#[test]
fn a_request_carries_only_the_newest_20_mib_of_images_and_notes_the_older() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    // Three prompts of two 5 MiB images each: 30 MiB stored.
    let five = 5 * 1024 * 1024;
    for n in 0..3 {
        env.fake.push(openai::text(&["seen"]));
        let content = json!([sized_image(five), sized_image(five)]);
        let turn = prompt_with(&mut client, &session, &format!("shot {n}"), content);
        assert_eq!(turn.result()["stopReason"], "end_turn");
    }
    env.fake.push(openai::text(&["done"]));
    let turn = client.prompt(&session, "and now?", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let note =
        "[image image/png, 5.0 MiB, not shown: a request carries only the newest 20 MiB of images]";
    let requests = env.fake.requests();
    // The third turn's request: the first prompt's images are notes, the newest four sent
    // (the third prompt's own among them); the fourth's, read from the store, the same.
    for at in [2, 3] {
        let body = &requests[at].body;
        let prompts: Vec<&Value> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .collect();
        assert_eq!(
            prompts[0]["content"],
            json!(format!("{note}\n{note}\n\nshot 0")),
            "request {at}"
        );
        for prompt in &prompts[1..3] {
            let parts = prompt["content"].as_array().unwrap();
            let kinds: Vec<&str> = parts.iter().map(|p| p["type"].as_str().unwrap()).collect();
            assert_eq!(kinds, ["text", "image_url", "image_url"], "request {at}");
        }
    }
}

#[test]
fn a_prompts_content_over_10_mib_together_is_refused_naming_the_limit() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    // Each within the 5 MiB an image may be; together 10.5 MiB.
    let piece = 3 * 1024 * 1024 + 512 * 1024;
    let content = json!([sized_image(piece), sized_image(piece), sized_image(piece)]);
    let error = client.fail(
        "session/prompt",
        json!({"sessionId": session, "prompt": "p", "content": content}),
    );
    assert_eq!(error["code"], -32602, "{error}");
    assert_eq!(
        error["message"],
        "invalid params: content: the blocks come to more than the limit of 10485760 bytes (10 MiB) per prompt"
    );
    assert_eq!(env.fake.request_count(), 0);
    assert!(client.messages(&session).is_empty());
}

#[test]
fn a_fork_copies_the_prompts_images() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    env.fake.push(openai::text(&["a pixel"]));
    prompt_with(&mut client, &session, "what?", json!([image()]));
    let fork = client.call("session/fork", json!({"sessionId": session}));
    let forked = fork["sessionId"].as_str().unwrap().to_owned();
    let messages = client.messages(&forked);
    let id = messages[0]["images"][0]["attachmentId"].clone();
    let bytes = client.call(
        "session/attachment",
        json!({"sessionId": forked, "attachmentId": id}),
    );
    assert_eq!(bytes["data"], json!(STANDARD.encode(PNG)));
    // And the fork's next turn sends it.
    env.fake.push(openai::text(&["still a pixel"]));
    client.prompt(&forked, "again?", no_questions);
    let body = &env.fake.requests()[1].body;
    assert_eq!(
        body["messages"][1]["content"][1]["image_url"]["url"],
        json!(format!("data:image/png;base64,{}", STANDARD.encode(PNG))),
        "{body}"
    );
}

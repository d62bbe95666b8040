//! Issue 34, images over REST: `POST …/prompt` takes `content` as `session/prompt` does,
//! `GET …/messages` names the image, and `GET …/attachments/{id}` serves its bytes with its
//! type; a bad block is 400 with the daemon's message.

use crate::harness::*;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;
use zeroclaw_testkit::{PNG, openai};

#[test]
fn a_rest_prompt_carries_an_image_and_its_bytes_are_served_back() {
    let gw = Gw::new();
    let token = gw.token("ops", "operate");
    gw.env.fake.push(openai::text(&["a pixel"]));
    block(async {
        let client = http();
        let auth = |r: reqwest::RequestBuilder| r.bearer_auth(&token);
        let (_, created) = json_of(
            auth(client.post(gw.api("/sessions")))
                .json(&json!({"cwd": gw.work()}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        let id = created["sessionId"].as_str().unwrap().to_owned();
        let image = json!({"type": "image", "mimeType": "image/png", "data": STANDARD.encode(PNG)});
        let (status, result) = json_of(
            auth(client.post(gw.api(&format!("/sessions/{id}/prompt"))))
                .json(&json!({"prompt": "what?", "content": [image]}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (status, result["text"].clone()),
            (200, json!("a pixel")),
            "{result}"
        );
        let body = &gw.env.fake.requests()[0].body;
        let user = body["messages"].as_array().unwrap().last().unwrap();
        assert_eq!(
            user["content"][1]["image_url"]["url"],
            format!("data:image/png;base64,{}", STANDARD.encode(PNG))
        );

        let (_, page) = json_of(
            auth(client.get(gw.api(&format!("/sessions/{id}/messages"))))
                .send()
                .await
                .unwrap(),
        )
        .await;
        let prompt = page["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["kind"] == "user")
            .unwrap()
            .clone();
        let attachment = prompt["images"][0]["attachmentId"]
            .as_str()
            .unwrap()
            .to_owned();
        let served = auth(client.get(gw.api(&format!("/sessions/{id}/attachments/{attachment}"))))
            .send()
            .await
            .unwrap();
        assert_eq!(served.status(), 200);
        assert_eq!(served.headers()["content-type"], "image/png");
        assert_eq!(served.headers()["x-content-type-options"], "nosniff");
        assert_eq!(&served.bytes().await.unwrap()[..], PNG);

        let (status, error) = json_of(
            auth(client.get(gw.api(&format!("/sessions/{id}/attachments/77.0"))))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 400, "{error}");
        let bmp = json!({"type": "image", "mimeType": "image/bmp", "data": "Qk0="});
        let (status, error) = json_of(
            auth(client.post(gw.api(&format!("/sessions/{id}/prompt"))))
                .json(&json!({"prompt": "p", "content": [bmp]}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 400, "{error}");
        assert!(
            error["error"]["message"]
                .as_str()
                .unwrap()
                .contains("image/bmp"),
            "{error}"
        );
    });
}

/// `POST /sessions/{id}/prompt` with `token` and this JSON body; its status and answer.
fn post_prompt(
    gw: &Gw,
    token: &str,
    id: &str,
    body: serde_json::Value,
) -> (u16, serde_json::Value) {
    block(async {
        json_of(
            http()
                .post(gw.api(&format!("/sessions/{id}/prompt")))
                .bearer_auth(token)
                .json(&body)
                .send()
                .await
                .unwrap(),
        )
        .await
    })
}

/// An `image` block of `size` bytes: a PNG's first bytes, then zeros.
fn sized_image(size: usize) -> serde_json::Value {
    let mut bytes = PNG.to_vec();
    bytes.resize(size, 0);
    json!({"type": "image", "mimeType": "image/png", "data": STANDARD.encode(&bytes)})
}

#[test]
fn a_prompt_route_takes_the_images_the_protocol_takes_and_refuses_an_oversized_one_by_name() {
    // The default `max_body_bytes` (1 MiB) bounds the other routes; a prompt's body also
    // has room for 10 MiB of content in base64.
    let gw = Gw::new();
    let token = gw.token("ops", "operate");
    let id = new_session(&gw, &token);
    gw.env.fake.push(openai::text(&["a big picture"]));
    let (status, result) = post_prompt(
        &gw,
        &token,
        &id,
        json!({"prompt": "what?", "content": [sized_image(2 * 1024 * 1024)]}),
    );
    assert_eq!(
        (status, result["text"].clone()),
        (200, json!("a big picture")),
        "{result}"
    );
    let body = &gw.env.fake.requests()[0].raw_body;
    assert!(
        body.len() > 2 * 1024 * 1024,
        "the image reached the provider"
    );

    // Over 5 MiB: the daemon's refusal, naming the limit (not the gateway's 413).
    let (status, error) = post_prompt(
        &gw,
        &token,
        &id,
        json!({"prompt": "what?", "content": [sized_image(5 * 1024 * 1024 + 1)]}),
    );
    assert_eq!(status, 400, "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("content[0]") && message.contains("5242880 bytes (5 MiB) per image"),
        "{message}"
    );
    assert_eq!(gw.env.fake.request_count(), 1);

    // Another route keeps `max_body_bytes`.
    let (status, error) = block(async {
        json_of(
            http()
                .post(gw.api(&format!("/sessions/{id}/steer")))
                .bearer_auth(&token)
                .json(&json!({"text": "x".repeat(2 * 1024 * 1024)}))
                .send()
                .await
                .unwrap(),
        )
        .await
    });
    assert_eq!(status, 413, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("gateway.max_body_bytes (1048576 bytes)"),
        "{error}"
    );
}

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

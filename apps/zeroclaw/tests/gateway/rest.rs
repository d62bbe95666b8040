//! `/api/v1`: every route's success and its errors, answered as the RPC results are.

use crate::harness::*;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

#[test]
fn health_needs_no_token_and_everything_else_does() {
    let gw = Gw::new();
    block(async {
        let client = http();
        let (status, body) = json_of(client.get(gw.api("/health")).send().await.unwrap()).await;
        assert_eq!((status, body), (200, json!({"status": "ok"})));

        let response = client.get(gw.api("/status")).send().await.unwrap();
        assert_eq!(
            response.headers()["www-authenticate"],
            "Bearer realm=\"zeroclaw\""
        );
        let (status, body) = json_of(response).await;
        assert_eq!(status, 401);
        assert_eq!(body["error"]["code"], -32020);

        let (status, body) = json_of(
            client
                .get(gw.api("/status"))
                .bearer_auth("zc_not_a_token")
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (status, body["error"]["code"].clone()),
            (401, json!(-32020))
        );

        // A token in the query string is never read.
        let token = "zc_whatever";
        let (status, _) = json_of(
            client
                .get(format!(
                    "{}?token={token}&access_token={token}",
                    gw.api("/status")
                ))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 401);
    });
}

#[test]
fn the_session_routes_answer_as_their_rpc_methods() {
    let gw = Gw::new();
    let token = gw.token("ops", "operate");
    gw.env.fake.push(openai::text(&["Hello ", "there"]));
    block(async {
        let client = http();
        let auth = |r: reqwest::RequestBuilder| r.bearer_auth(&token);

        let (status, body) =
            json_of(auth(client.get(gw.api("/status"))).send().await.unwrap()).await;
        assert_eq!(status, 200);
        assert_eq!(body["gateway"]["url"], json!(gw.url));
        assert_eq!(body["protocolVersion"], 1);

        let (status, created) = json_of(
            auth(client.post(gw.api("/sessions")))
                .json(&json!({"cwd": gw.work(), "title": "via rest"}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let id = created["sessionId"].as_str().unwrap().to_owned();
        assert_eq!(created["title"], "via rest");

        let (status, list) =
            json_of(auth(client.get(gw.api("/sessions"))).send().await.unwrap()).await;
        assert_eq!(status, 200);
        assert_eq!(list["sessions"][0]["sessionId"], json!(id));

        let (status, one) = json_of(
            auth(client.get(gw.api(&format!("/sessions/{id}"))))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!((status, one["sessionId"].clone()), (200, json!(id)));
        assert_eq!(one["running"], false);

        let (status, result) = json_of(
            auth(client.post(gw.api(&format!("/sessions/{id}/prompt"))))
                .json(&json!({"prompt": "hi"}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{result}");
        assert_eq!(result["text"], "Hello there");
        assert_eq!(result["stopReason"], "end_turn");

        let (status, page) = json_of(
            auth(client.get(gw.api(&format!("/sessions/{id}/messages?limit=1"))))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(page["total"], 2);
        assert_eq!(page["messages"].as_array().unwrap().len(), 1);
        assert_eq!(page["messages"][0]["kind"], "assistant");

        let (status, context) = json_of(
            auth(client.get(gw.api(&format!("/sessions/{id}/context"))))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{context}");
        assert_eq!(context["projectRoot"], json!(gw.work()));
        assert_eq!(context["instructions"], json!([]));
        let (status, commands) = json_of(
            auth(client.get(gw.api(&format!("/sessions/{id}/commands"))))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!((status, commands), (200, json!({"commands": []})));
        let (status, usage) = json_of(
            auth(client.get(gw.api(&format!("/sessions/{id}/usage"))))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{usage}");
        // The fake's usage for a two-chunk answer; no pricing, so no cost.
        assert_eq!(
            usage,
            json!({"sessionId": id, "inputTokens": 10, "outputTokens": 2, "turns": 1,
                   "contextUsed": 10, "contextSize": 8192})
        );
        let (status, missing) = json_of(
            auth(client.get(gw.api("/sessions/no-such-session/usage")))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (status, missing["error"]["code"].clone()),
            (404, json!(-32000))
        );

        let (status, cancelled) = json_of(
            auth(client.post(gw.api(&format!("/sessions/{id}/cancel"))))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!((status, cancelled), (200, json!({"cancelled": false})));

        let (status, body) = json_of(
            auth(client.post(gw.api(&format!("/sessions/{id}/approvals/nope"))))
                .json(&json!({"decision": "allow_once"}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (status, body["error"]["code"].clone()),
            (400, json!(-32602))
        );

        let (status, deleted) = json_of(
            auth(client.delete(gw.api(&format!("/sessions/{id}"))))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!((status, deleted), (200, json!({"deleted": true})));
    });
}

#[test]
fn errors_carry_the_rpc_code_with_the_fitting_http_status() {
    let gw = Gw::with("max_body_bytes = 1024", "");
    let token = gw.token("ops", "operate");
    block(async {
        let client = http();
        let auth = |r: reqwest::RequestBuilder| r.bearer_auth(&token);
        let missing = "00000000-0000-0000-0000-000000000000";
        for (request, status, code) in [
            (
                auth(client.get(gw.api(&format!("/sessions/{missing}")))),
                404,
                -32000,
            ),
            (
                auth(client.get(gw.api(&format!("/sessions/{missing}/messages")))),
                404,
                -32000,
            ),
            (
                auth(client.post(gw.api(&format!("/sessions/{missing}/prompt"))))
                    .json(&json!({"prompt": "x"})),
                404,
                -32000,
            ),
            (
                auth(client.post(gw.api("/sessions"))).body("{not json"),
                400,
                -32700,
            ),
            (
                auth(client.post(gw.api("/sessions"))).json(&json!({"cwd": "relative"})),
                400,
                -32602,
            ),
            (
                auth(client.post(gw.api("/sessions"))).json(&json!({"bogus": 1})),
                400,
                -32602,
            ),
            (
                auth(client.post(gw.api("/sessions")))
                    .body(format!("{{\"title\":\"{}\"}}", "x".repeat(2000))),
                413,
                -32600,
            ),
            (auth(client.get(gw.api("/nowhere"))), 404, -32601),
        ] {
            let (got, body) = json_of(request.send().await.unwrap()).await;
            assert_eq!(
                (got, body["error"]["code"].clone()),
                (status, json!(code)),
                "{body}"
            );
        }
        let (_, body) = json_of(
            auth(client.post(gw.api("/sessions")))
                .body(format!("{{\"title\":\"{}\"}}", "x".repeat(2000)))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(body["error"]["data"]["limit"], 1024);
    });
}

#[test]
fn a_busy_session_is_409() {
    let gw = Gw::new();
    let token = gw.token("ops", "operate");
    let gate = zeroclaw_testkit::Gate::new();
    gw.env
        .fake
        .push(openai::Builder::new().wait_for(&gate).text("done").build());
    let client = http();
    let id = block(async {
        let (_, created) = json_of(
            client
                .post(gw.api("/sessions"))
                .bearer_auth(&token)
                .json(&json!({"cwd": gw.work()}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        created["sessionId"].as_str().unwrap().to_owned()
    });
    let first = {
        let (client, url, token) = (
            client.clone(),
            gw.api(&format!("/sessions/{id}/prompt")),
            token.clone(),
        );
        rt().spawn(async move {
            json_of(
                client
                    .post(url)
                    .bearer_auth(token)
                    .json(&json!({"prompt": "one"}))
                    .send()
                    .await
                    .unwrap(),
            )
            .await
        })
    };
    gw.env.fake.wait_for_requests(1);
    block(async {
        let (status, body) = json_of(
            client
                .post(gw.api(&format!("/sessions/{id}/prompt")))
                .bearer_auth(&token)
                .json(&json!({"prompt": "two"}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (status, body["error"]["code"].clone()),
            (409, json!(-32002))
        );
    });
    gate.open();
    let (status, result) = block(first).unwrap();
    assert_eq!((status, result["text"].clone()), (200, json!("done")));
}

#[test]
fn the_openapi_document_lists_every_route_the_gateway_serves_and_no_other() {
    let gw = Gw::new();
    let token = gw.token("ops", "read");
    block(async {
        let client = http();
        let (status, doc) =
            json_of(client.get(gw.api("/openapi.json")).send().await.unwrap()).await;
        assert_eq!(status, 200);
        assert!(
            doc["openapi"].as_str().unwrap().starts_with("3.1"),
            "{}",
            doc["openapi"]
        );
        assert!(doc["components"]["schemas"]["SessionSummary"].is_object());
        let paths = doc["paths"].as_object().unwrap();
        assert!(paths.len() >= 9);
        for (path, item) in paths {
            for method in item.as_object().unwrap().keys() {
                let concrete = path.replace("{id}", "none").replace("{requestId}", "none");
                let url = format!("{}{concrete}", gw.url);
                let request = match method.as_str() {
                    "get" => client.get(url),
                    "post" => client.post(url).json(&json!({})),
                    "delete" => client.delete(url),
                    other => panic!("unexpected method {other}"),
                };
                let response = request
                    .bearer_auth(&token)
                    .header("accept", "application/json")
                    .send()
                    .await
                    .unwrap();
                let status = response.status().as_u16();
                let body: Value = response.json().await.unwrap_or(Value::Null);
                // The router knows the route: never its fallback (-32601) nor 405.
                assert_ne!(status, 405, "{method} {path}");
                assert_ne!(body["error"]["code"], -32601, "{method} {path}: {body}");
            }
        }
    });
}

//! `GET /rpc`: the socket's protocol over WebSocket, the handshake gate, the frame cap,
//! pipelining, elicitation to a WebSocket client, and who may open one.

use crate::common::*;
use crate::harness::*;
use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;
use zeroclaw_testkit::openai;

#[test]
fn the_handshake_gate_and_version_mismatch_are_the_sockets() {
    let gw = Gw::new();
    let token = gw.token("ops", "operate");
    block(async {
        let mut ws = ws(&gw.ws_url(), &token).await;
        let early = call(&mut ws, 1, "status", json!({})).await;
        assert_eq!(early["error"]["code"], -32010);
        let mismatch = call(&mut ws, 2, "initialize", json!({"protocolVersion": 99})).await;
        assert_eq!(mismatch["error"]["code"], -32011);
        assert_eq!(mismatch["error"]["data"]["supported"], json!([1]));
        initialize(&mut ws, json!({})).await;
        let status = call(&mut ws, 3, "status", json!({})).await;
        assert_eq!(status["result"]["gateway"]["url"], json!(gw.url));
    });
}

#[test]
fn pipelined_requests_are_all_answered_and_an_oversized_message_keeps_the_connection() {
    let gw = Gw::with("", "[daemon]\nmax_frame_bytes = 4096");
    let token = gw.token("ops", "operate");
    block(async {
        let mut ws = ws(&gw.ws_url(), &token).await;
        initialize(&mut ws, json!({})).await;
        for id in 10..60 {
            send(
                &mut ws,
                json!({"jsonrpc": "2.0", "id": id, "method": "status"}),
            )
            .await;
        }
        let mut seen = Vec::new();
        while seen.len() < 50 {
            let frame = recv(&mut ws).await.unwrap();
            assert!(frame["result"]["pid"].is_number(), "{frame}");
            seen.push(frame["id"].as_u64().unwrap());
        }
        seen.sort_unstable();
        assert_eq!(seen, (10..60).collect::<Vec<_>>());

        let big = format!(
            r#"{{"jsonrpc":"2.0","id":77,"method":"session/new","params":{{"title":"{}"}}}}"#,
            "x".repeat(8000)
        );
        ws.send(Message::text(big)).await.unwrap();
        let refused = recv(&mut ws).await.unwrap();
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        let after = call(&mut ws, 78, "status", json!({})).await;
        assert!(after["result"].is_object(), "the connection stays: {after}");

        // A binary frame is not JSON-RPC: closed with 1003.
        ws.send(Message::binary(vec![1, 2, 3])).await.unwrap();
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(Some(frame)))) => {
                    assert_eq!(u16::from(frame.code), 1003);
                    break;
                }
                Some(Ok(_)) => {}
                other => panic!("expected a close frame, got {other:?}"),
            }
        }
    });
}

#[test]
fn the_agent_asks_a_websocket_client_and_gets_its_answer() {
    let gw = Gw::new();
    let token = gw.token("ops", "operate");
    gw.env
        .fake
        .push(ask("call_1", "Which colour?", Some(&["red", "blue"])));
    gw.env.fake.push(openai::text(&["Blue it is."]));
    block(async {
        let mut ws = ws(&gw.ws_url(), &token).await;
        initialize(&mut ws, json!({"elicitation": {}})).await;
        let created = call(&mut ws, 2, "session/new", json!({"cwd": gw.work()})).await;
        let session = created["result"]["sessionId"].clone();
        send(
            &mut ws,
            json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": session, "prompt": "paint"}}),
        )
        .await;
        let result = loop {
            let frame = recv(&mut ws).await.unwrap();
            if frame["method"] == "elicitation/create" {
                assert_eq!(frame["params"]["message"], "Which colour?");
                send(
                    &mut ws,
                    json!({"jsonrpc": "2.0", "id": frame["id"], "result": {"action": "accept", "content": {"answer": "blue"}}}),
                )
                .await;
            } else if frame["id"] == 3 {
                break frame;
            }
        };
        assert_eq!(result["result"]["text"], "Blue it is.");
    });
    let body = &gw.env.fake.wait_for_requests(2)[1].body;
    assert_eq!(tool_content(body, "call_1"), "blue");
}

#[test]
fn the_upgrade_is_refused_without_a_token_from_a_foreign_origin_or_with_a_bare_bearer_subprotocol()
{
    let gw = Gw::new();
    let token = gw.token("ops", "operate");
    block(async {
        let url = gw.ws_url();
        let (status, body) = ws_with(&url, &[]).await.err().unwrap();
        assert_eq!(
            (status, body["error"]["code"].clone()),
            (401, json!(-32020))
        );

        let bearer = format!("Bearer {token}");
        let (status, _) = ws_with(
            &url,
            &[
                ("authorization", &bearer),
                ("origin", "https://evil.example"),
            ],
        )
        .await
        .err()
        .unwrap();
        assert_eq!(status, 403);

        let own = gw.url.replace("127.0.0.1", "localhost");
        let mut ok = ws_with(&url, &[("authorization", &bearer), ("origin", &own)])
            .await
            .unwrap();
        initialize(&mut ok, json!({})).await;

        // A browser's way: the token as a subprotocol beside zeroclaw.v1 (which is selected).
        let offered = format!("zeroclaw.v1, zeroclaw.bearer.{token}");
        let mut request =
            tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
                url.as_str(),
            )
            .unwrap();
        request
            .headers_mut()
            .insert("sec-websocket-protocol", offered.parse().unwrap());
        let (mut browser, response) = tokio_tungstenite::connect_async(request).await.unwrap();
        assert_eq!(response.headers()["sec-websocket-protocol"], "zeroclaw.v1");
        initialize(&mut browser, json!({})).await;

        let bare = format!("zeroclaw.bearer.{token}");
        let (status, _) = ws_with(&url, &[("sec-websocket-protocol", &bare)])
            .await
            .err()
            .unwrap();
        assert_eq!(status, 400);
    });
}

#[test]
fn a_revoked_token_is_refused_at_once_and_its_websocket_closed() {
    let gw = Gw::new();
    let token = gw.token("temp", "operate");
    let mut ws = block(async {
        let mut ws = ws(&gw.ws_url(), &token).await;
        initialize(&mut ws, json!({})).await;
        ws
    });
    gw.revoke("temp");
    block(async {
        // The connection is closed: the next request gets -32020 if it is read at all,
        // and then the end of the stream.
        send(
            &mut ws,
            json!({"jsonrpc": "2.0", "id": 5, "method": "status"}),
        )
        .await;
        while let Some(frame) = recv(&mut ws).await {
            assert_eq!(frame["error"]["code"], -32020, "{frame}");
        }
        let (status, _) = json_of(
            http()
                .get(gw.api("/status"))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 401);
    });
    gw.env.daemon.wait_for_log("token was revoked");
}

#[test]
fn an_expired_token_is_refused() {
    let gw = Gw::new();
    let created = gw
        .env
        .daemon
        .client()
        .call("token/create", json!({"name": "brief", "expiresIn": 1}));
    let token = created["token"].as_str().unwrap().to_owned();
    assert!(created["expiresAt"].is_string());
    // Ordered by the token's own clock: wait until its expiry has passed on the daemon's side.
    let mut client = gw.env.daemon.client();
    block(async {
        loop {
            let (status, _) = json_of(
                http()
                    .get(gw.api("/status"))
                    .bearer_auth(&token)
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            if status == 401 {
                break;
            }
            // 503 is the gateway's documented "busy, retry" (every REST call is a connection
            // of the daemon's, and a loop this tight can outrun their release on a slow
            // host, as under Wine); anything else is wrong.
            assert!(status == 200 || status == 503, "status {status}");
            tokio::task::yield_now().await;
        }
    });
    let listed = client.call("token/list", json!({}));
    assert_eq!(listed["tokens"][0]["name"], "brief");
}

//! Scopes: each refused what it may not do, on REST and on `/rpc`; the socket-only methods
//! are refused over the gateway whatever the scope.

use crate::harness::*;
use serde_json::json;

#[test]
fn a_read_token_reads_and_is_refused_everything_that_acts() {
    let gw = Gw::new();
    let read = gw.token("reader", "read");
    let ops = gw.token("ops", "operate");
    block(async {
        let client = http();
        let (status, _) = json_of(
            client
                .get(gw.api("/status"))
                .bearer_auth(&read)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200);
        let (status, _) = json_of(
            client
                .get(gw.api("/sessions"))
                .bearer_auth(&read)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200);
        let (status, body) = json_of(
            client
                .post(gw.api("/sessions"))
                .bearer_auth(&read)
                .json(&json!({"cwd": gw.work()}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (status, body["error"]["code"].clone()),
            (403, json!(-32003))
        );
        assert_eq!(body["error"]["data"]["needed"], "operate");

        let (_, created) = json_of(
            client
                .post(gw.api("/sessions"))
                .bearer_auth(&ops)
                .json(&json!({"cwd": gw.work()}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        let id = created["sessionId"].as_str().unwrap();
        for request in [
            client
                .post(gw.api(&format!("/sessions/{id}/prompt")))
                .json(&json!({"prompt": "x"})),
            client.post(gw.api(&format!("/sessions/{id}/cancel"))),
            client
                .post(gw.api(&format!("/sessions/{id}/approvals/r1")))
                .json(&json!({"decision": "reject"})),
            client.delete(gw.api(&format!("/sessions/{id}"))),
        ] {
            let (status, body) = json_of(request.bearer_auth(&read).send().await.unwrap()).await;
            assert_eq!(
                (status, body["error"]["code"].clone()),
                (403, json!(-32003)),
                "{body}"
            );
        }
        let (status, _) = json_of(
            client
                .get(gw.api(&format!("/sessions/{id}/messages")))
                .bearer_auth(&read)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200);

        // The same table over /rpc; and initialize advertises only what the token may call.
        let mut ws = ws(&gw.ws_url(), &read).await;
        let hello = initialize(&mut ws, json!({})).await;
        let methods = hello["capabilities"]["methods"].as_array().unwrap();
        assert!(methods.contains(&json!("session/list")));
        assert!(!methods.contains(&json!("session/prompt")));
        assert!(!methods.contains(&json!("token/create")));
        let refused = call(&mut ws, 2, "session/new", json!({"cwd": gw.work()})).await;
        assert_eq!(refused["error"]["code"], -32003);
        let listed = call(&mut ws, 3, "session/list", json!({})).await;
        assert!(listed["result"]["sessions"].is_array());
    });
}

#[test]
fn only_admin_may_shut_down_and_no_token_may_mint_tokens() {
    let gw = Gw::new();
    let ops = gw.token("ops", "operate");
    let admin = gw.token("root", "admin");
    block(async {
        let mut ws_ops = ws(&gw.ws_url(), &ops).await;
        initialize(&mut ws_ops, json!({})).await;
        let refused = call(&mut ws_ops, 2, "shutdown", json!({})).await;
        assert_eq!(refused["error"]["code"], -32003);
        let mut ws_admin = ws(&gw.ws_url(), &admin).await;
        initialize(&mut ws_admin, json!({})).await;
        for (id, method) in [
            (2, "token/create"),
            (3, "token/list"),
            (4, "token/revoke"),
            (5, "dashboard/link"),
        ] {
            let refused = call(&mut ws_admin, id, method, json!({"name": "x"})).await;
            assert_eq!(refused["error"]["code"], -32003, "{method}: {refused}");
            assert!(
                refused["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("local socket only"),
                "{refused}"
            );
        }
        let done = call(&mut ws_admin, 9, "shutdown", json!({})).await;
        assert_eq!(done["result"], json!({}));
    });
    gw.env.daemon.wait_for_log("stopped");
}

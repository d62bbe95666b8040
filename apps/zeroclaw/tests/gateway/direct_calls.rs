//! REST requests call the daemon's method table directly, each with a record that acts for
//! its token: a client while the request runs and never after, in the connection slots like
//! any client, and refused exactly as a connection's request would be.

use crate::harness::*;
use serde_json::json;

#[test]
fn a_rest_request_is_a_client_while_it_runs_and_not_after() {
    let gw = Gw::new();
    let token = gw.token("ops", "operate");
    // The harness's own connections (the gateway's URL, the token) are gone first.
    gw.env.daemon.wait_for_connections_closed();
    let mut socket = gw.env.daemon.initialized();
    block(async {
        let client = http();
        let (status, created) = json_of(
            client
                .post(gw.api("/sessions"))
                .bearer_auth(&token)
                .json(&json!({"cwd": gw.work()}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let id = created["sessionId"].as_str().unwrap();
        // Requests that attach to the session (as `session/load` does) and one that acts in it.
        let (status, _) = json_of(
            client
                .get(gw.api(&format!("/sessions/{id}")))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200);
        let (status, body) = json_of(
            client
                .post(gw.api(&format!("/sessions/{id}/cancel")))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!((status, body), (200, json!({"cancelled": false})));
        // While it runs, `status` over REST counts the socket client and itself.
        let (status, body) = json_of(
            client
                .get(gw.api("/status"))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!((status, body["clients"].clone()), (200, json!(2)));
    });
    // Every REST request has ended: only the socket is a client.
    assert_eq!(socket.call("status", json!({}))["clients"], json!(1));
}

#[test]
fn a_rest_request_takes_a_connection_slot_and_is_refused_when_every_slot_holds_a_client() {
    let gw = Gw::with("", "[daemon]\nmax_connections = 2");
    let token = gw.token("reader", "read");
    // The harness's own connections (the gateway's URL, the token) are gone first.
    gw.env.daemon.wait_for_connections_closed();
    let _first = gw.env.daemon.initialized();
    block(async {
        let (status, body) = json_of(
            http()
                .get(gw.api("/status"))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!((status, body["clients"].clone()), (200, json!(2)));
    });
    let _second = gw.env.daemon.initialized();
    block(async {
        let response = http()
            .get(gw.api("/status"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.headers()["retry-after"], "1");
        let (status, body) = json_of(response).await;
        assert_eq!(status, 503, "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("limit of 2"), "{message}");
    });
}

#[test]
fn a_rest_request_with_a_revoked_token_is_refused_and_a_read_token_only_reads() {
    let gw = Gw::new();
    let read = gw.token("reader", "read");
    let gone = gw.token("gone", "admin");
    gw.revoke("gone");
    block(async {
        let client = http();
        let (status, body) = json_of(
            client
                .get(gw.api("/status"))
                .bearer_auth(&gone)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (status, body["error"]["code"].clone()),
            (401, json!(-32020))
        );
        // The scope check is the method table's, word for word as on `/rpc`.
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
        assert_eq!(status, 403);
        assert_eq!(
            body["error"],
            json!({
                "code": -32003,
                "message": "session/new needs a token of scope \"operate\"; token \"reader\" has scope \"read\"",
                "data": {"needed": "operate", "scope": "read"}
            })
        );
    });
}

//! Over the gateway: a WebSocket client attached to a session another client prompted
//! gets `approval_resolved` before the tool's result when that client approves, and may
//! steer the turn; `POST /api/v1/sessions/{id}/steer` is refused 409 (`-32005`) with no
//! turn running.

use crate::common::*;
use crate::harness::*;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

/// Reads `ws` until a `session/update` of `kind`; the update params read on the way,
/// that one last.
async fn updates_until(ws: &mut Ws, kind: &str) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let frame = recv(ws).await.expect("closed while waiting for an event");
        if frame["method"] == "session/update" {
            let params = frame["params"].clone();
            let done = params["type"] == kind;
            seen.push(params);
            if done {
                return seen;
            }
        }
    }
}

#[test]
fn a_websocket_client_gets_approval_resolved_before_the_tool_result_and_can_steer() {
    let gw = Gw::new();
    let token = gw.token("ops", "operate");
    gw.env.fake.push(bash_call("call_1", "echo over-ws", 2));
    gw.env.fake.push(openai::text(&["ok"]));
    let mut a = gw.env.daemon.client();
    let session = a.new_session(std::path::Path::new(&gw.work()));
    block(async {
        let mut ws = ws(&gw.ws_url(), &token).await;
        initialize(&mut ws, json!({})).await;
        let loaded = call(&mut ws, 2, "session/load", json!({"sessionId": session})).await;
        assert!(loaded.get("error").is_none(), "{loaded}");
        let prompt = a.start_prompt(&session, "run it");
        let ask = updates_until(&mut ws, "approval_request")
            .await
            .pop()
            .unwrap();

        // The steer waits for the turn's next step, after the call the approval holds.
        let steered = call(
            &mut ws,
            3,
            "session/steer",
            json!({"sessionId": session, "text": "from the browser"}),
        )
        .await;
        assert!(steered["result"]["turnId"].is_string(), "{steered}");
        a.call(
            "session/approve",
            json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
        );
        let seen = updates_until(&mut ws, "tool_result").await;
        let kinds = types(&seen);
        assert_eq!(kinds, ["approval_resolved", "tool_result"], "{seen:#?}");
        assert_eq!(seen[0]["requestId"], ask["requestId"]);
        assert_eq!(seen[0]["by"], "client");
        assert_eq!(seen[0]["decision"], "allow_once");
        let seen = updates_until(&mut ws, "user_message").await;
        assert_eq!(
            seen,
            [json!({"sessionId": session, "turnId": ask["turnId"],
            "type": "user_message", "text": "from the browser"})]
        );
        let turn = a.drive(&prompt, ignore_all);
        assert_eq!(turn.result()["stopReason"], "end_turn");
    });
    let requests = gw.env.fake.wait_for_requests(2);
    let body = &requests[1].body;
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"], "from the browser", "{body}");
}

#[test]
fn a_rest_steer_with_no_turn_running_is_409_no_turn_running() {
    let gw = Gw::new();
    let token = gw.token("ops", "operate");
    let session = gw
        .env
        .daemon
        .client()
        .new_session(std::path::Path::new(&gw.work()));
    block(async {
        let (status, body) = json_of(
            http()
                .post(gw.api(&format!("/sessions/{session}/steer")))
                .bearer_auth(&token)
                .json(&json!({"text": "hello?"}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 409, "{body}");
        assert_eq!(body["error"]["code"], -32005, "{body}");
    });
}

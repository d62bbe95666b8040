//! A session's own sandbox: reported by `session/new`, `session/list` and `session/load`;
//! stricter than the config for anyone who may create sessions, wider only with admin
//! authority (the local socket here; a `read`/`operate` token through the gateway never).

use crate::common::*;
use serde_json::{Value, json};

#[test]
fn session_new_reports_the_sandbox_and_list_and_load_report_it_too() {
    let env = Env::new("", "[sandbox]\nnetwork = true");
    let mut client = env.daemon.client();
    let plain = client.call("session/new", json!({"cwd": env.work}));
    assert_eq!(
        plain["sandbox"],
        json!({"mode": "workspace-write", "network": true})
    );
    let strict = client.call(
        "session/new",
        json!({"cwd": env.work, "sandbox": {"mode": "read-only", "network": false}}),
    );
    assert_eq!(
        strict["sandbox"],
        json!({"mode": "read-only", "network": false})
    );
    // The local socket holds every authority: it may widen.
    let full = client.call(
        "session/new",
        json!({"cwd": env.work, "sandbox": {"mode": "full"}}),
    );
    assert_eq!(full["sandbox"], json!({"mode": "full", "network": true}));

    let loaded = client.call("session/load", json!({"sessionId": strict["sessionId"]}));
    assert_eq!(loaded["sandbox"]["mode"], "read-only");
    let list = client.call("session/list", json!({}));
    let modes: Vec<(&Value, &Value)> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (&s["sessionId"], &s["sandbox"]["mode"]))
        .collect();
    assert!(
        modes.contains(&(&full["sessionId"], &json!("full"))),
        "{list}"
    );
    assert!(modes.contains(&(&plain["sessionId"], &json!("workspace-write"))));

    let err = client.fail(
        "session/new",
        json!({"cwd": env.work, "sandbox": {"mode": "everything"}}),
    );
    assert_eq!(err["code"], -32602, "{err}");
}

#[test]
fn a_token_without_admin_scope_cannot_widen_the_sandbox() {
    let env = Env::new("", "[gateway]\nlisten = \"127.0.0.1:0\"");
    let mut local = env.daemon.client();
    let url = local.call("status", json!({}))["gateway"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut token = |name: &str, scope: &str| {
        local.call("token/create", json!({"name": name, "scope": scope}))["token"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let operate = token("ops", "operate");
    let admin = token("root", "admin");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let create = |token: &str, sandbox: Value| -> (u16, Value) {
        rt.block_on(async {
            let response = reqwest::Client::new()
                .post(format!("{url}/api/v1/sessions"))
                .bearer_auth(token)
                .json(&json!({"cwd": env.work, "sandbox": sandbox}))
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            (status, response.json().await.unwrap())
        })
    };
    for wider in [json!({"mode": "full"}), json!({"network": true})] {
        let (status, body) = create(&operate, wider.clone());
        assert_eq!(
            (status, &body["error"]["code"]),
            (403, &json!(-32003)),
            "{body}"
        );
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("may only be stricter") && message.contains("admin"),
            "{message}"
        );
    }
    let (status, body) = create(&operate, json!({"mode": "read-only"}));
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["sandbox"]["mode"], "read-only");
    let (status, body) = create(&admin, json!({"mode": "full"}));
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["sandbox"]["mode"], "full");
}

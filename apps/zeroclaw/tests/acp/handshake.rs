//! `initialize` and `session/new`: the agent's capabilities as the design sets them, and a
//! session that is an ordinary zeroclaw session.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{ClientCapabilities, NewSessionRequest};
use serde_json::json;

#[test]
fn initialize_answers_version_1_with_the_capabilities_of_the_design() {
    let env = Env::new("", "");
    let exit = runtime().block_on(run(&env.dir, Editor::new(Permission::Hold), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await
    }));
    let answer = exit.outcome.unwrap();
    assert_eq!(answer.protocol_version, ProtocolVersion::V1);
    let wire = serde_json::to_value(&answer).unwrap();
    let caps = &wire["agentCapabilities"];
    assert_eq!(caps["loadSession"], true, "{wire}");
    assert_eq!(
        caps["promptCapabilities"],
        json!({"image": true, "audio": false, "embeddedContext": true})
    );
    assert_eq!(caps["mcpCapabilities"]["http"], true);
    assert_eq!(caps["mcpCapabilities"]["sse"], false);
    for method in ["list", "resume", "close", "delete", "fork", "title"] {
        assert!(
            caps["sessionCapabilities"][method].is_object(),
            "{method}: {wire}"
        );
    }
    assert_eq!(wire["authMethods"], json!([]));
    assert_eq!(wire["agentInfo"]["name"], "zeroclaw");
    assert_eq!(wire["agentInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(exit.status.success(), "{}", exit.stderr);
}

#[test]
fn a_new_session_is_an_ordinary_zeroclaw_session_in_its_cwd() {
    let env = Env::new("", "");
    let exit = runtime().block_on(run(&env.dir, Editor::new(Permission::Hold), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await?;
        let session = cx
            .send_request(NewSessionRequest::new(&env.work))
            .block_task()
            .await?;
        Ok(session.session_id.0.to_string())
    }));
    let session_id = exit.outcome.unwrap();
    assert!(exit.status.success(), "{}", exit.stderr);

    let mut client = env.daemon.client();
    let list = client.call("session/list", json!({}));
    let sessions = list["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{list}");
    assert_eq!(sessions[0]["sessionId"], session_id);
    assert_eq!(sessions[0]["cwd"], env.work.display().to_string());
}

#[test]
fn a_request_before_initialize_is_refused_and_the_bridge_goes_on() {
    let env = Env::new("", "");
    let exit = runtime().block_on(run(&env.dir, Editor::new(Permission::Hold), async |cx| {
        let early = cx
            .send_request(NewSessionRequest::new(&env.work))
            .block_task()
            .await;
        let id = open(&cx, &env.work).await?;
        Ok((early, id))
    }));
    let (early, id) = exit.outcome.unwrap();
    let error = early.unwrap_err();
    assert!(
        format!("{error:?}").contains("initialization must complete"),
        "{error:?}"
    );
    assert!(!id.is_empty());
    assert!(exit.status.success(), "{}", exit.stderr);
}

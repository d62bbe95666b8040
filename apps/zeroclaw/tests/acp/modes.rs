//! ACP session modes: `session/new` and `session/load` answer the modes (`currentModeId`,
//! `availableModes`), the editor's `session/set_mode` sets the daemon's mode, and a change
//! made elsewhere (another client) reaches the editor as `current_mode_update`.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, LoadSessionRequest, NewSessionRequest, SetSessionModeRequest,
};
use serde_json::json;

/// The `currentModeId` of every `current_mode_update` the editor saw.
fn mode_updates(seen: &Seen) -> Vec<String> {
    seen.json()
        .iter()
        .filter(|u| u["sessionUpdate"] == "current_mode_update")
        .map(|u| u["currentModeId"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn an_editor_sees_the_modes_sets_one_and_follows_a_change_made_elsewhere() {
    let env = Env::new("", "");
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await?;
        let new = cx
            .send_request(NewSessionRequest::new(&env.work))
            .block_task()
            .await?;
        let offered = serde_json::to_value(&new.modes).unwrap();
        let session = new.session_id.clone();
        cx.send_request(SetSessionModeRequest::new(session.clone(), "plan"))
            .block_task()
            .await?;
        editor
            .wait("the editor's own change", |seen| {
                mode_updates(seen) == ["plan"]
            })
            .await;
        let unknown = cx
            .send_request(SetSessionModeRequest::new(session.clone(), "yolo"))
            .block_task()
            .await
            .unwrap_err();

        // Another client of the daemon changes it: the editor follows.
        let mut client = env.daemon.client();
        client.call("session/load", json!({"sessionId": session.0.to_string()}));
        let listed = client.call("session/list", json!({}));
        client.call(
            "session/set_mode",
            json!({"sessionId": session.0.to_string(), "mode": "accept-edits"}),
        );
        editor
            .wait("the change made elsewhere", |seen| {
                mode_updates(seen) == ["plan", "accept-edits"]
            })
            .await;
        let loaded = cx
            .send_request(LoadSessionRequest::new(session.clone(), &env.work))
            .block_task()
            .await?;
        let reloaded = serde_json::to_value(&loaded.modes).unwrap();
        Ok((offered, listed, unknown, reloaded))
    }));
    let (offered, listed, unknown, reloaded) = exit.outcome.unwrap();
    assert_eq!(offered["currentModeId"], "default", "{offered}");
    let ids: Vec<&str> = offered["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["default", "accept-edits", "plan", "auto"]);
    assert!(offered["availableModes"][0]["name"].is_string());
    assert_eq!(listed["sessions"][0]["mode"], "plan");
    let unknown = serde_json::to_value(&unknown).unwrap();
    assert_eq!(unknown["code"], -32602, "{unknown}");
    assert!(unknown.to_string().contains("accept-edits"), "{unknown}");
    assert_eq!(reloaded["currentModeId"], "accept-edits", "{reloaded}");
}

//! A session's title for the editor: `session_info_update` when it opens a titled session,
//! and ACP's (unstable) `session/set_title` as our `session/rename`.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, LoadSessionRequest, NewSessionRequest, SetSessionTitleRequest,
};
use serde_json::json;

#[test]
fn set_title_renames_the_session_and_the_editor_is_told() {
    let env = Env::new("", "");
    let editor = Editor::new(Permission::Hold);
    let mut probe = env.daemon.client();
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let init = initialize(&cx, ClientCapabilities::new()).await?;
        let session = cx
            .send_request(NewSessionRequest::new(&env.work))
            .block_task()
            .await?
            .session_id;
        let set = cx
            .send_request(SetSessionTitleRequest::new(
                session.clone(),
                "  Fix the parser  ",
            ))
            .block_task()
            .await?;
        editor
            .wait("the session_info_update", |seen| {
                seen.kinds().contains(&"session_info_update".to_owned())
            })
            .await;
        let empty = cx
            .send_request(SetSessionTitleRequest::new(session.clone(), "   "))
            .block_task()
            .await;
        let unknown = cx
            .send_request(SetSessionTitleRequest::new("no-such-session", "x"))
            .block_task()
            .await;
        Ok((init, session.0.to_string(), set.title, empty, unknown))
    }));
    let (init, session, title, empty, unknown) = exit.outcome.unwrap();
    let caps = serde_json::to_value(&init.agent_capabilities).unwrap();
    assert!(caps["sessionCapabilities"]["title"].is_object(), "{caps}");
    assert_eq!(title, "Fix the parser", "answered as stored: trimmed");
    let update = editor.seen().json().pop().unwrap();
    assert_eq!(
        update,
        json!({"sessionUpdate": "session_info_update", "title": "Fix the parser"})
    );
    assert_eq!(i32::from(empty.unwrap_err().code), -32602);
    let unknown = unknown.unwrap_err();
    assert_eq!(i32::from(unknown.code), -32002, "{unknown:?}");
    let listed = probe.call("session/list", json!({}));
    assert_eq!(listed["sessions"][0]["sessionId"], session.as_str());
    assert_eq!(listed["sessions"][0]["title"], "Fix the parser");
}

#[test]
fn loading_a_titled_session_tells_the_editor_its_title() {
    let env = Env::new("", "");
    let mut probe = env.daemon.client();
    let session = probe.new_session(&env.work);
    probe.call(
        "session/rename",
        json!({"sessionId": session, "title": "Named elsewhere"}),
    );
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await?;
        cx.send_request(LoadSessionRequest::new(session.clone(), &env.work))
            .block_task()
            .await?;
        editor
            .wait("the session_info_update", |seen| {
                seen.kinds().contains(&"session_info_update".to_owned())
            })
            .await;
        Ok(())
    }));
    exit.outcome.unwrap();
    let listed = probe.call("session/list", json!({}));
    let update = editor
        .seen()
        .json()
        .into_iter()
        .find(|u| u["sessionUpdate"] == "session_info_update")
        .unwrap();
    assert_eq!(update["title"], "Named elsewhere");
    assert_eq!(update["updatedAt"], listed["sessions"][0]["updatedAt"]);
}

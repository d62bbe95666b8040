//! ACP's session lifecycle with the official SDK: `session/resume` reattaches without the
//! history, `session/close` cancels the editor's prompt and detaches (the daemon lets the
//! session go), `session/delete`, `session/set_config_option` sets the model and the mode,
//! and `$/cancel_request` of a prompt cancels its turn.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{
    CloseSessionRequest, DeleteSessionRequest, ListSessionsRequest, ResumeSessionRequest,
    SetSessionConfigOptionRequest, StopReason,
};
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn a_resumed_session_gets_no_history_and_goes_on() {
    let env = Env::new("", "");
    env.fake.push(openai::text(&["first answer"]));
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        cx.send_request(text_prompt(&session, "first"))
            .block_task()
            .await?;
        Ok(session)
    }));
    let session = exit.outcome.unwrap();

    env.fake.push(openai::text(&["second answer"]));
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        initialize(&cx, Default::default()).await?;
        let listed = cx
            .send_request(ListSessionsRequest::new())
            .block_task()
            .await?;
        assert!(
            listed
                .sessions
                .iter()
                .any(|s| s.session_id.0.as_ref() == session)
        );
        let resumed = cx
            .send_request(ResumeSessionRequest::new(session.clone(), env.work.clone()))
            .block_task()
            .await?;
        // No replay: nothing was sent before the answer.
        assert_eq!(
            editor.seen().updates.len(),
            0,
            "{:?}",
            editor.seen().kinds()
        );
        let answer = cx
            .send_request(text_prompt(&session, "second"))
            .block_task()
            .await?;
        Ok((resumed, answer.stop_reason))
    }));
    let (resumed, stop) = exit.outcome.unwrap();
    assert_eq!(stop, StopReason::EndTurn);
    let resumed = serde_json::to_value(&resumed).unwrap();
    assert_eq!(resumed["modes"]["currentModeId"], "default");
    assert_eq!(
        editor.seen().text_of("agent_message_chunk"),
        "second answer"
    );
    // The second request carries the whole conversation: the session went on.
    let body = &env.fake.wait_for_requests(2)[1].body;
    assert!(body.to_string().contains("first answer"), "{body}");
}

#[test]
fn a_closed_session_is_let_go_by_the_daemon_and_can_be_deleted() {
    let env = Env::new("", "");
    let editor = Editor::new(Permission::Hold);
    let mut probe = env.daemon.client();
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        let before = probe.call("status", json!({}))["sessions"]["loaded"].clone();
        cx.send_request(CloseSessionRequest::new(session.clone()))
            .block_task()
            .await?;
        let after = probe.call("status", json!({}))["sessions"]["loaded"].clone();
        // A prompt to it now needs a load or resume first.
        let refused = cx
            .send_request(text_prompt(&session, "still there?"))
            .block_task()
            .await;
        cx.send_request(DeleteSessionRequest::new(session.clone()))
            .block_task()
            .await?;
        Ok((session, before, after, refused.is_err()))
    }));
    let (session, before, after, refused) = exit.outcome.unwrap();
    assert_eq!(before, 1);
    assert_eq!(after, 0, "the closed session stayed in the daemon's memory");
    assert!(refused);
    let listed = probe.call("session/list", json!({}));
    assert!(
        !listed["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["sessionId"] == session.as_str()),
        "{listed}"
    );
    assert!(exit.status.success(), "{}", exit.stderr);
}

#[test]
fn config_options_set_the_model_and_the_mode() {
    let env = Env::new("", "");
    env.fake.push(openai::text(&["ok"]));
    let editor = Editor::new(Permission::Hold);
    let mut probe = env.daemon.client();
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        initialize(&cx, Default::default()).await?;
        let new = cx
            .send_request(agent_client_protocol::v1::schema::NewSessionRequest::new(
                env.work.clone(),
            ))
            .block_task()
            .await?;
        let session = new.session_id.0.to_string();
        let mode = cx
            .send_request(SetSessionConfigOptionRequest::new(
                session.clone(),
                "mode",
                "plan",
            ))
            .block_task()
            .await?;
        let model = cx
            .send_request(SetSessionConfigOptionRequest::new(
                session.clone(),
                "model",
                "bigger-model",
            ))
            .block_task()
            .await?;
        let unknown = cx
            .send_request(SetSessionConfigOptionRequest::new(
                session.clone(),
                "mode",
                "yolo",
            ))
            .block_task()
            .await;
        cx.send_request(text_prompt(&session, "plan"))
            .block_task()
            .await?;
        Ok((new, mode, model, unknown, session))
    }));
    let (new, mode, model, unknown, session) = exit.outcome.unwrap();
    let new = serde_json::to_value(&new).unwrap();
    let ids: Vec<&str> = new["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["model", "mode"]);
    assert_eq!(new["configOptions"][0]["currentValue"], "fake");
    let mode = serde_json::to_value(&mode).unwrap();
    assert_eq!(mode["configOptions"][1]["currentValue"], "plan");
    let model = serde_json::to_value(&model).unwrap();
    assert_eq!(model["configOptions"][0]["currentValue"], "bigger-model");
    assert_eq!(model["configOptions"][1]["currentValue"], "plan");
    let unknown = unknown.unwrap_err();
    assert_eq!(i32::from(unknown.code), -32602, "{unknown:?}");
    // The daemon has both, and the turn ran with them.
    let body = &env.fake.wait_for_requests(1)[0].body;
    assert_eq!(body["model"], "bigger-model");
    let listed = probe.call("session/list", json!({}));
    let summary = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionId"] == session.as_str())
        .unwrap()
        .clone();
    assert_eq!(summary["mode"], "plan");
    // The mode change also came as a config option update.
    assert!(
        editor
            .seen()
            .kinds()
            .contains(&"config_option_update".to_owned()),
        "{:?}",
        editor.seen().kinds()
    );
}

#[test]
fn cancel_request_of_a_prompt_cancels_its_turn() {
    let env = Env::new("", "");
    env.fake
        .push(openai::Builder::new().text("partial").stall().build());
    let editor = Editor::new(Permission::Hold);
    let mut probe = env.daemon.client();
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        let prompt = cx.send_request(text_prompt(&session, "talk"));
        let withdraw = prompt.cancellation_handle();
        editor
            .wait("the first chunk", |seen| {
                seen.kinds().contains(&"agent_message_chunk".to_owned())
            })
            .await;
        let _ = withdraw.cancel();
        let answer = guard("the withdrawn prompt's answer", prompt.block_task()).await?;
        Ok((session, answer.stop_reason))
    }));
    let (session, stop) = exit.outcome.unwrap();
    // The bridge answers once the daemon's turn ended: ACP's outcome of a cancelled prompt.
    assert_eq!(stop, StopReason::Cancelled);
    let turns = probe.call(
        "session/messages",
        json!({"sessionId": session, "limit": 10}),
    );
    let text = turns.to_string();
    assert!(text.contains("cancelled"), "{turns}");
}

#[test]
fn close_cancels_the_editors_prompt_running_in_the_session() {
    let env = Env::new("", "");
    env.fake
        .push(openai::Builder::new().text("partial").stall().build());
    let editor = Editor::new(Permission::Hold);
    let mut probe = env.daemon.client();
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        let prompt = cx.send_request(text_prompt(&session, "talk"));
        editor
            .wait("the first chunk", |seen| {
                seen.kinds().contains(&"agent_message_chunk".to_owned())
            })
            .await;
        let closed = cx.send_request(CloseSessionRequest::new(session.clone()));
        // The stalled turn would go on forever: only the close's cancel ends it.
        let stop = guard("the prompt's answer", prompt.block_task()).await?;
        guard("the close's answer", closed.block_task()).await?;
        Ok((session, stop.stop_reason))
    }));
    let (session, stop) = exit.outcome.unwrap();
    assert_eq!(stop, StopReason::Cancelled);
    // The daemon stored the turn as cancelled.
    let turns = probe.call(
        "session/messages",
        json!({"sessionId": session, "limit": 10}),
    );
    assert!(turns.to_string().contains("cancelled"), "{turns}");
}

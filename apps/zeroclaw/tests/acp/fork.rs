//! Issue 31: ACP's (unstable) `session/fork` maps to the daemon's `session/fork`: the bridge
//! advertises it, the fork gets a new id with the conversation so far, and the editor
//! prompts in it while the original is untouched.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ForkSessionRequest, NewSessionRequest, StopReason,
};
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn an_editors_session_fork_continues_the_conversation_in_a_new_session() {
    let env = Env::new("", "");
    env.fake.push(openai::text(&["First answer."]));
    env.fake.push(openai::text(&["Answer in the fork."]));
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let init = initialize(&cx, ClientCapabilities::new()).await?;
        let advertised = serde_json::to_value(&init.agent_capabilities).unwrap();
        let session = cx
            .send_request(NewSessionRequest::new(&env.work))
            .block_task()
            .await?
            .session_id;
        cx.send_request(text_prompt(&session.0, "first question"))
            .block_task()
            .await?;
        let fork = cx
            .send_request(ForkSessionRequest::new(session.clone(), &env.work))
            .block_task()
            .await?
            .session_id;
        let answer = cx
            .send_request(text_prompt(&fork.0, "question in the fork"))
            .block_task()
            .await?;
        Ok((
            advertised,
            session.0.to_string(),
            fork.0.to_string(),
            answer.stop_reason,
        ))
    }));
    let (advertised, session, fork, stop) = exit.outcome.unwrap();
    assert!(
        advertised["sessionCapabilities"]["fork"].is_object(),
        "{advertised}"
    );
    assert_ne!(session, fork);
    assert_eq!(stop, StopReason::EndTurn);
    let body = env.fake.wait_for_requests(2)[1].body.to_string();
    assert!(
        body.contains("first question") && body.contains("First answer."),
        "the fork's model is sent the conversation so far: {body}"
    );
    let mut client = env.daemon.client();
    let original = client.call("session/messages", json!({"sessionId": session}));
    assert_eq!(original["total"], 2, "the original is untouched");
    let forked = client.call("session/messages", json!({"sessionId": fork}));
    assert_eq!(forked["total"], 4);
}

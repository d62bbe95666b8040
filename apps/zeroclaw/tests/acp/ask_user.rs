//! `ask_user`: our `elicitation/create` is the editor's ACP form elicitation when it
//! declared one; without it the agent is told no one can answer.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ElicitationCapabilities, ElicitationFormCapabilities, NewSessionRequest,
    StopReason,
};
use zeroclaw_testkit::openai;

#[test]
fn a_question_goes_to_the_editor_and_its_answer_to_the_model() {
    let env = Env::new("", "");
    env.fake
        .push(ask("call_1", "Which colour?", Some(&["red", "blue"])));
    env.fake.push(openai::text(&["Blue it is."]));
    let editor = Editor::new(Permission::Hold);
    *editor.answer.lock().unwrap() = Some("blue".into());
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let capabilities = ClientCapabilities::new()
            .elicitation(ElicitationCapabilities::new().form(ElicitationFormCapabilities::new()));
        initialize(&cx, capabilities).await?;
        let session = cx
            .send_request(NewSessionRequest::new(&env.work))
            .block_task()
            .await?;
        cx.send_request(text_prompt(&session.session_id.0, "pick a colour"))
            .block_task()
            .await
    }));
    assert_eq!(exit.outcome.unwrap().stop_reason, StopReason::EndTurn);
    let seen = editor.seen();
    assert_eq!(seen.questions.len(), 1);
    let question = serde_json::to_value(&seen.questions[0]).unwrap();
    assert_eq!(question["mode"], "form");
    assert_eq!(question["message"], "Which colour?");
    assert_eq!(
        question["requestedSchema"]["properties"]["answer"]["enum"],
        serde_json::json!(["red", "blue"])
    );
    let body = &env.fake.wait_for_requests(2)[1].body;
    assert_eq!(tool_content(body, "call_1"), "blue");
}

#[test]
fn without_elicitation_the_agent_is_told_no_one_can_answer() {
    let env = Env::new("", "");
    env.fake.push(ask("call_1", "Which colour?", None));
    env.fake.push(openai::text(&["I will assume blue."]));
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        cx.send_request(text_prompt(&session, "pick a colour"))
            .block_task()
            .await
    }));
    assert_eq!(exit.outcome.unwrap().stop_reason, StopReason::EndTurn);
    assert!(editor.seen().questions.is_empty());
    let body = &env.fake.wait_for_requests(2)[1].body;
    assert!(
        tool_content(body, "call_1").contains("cannot show questions"),
        "{body}"
    );
}

//! Our `context_compacted` as ACP's `compaction_update`, sent only to an editor that
//! declared `session.compaction` (ACP forbids it otherwise): completed, the summary as its
//! text, the messages folded in `_meta.zeroclaw`.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ClientSessionCapabilities, CompactionCapabilities, NewSessionRequest,
    ResumeSessionRequest,
};
use serde_json::json;
use zeroclaw_testkit::openai;

/// What the summarising requests (and only they) say.
const SUMMARISING: &str = "You compact the conversation";

#[test]
fn a_compaction_reaches_only_an_editor_that_declared_them() {
    let env = Env::new("", "");
    env.fake
        .answer_when(SUMMARISING, openai::text(&["SUMMARY for the editor."]));
    let mut probe = env.daemon.client();

    // An editor without the capability: the compaction is not sent to it.
    for n in 0..3 {
        env.fake.push(openai::text(&[&format!("answer {n}")]));
    }
    let plain = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, plain.clone(), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await?;
        let session = cx
            .send_request(NewSessionRequest::new(&env.work))
            .block_task()
            .await?
            .session_id
            .0
            .to_string();
        for n in 0..2 {
            cx.send_request(text_prompt(&session, &format!("prompt {n}")))
                .block_task()
                .await?;
        }
        probe.call("session/load", json!({"sessionId": session}));
        let folded = probe.call("session/compact", json!({"sessionId": session}));
        assert_eq!(folded["messagesFolded"], 2, "{folded}");
        // The pump forwards in order: a turn's answer comes after what preceded it.
        cx.send_request(text_prompt(&session, "prompt 2"))
            .block_task()
            .await?;
        Ok(session)
    }));
    let session = exit.outcome.unwrap();
    assert!(
        !plain
            .seen()
            .kinds()
            .contains(&"compaction_update".to_owned()),
        "{:?}",
        plain.seen().kinds()
    );

    // An editor that declared them gets it.
    env.fake.push(openai::text(&["answer 3"]));
    let editor = Editor::new(Permission::Hold);
    let caps = ClientCapabilities::new()
        .session(ClientSessionCapabilities::new().compaction(CompactionCapabilities::new()));
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        initialize(&cx, caps).await?;
        cx.send_request(ResumeSessionRequest::new(session.clone(), &env.work))
            .block_task()
            .await?;
        cx.send_request(text_prompt(&session, "prompt 3"))
            .block_task()
            .await?;
        let folded = probe.call("session/compact", json!({"sessionId": session}));
        editor
            .wait("the compaction_update", |seen| {
                seen.kinds().contains(&"compaction_update".to_owned())
            })
            .await;
        Ok(folded["messagesFolded"].clone())
    }));
    let folded = exit.outcome.unwrap();
    assert!(folded.as_u64().unwrap() > 0, "{folded}");
    let seen = editor.seen();
    let update = seen
        .json()
        .into_iter()
        .find(|u| u["sessionUpdate"] == "compaction_update")
        .unwrap();
    assert_eq!(
        update,
        json!({
            "sessionUpdate": "compaction_update",
            "compactionId": "compaction-1",
            "status": "completed",
            "summary": [{"type": "text", "text": "SUMMARY for the editor."}],
            "_meta": {"zeroclaw": {"messagesFolded": folded}}
        })
    );
}

//! The editor leaves: closing the agent's stdin ends the bridge with status 0 while the
//! turn goes on in the daemon and is stored.

use crate::common::*;
use crate::editor::*;
use serde_json::json;
use zeroclaw_testkit::{Gate, openai};

#[test]
fn an_editor_that_exits_mid_turn_leaves_the_turn_to_complete_in_the_daemon() {
    let env = Env::new("", "");
    let gate = Gate::new();
    env.fake.push(
        openai::Builder::new()
            .text("Started, ")
            .wait_for(&gate)
            .text("and finished alone.")
            .build(),
    );
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        // The prompt is sent and the turn streams; the editor then goes away. (Detached: the
        // SDK withdraws a request whose handle is dropped with `$/cancel_request`, which
        // cancels the turn; an editor that exits sends nothing.)
        cx.send_request(text_prompt(&session, "take your time"))
            .detach();
        editor
            .wait("the first chunk", |seen| {
                seen.text_of("agent_message_chunk") == "Started, "
            })
            .await;
        Ok(session)
    }));
    let session = exit.outcome.unwrap();
    assert!(
        exit.status.success(),
        "exit {:?}: {}",
        exit.status,
        exit.stderr
    );
    gate.open();
    let line = env.daemon.wait_for_log("turn ended");
    assert!(line.contains("end_turn"), "{line}");
    let mut client = env.daemon.client();
    let messages = client.messages(&session);
    assert_eq!(kinds(&messages), ["user", "assistant"]);
    assert_eq!(messages[1]["text"], "Started, and finished alone.");
    let loaded = client.call("session/load", json!({"sessionId": session}));
    assert_eq!(loaded["running"], false);
}

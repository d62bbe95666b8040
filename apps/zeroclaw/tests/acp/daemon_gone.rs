//! The daemon goes away: the prompt in flight is answered with a clear error, each open
//! session gets an error notice, and the bridge exits non-zero saying why.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ClientSessionCapabilities, NewSessionRequest, NoticeCapabilities,
    SessionUpdate,
};

#[test]
fn a_daemon_that_goes_away_fails_the_prompt_and_the_bridge_exits_non_zero() {
    let mut env = Env::new("", "");
    let marker = env.work.join("never");
    env.fake
        .push(bash_call("call_1", &touch_command(&marker), 2));
    let editor = Editor::new(Permission::Hold);
    let daemon = &mut env.daemon;
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let capabilities = ClientCapabilities::new()
            .session(ClientSessionCapabilities::new().notices(NoticeCapabilities::new()));
        initialize(&cx, capabilities).await?;
        let session = cx
            .send_request(NewSessionRequest::new(&env.work))
            .block_task()
            .await?
            .session_id
            .0
            .to_string();
        let prompt = cx.send_request(text_prompt(&session, "touch it"));
        editor
            .wait("the permission request", |seen| seen.permissions.len() == 1)
            .await;
        tokio::task::block_in_place(|| daemon.kill());
        let answer = guard("the prompt's answer", prompt.block_task()).await;
        // The notice came before the answer.
        let noticed = editor
            .seen()
            .updates
            .iter()
            .any(|n| matches!(n.update, SessionUpdate::Notice(_)));
        Ok((answer, noticed))
    }));
    let (answer, noticed) = exit.outcome.unwrap();
    assert!(noticed, "no notice; agent's stderr: {}", exit.stderr);
    let error = answer.unwrap_err();
    assert!(
        format!("{error:?}").contains("daemon went away"),
        "{error:?}"
    );
    assert!(!exit.status.success());
    assert!(exit.stderr.contains("daemon went away"), "{}", exit.stderr);
}

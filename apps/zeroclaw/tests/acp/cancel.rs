//! `session/cancel`, a notification: the running turn stops and the pending prompt answers
//! `cancelled`; a permission request the editor holds is answered `cancelled` and refused.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{CancelNotification, StopReason};
use zeroclaw_testkit::openai;

#[cfg(unix)]
#[test]
fn cancel_during_a_tool_stops_it_and_the_prompt_answers_cancelled() {
    let env = Env::new("", BASH_ALLOWED);
    let pid_file = env.work.join("shell.pid");
    env.fake.push(bash_call(
        "call_long",
        &format!(
            "echo $$ > {}.tmp && mv {0}.tmp {0}; sleep 300",
            pid_file.display()
        ),
        2,
    ));
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        let prompt = cx.send_request(text_prompt(&session, "run something long"));
        let pid = tokio::task::spawn_blocking({
            let pid_file = pid_file.clone();
            move || wait_for_pid_file(&pid_file)
        })
        .await
        .unwrap();
        cx.send_notification(CancelNotification::new(session))?;
        let answer = guard("the cancelled prompt's answer", prompt.block_task()).await?;
        Ok((answer.stop_reason, pid))
    }));
    let (stop, pid) = exit.outcome.unwrap();
    assert_eq!(stop, StopReason::Cancelled);
    poll_until("the cancelled command's shell to exit", || {
        process_gone(pid)
    });
    let seen = editor.seen();
    let updates = seen.json();
    let result = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update")
        .expect("the cancelled call's update");
    assert_eq!(result["status"], "failed", "{result}");
    assert_eq!(
        env.fake.request_count(),
        1,
        "no model call after the cancel"
    );
    assert!(exit.status.success(), "{}", exit.stderr);
}

#[test]
fn cancel_while_a_permission_request_waits_refuses_the_call() {
    let env = Env::new("", "");
    let marker = env.work.join("ran");
    env.fake
        .push(bash_call("call_1", &touch_command(&marker), 2));
    env.fake.push(openai::text(&["never sent"]));
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        let prompt = cx.send_request(text_prompt(&session, "touch it"));
        editor
            .wait("the permission request", |seen| seen.permissions.len() == 1)
            .await;
        cx.send_notification(CancelNotification::new(session))?;
        // ACP's rule: the editor answers what it holds `cancelled`.
        editor.cancel_held();
        let answer = guard("the cancelled prompt's answer", prompt.block_task()).await?;
        Ok(answer.stop_reason)
    }));
    assert_eq!(exit.outcome.unwrap(), StopReason::Cancelled);
    assert!(!marker.exists(), "a cancelled call ran");
    assert_eq!(env.fake.request_count(), 1);
}

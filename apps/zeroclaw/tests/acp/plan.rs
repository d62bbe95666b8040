//! The agent's plan reaches the editor as ACP's `plan` session update, entry for entry.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{
    PlanEntryPriority, PlanEntryStatus, SessionUpdate, StopReason,
};
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn a_todo_write_call_is_forwarded_as_an_acp_plan() {
    let env = Env::new("", "");
    env.fake.push(tool_call(
        "call_1",
        "todo_write",
        json!({"todos": [
            {"content": "Read the code", "status": "completed"},
            {"content": "Fix the bug", "status": "in_progress", "priority": "high"},
        ]}),
        1,
    ));
    env.fake.push(openai::text(&["planned"]));
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        let answer = cx
            .send_request(text_prompt(&session, "plan it"))
            .block_task()
            .await?;
        let seen = editor.seen();
        assert!(
            seen.kinds().contains(&"plan".to_owned()),
            "{:?}",
            seen.kinds()
        );
        let plan = seen
            .updates
            .iter()
            .find_map(|n| match &n.update {
                SessionUpdate::Plan(plan) => Some(plan.clone()),
                _ => None,
            })
            .unwrap();
        let entries: Vec<_> = plan
            .entries
            .iter()
            .map(|e| (e.content.as_str(), e.status.clone(), e.priority.clone()))
            .collect();
        assert_eq!(
            entries,
            [
                (
                    "Read the code",
                    PlanEntryStatus::Completed,
                    PlanEntryPriority::Medium
                ),
                (
                    "Fix the bug",
                    PlanEntryStatus::InProgress,
                    PlanEntryPriority::High
                ),
            ]
        );
        Ok(answer.stop_reason)
    }));
    assert_eq!(exit.outcome.unwrap(), StopReason::EndTurn);
    assert!(exit.status.success(), "{}", exit.stderr);
}

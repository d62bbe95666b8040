//! `todo_write`: the agent's plan, a checklist it keeps of its own steps.
//!
//! Each call gives the whole list (Claude Code's `TodoWrite` shape: `{todos: [{content,
//! status}]}`), which replaces the one before. The tool itself touches nothing: the turn
//! turns a successful call into a `plan` event and a stored `plan` message ([`plan`]), so
//! every attached client shows the list live and a replay shows it again.
//!
//! `activeForm` (Claude Code's present-tense label) is accepted so a model used to that
//! shape is not refused, and otherwise ignored: a plan entry is ACP's, which has no such
//! member. `priority` (ACP's `high`, `medium`, `low`) is optional and passed on.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use zeroclaw_protocol::events::{PlanEntry, PlanPriority, PlanStatus};

use super::{Tool, ToolContext, ToolOutput};
use crate::config::Policy;

/// The most entries a plan holds: a checklist, not a backlog.
const MAX_TODOS: usize = 100;
/// The longest entry, in bytes.
const MAX_CONTENT: usize = 2000;

pub(super) struct TodoWrite;

#[derive(Deserialize, JsonSchema)]
pub(super) struct Args {
    /// The whole checklist, in order; it replaces the previous one. An empty list clears it.
    todos: Vec<Todo>,
}

/// One step of the checklist.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Todo {
    /// What the step is, imperative and short, e.g. `Run the tests`.
    content: String,
    /// `pending`, `in_progress` (one at a time) or `completed`.
    #[schemars(extend("enum" = ["pending", "in_progress", "completed"]))]
    status: String,
    /// Optional: `high`, `medium` or `low`.
    #[schemars(extend("enum" = ["high", "medium", "low"]))]
    priority: Option<String>,
    /// Optional present-tense form of `content` (e.g. `Running the tests`); accepted and
    /// not shown.
    #[allow(dead_code)] // read by no one: accepted so Claude Code's shape is not refused
    active_form: Option<String>,
}

impl Tool for TodoWrite {
    const NAME: &'static str = "todo_write";
    const DESCRIPTION: &'static str = "Keep a checklist of the steps of the current task, shown live to the user. Call \
        it with the whole list each time (it replaces the previous one): when a task has \
        several steps, at the start; then mark a step `in_progress` before starting it (one \
        at a time) and `completed` as soon as it is done. Skip it for a trivial one-step task.";
    const READ_ONLY: bool = true;
    const APPROVAL: Policy = Policy::Allow;
    type Args = Args;

    fn check(&self, args: &Args) -> Result<(), String> {
        entries(args).map(|_| ())
    }

    async fn run(&self, args: Args, _ctx: &ToolContext) -> ToolOutput {
        match entries(&args) {
            Ok(entries) => ToolOutput::ok(summary(&entries)),
            Err(why) => ToolOutput::error(format!("invalid arguments for todo_write: {why}")),
        }
    }
}

/// The plan a successful `todo_write` call with `arguments` set: what the turn sends as
/// the `plan` event and stores. `None` for arguments that are not a valid call.
pub fn plan(arguments: &Value) -> Option<Vec<PlanEntry>> {
    let args = Args::deserialize(arguments).ok()?;
    entries(&args).ok()
}

fn entries(args: &Args) -> Result<Vec<PlanEntry>, String> {
    if args.todos.len() > MAX_TODOS {
        return Err(format!(
            "`todos` has {} entries; at most {MAX_TODOS}",
            args.todos.len()
        ));
    }
    args.todos
        .iter()
        .enumerate()
        .map(|(i, todo)| {
            let content = todo.content.trim();
            if content.is_empty() {
                return Err(format!("`todos[{i}].content` must not be empty"));
            }
            if content.len() > MAX_CONTENT {
                return Err(format!(
                    "`todos[{i}].content` is {} bytes; at most {MAX_CONTENT}",
                    content.len()
                ));
            }
            let status = match todo.status.as_str() {
                "pending" => PlanStatus::Pending,
                "in_progress" => PlanStatus::InProgress,
                "completed" => PlanStatus::Completed,
                other => {
                    return Err(format!(
                        "`todos[{i}].status` must be pending, in_progress or completed, got {other:?}"
                    ));
                }
            };
            let priority = match todo.priority.as_deref() {
                None => None,
                Some("high") => Some(PlanPriority::High),
                Some("medium") => Some(PlanPriority::Medium),
                Some("low") => Some(PlanPriority::Low),
                Some(other) => {
                    return Err(format!(
                        "`todos[{i}].priority` must be high, medium or low, got {other:?}"
                    ));
                }
            };
            Ok(PlanEntry {
                content: content.to_owned(),
                status,
                priority,
            })
        })
        .collect()
}

/// What the model reads back: the list as it now stands, and its counts.
fn summary(entries: &[PlanEntry]) -> String {
    if entries.is_empty() {
        return "The checklist is now empty.".to_owned();
    }
    let count = |s: PlanStatus| entries.iter().filter(|e| e.status == s).count();
    let mut text = format!(
        "The checklist now has {} steps ({} completed, {} in progress, {} pending):",
        entries.len(),
        count(PlanStatus::Completed),
        count(PlanStatus::InProgress),
        count(PlanStatus::Pending)
    );
    for entry in entries {
        let mark = match entry.status {
            PlanStatus::Pending => "[ ]",
            PlanStatus::InProgress => "[~]",
            PlanStatus::Completed => "[x]",
        };
        text.push_str(&format!("\n{mark} {}", entry.content));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ctx, run};
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn a_checklist_is_summarised_and_becomes_plan_entries() {
        let dir = tempfile::tempdir().unwrap();
        let args = json!({"todos": [
            {"content": "Read the code", "status": "completed"},
            {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
            {"content": "Run the tests", "status": "pending", "priority": "high"},
        ]});
        let out = run("todo_write", &args, &ctx(dir.path())).await;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(
            out.text,
            "The checklist now has 3 steps (1 completed, 1 in progress, 1 pending):\n\
             [x] Read the code\n[~] Fix the bug\n[ ] Run the tests"
        );
        let plan = plan(&args).unwrap();
        assert_eq!(plan.len(), 3);
        assert_eq!(plan[1].status, PlanStatus::InProgress);
        assert_eq!(plan[2].priority, Some(PlanPriority::High));
        assert_eq!(
            serde_json::to_value(&plan[2]).unwrap(),
            json!({"content": "Run the tests", "status": "pending", "priority": "high"})
        );
    }

    #[tokio::test]
    async fn a_bad_status_or_an_empty_step_is_refused_with_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let out = run(
            "todo_write",
            &json!({"todos": [{"content": "x", "status": "done"}]}),
            &c,
        )
        .await;
        assert!(out.is_error);
        assert!(
            out.text
                .contains("in `todos[0]`: `status` must be one of \"pending\", \"in_progress\""),
            "{}",
            out.text
        );
        let out = run(
            "todo_write",
            &json!({"todos": [{"content": "  ", "status": "pending"}]}),
            &c,
        )
        .await;
        assert!(out.is_error);
        assert!(out.text.contains("`todos[0].content` must not be empty"));
        let out = run("todo_write", &json!({"todos": [{"status": "pending"}]}), &c).await;
        assert!(out.is_error);
        assert!(
            out.text
                .contains("missing required string argument `content`")
        );
        let out = run("todo_write", &json!({"todos": []}), &c).await;
        assert_eq!(out.text, "The checklist is now empty.");
        assert_eq!(plan(&json!({"todos": [{"content": "x"}]})), None);
    }
}

//! A turn's subagents on screen (`task` calls, docs/protocol.md §13a): their events,
//! tagged with the call that runs them, are nested under it and collapsed.
//!
//! - The `task` call is a tool line as any other: `⏺ task  Read the notes (reader)`.
//! - While the child runs, its steps are not printed: the live line at the bottom says
//!   what it does (`subagent Read the notes · 2 tool calls · bash `ls``), as the status
//!   line says what the turn does; nothing of it stays in the scrollback.
//! - A question of the child (an approval) is shown in full, behind the `│` gutter and
//!   labelled as the subagent's, and answered as any approval (`session/approve` on the
//!   parent session, which passes it to the child).
//! - When the call's result arrives, the child's block is one summary line:
//!   `└ subagent Read the notes: 2 tool calls, 1 approval — answer: The notes say… ·
//!   /load 1a2b3c4d for its log`. The child session holds the whole log; `/load` (or
//!   `zerocode --session`) opens it.
//!
//! The child's text is never shown as the parent's answer: its answer is the call's
//! result, which the summary quotes.

use crate::summary::{one_line, summarize, task_header, truncate};
use crate::term::sanitize;
use serde_json::Value;
use zeroclaw_client::{Subagent, Update};

/// The gutter of a line nested under a `task` call.
pub const GUTTER: &str = "  │ ";
/// Subagents followed at once. Overflow rule: the events of one more (a turn with more
/// `task` calls running than this, which the daemon's `[agents] max_concurrent` and
/// `agent.max_tool_calls_per_step` make rare) are not counted; its summary still shows.
const MAX_TRACKED: usize = 64;
/// The longest description, agent name or step kept, in characters.
const MAX_LABEL: usize = 80;

/// The subagents of the turn on screen whose `task` call has not returned yet.
#[derive(Debug, Default)]
pub struct Subagents {
    running: Vec<Task>,
}

/// One `task` call and what its child did so far.
#[derive(Debug)]
struct Task {
    call_id: String,
    /// The call's `description`; empty when the call was not seen (a turn followed from
    /// its middle).
    description: String,
    child_session_id: Option<String>,
    tool_calls: usize,
    failed_calls: usize,
    approvals: usize,
    /// The child's latest step: `bash `ls``, `answering`, `plan 1/3 done`.
    latest: Option<String>,
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

impl Task {
    fn new(call_id: &str, description: String) -> Self {
        Self {
            call_id: call_id.to_owned(),
            description,
            child_session_id: None,
            tool_calls: 0,
            failed_calls: 0,
            approvals: 0,
            latest: None,
        }
    }

    /// `subagent Read the notes` (or `subagent` for a call not seen).
    fn name(&self) -> String {
        if self.description.is_empty() {
            "subagent".into()
        } else {
            format!("subagent {}", self.description)
        }
    }

    /// `2 tool calls (1 failed), 1 approval`.
    fn counts(&self) -> String {
        let mut text = if self.tool_calls == 0 {
            "no tool calls".to_owned()
        } else {
            plural(self.tool_calls, "tool call", "tool calls")
        };
        if self.failed_calls > 0 {
            text.push_str(&format!(" ({} failed)", self.failed_calls));
        }
        if self.approvals > 0 {
            text.push_str(", ");
            text.push_str(&plural(self.approvals, "approval", "approvals"));
        }
        text
    }
}

impl Subagents {
    /// Forgets every subagent (a turn starts).
    pub fn clear(&mut self) {
        self.running.clear();
    }

    /// A `task` call of the turn starts its child.
    pub fn started(&mut self, call_id: &str, input: &Value) {
        if self.running.len() >= MAX_TRACKED || self.find(call_id).is_some() {
            return;
        }
        self.running.push(Task::new(call_id, task_header(input)));
    }

    fn find(&self, call_id: &str) -> Option<usize> {
        self.running.iter().position(|t| t.call_id == call_id)
    }

    /// The task `subagent` belongs to; one is made for a call not seen start.
    fn task(&mut self, subagent: &Subagent) -> Option<&mut Task> {
        let at = match self.find(&subagent.parent_tool_call_id) {
            Some(at) => at,
            None if self.running.len() < MAX_TRACKED => {
                self.running
                    .push(Task::new(&subagent.parent_tool_call_id, String::new()));
                self.running.len() - 1
            }
            None => return None,
        };
        let task = &mut self.running[at];
        if task.child_session_id.is_none() {
            task.child_session_id.clone_from(&subagent.child_session_id);
        }
        Some(task)
    }

    /// Counts one event of a subagent's child, and keeps it as its latest step. (Its
    /// approval requests come as questions: [`Subagents::asked`].)
    pub fn event(&mut self, subagent: &Subagent, update: &Update) {
        let Some(task) = self.task(subagent) else {
            return;
        };
        let step = match update {
            Update::ToolCall {
                name, raw_input, ..
            } => {
                task.tool_calls += 1;
                let name = truncate(&sanitize(name), MAX_LABEL);
                let what = summarize(&name, raw_input, MAX_LABEL);
                Some(if what.is_empty() {
                    name
                } else {
                    format!("{name} `{what}`")
                })
            }
            Update::ToolResult { is_error, .. } => {
                if *is_error {
                    task.failed_calls += 1;
                }
                None
            }
            Update::AgentMessageChunk { .. } => Some("answering".into()),
            Update::AgentThoughtChunk { .. } => Some("thinking".into()),
            Update::Plan { entries } => {
                let done = entries
                    .iter()
                    .filter(|e| {
                        e.status == zeroclaw_client::protocol::events::PlanStatus::Completed
                    })
                    .count();
                Some(format!("plan {done}/{} done", entries.len()))
            }
            _ => None,
        };
        if step.is_some() {
            task.latest = step;
        }
    }

    /// The approval a subagent asks counts (it comes as a question, not an update).
    pub fn asked(&mut self, subagent: &Subagent, tool: &str) {
        if let Some(task) = self.task(subagent) {
            task.approvals += 1;
            task.latest = Some(format!(
                "asks to run {}",
                truncate(&sanitize(tool), MAX_LABEL)
            ));
        }
    }

    /// `subagent Read the notes asks:`, the line above a subagent's question.
    pub fn asks(&mut self, subagent: &Subagent) -> String {
        let name = self
            .task(subagent)
            .map_or_else(|| "subagent".to_owned(), |t| t.name());
        format!("{name} asks:")
    }

    /// Whether `call_id` is a running subagent's `task` call.
    pub fn is_running(&self, call_id: &str) -> bool {
        self.find(call_id).is_some()
    }

    /// What the running subagents do, for the live line; `None` when none runs.
    pub fn live(&self) -> Option<String> {
        match self.running.as_slice() {
            [] => None,
            [task] => {
                let mut text = format!("{} · {}", task.name(), task.counts());
                if let Some(latest) = &task.latest {
                    text.push_str(" · ");
                    text.push_str(latest);
                }
                Some(text)
            }
            tasks => {
                let calls: usize = tasks.iter().map(|t| t.tool_calls).sum();
                Some(format!(
                    "{} subagents · {}",
                    tasks.len(),
                    plural(calls, "tool call", "tool calls")
                ))
            }
        }
    }

    /// The `task` call `call_id` returned: its summary line (the `└` line, unstyled),
    /// and the subagent is forgotten.
    pub fn finished(&mut self, call_id: &str, output: &str, is_error: bool) -> String {
        let task = match self.find(call_id) {
            Some(at) => self.running.remove(at),
            None => Task::new(call_id, String::new()),
        };
        summary(&task, output, is_error)
    }
}

/// `└ subagent Read the notes: 2 tool calls, 1 approval — answer: The notes… · /load
/// 1a2b3c4d for its log`; a failed call says `failed:` and why.
fn summary(task: &Task, output: &str, is_error: bool) -> String {
    let first = one_line(&sanitize(output), 100);
    let outcome = match (is_error, first.is_empty()) {
        (true, _) => format!("failed: {first}"),
        (false, true) => "no answer".to_owned(),
        (false, false) => format!("answer: {first}"),
    };
    let mut line = format!("└ {}: {} — {outcome}", task.name(), task.counts());
    if let Some(child) = &task.child_session_id {
        let short = child.get(..8).unwrap_or(child);
        line.push_str(&format!(" · /load {short} for its log"));
    }
    line
}

/// A replayed `task` result (a replay carries no child events: they are stored in the
/// child session): `└ subagent answered: The notes… (+3 lines)`.
pub fn replayed(output: &str, is_error: bool) -> String {
    let text = sanitize(output);
    let first = truncate(text.trim().lines().next().unwrap_or_default(), 100);
    let more = text.trim().lines().count().saturating_sub(1);
    let mut line = if is_error {
        format!("└ subagent failed: {first}")
    } else {
        format!("└ subagent answered: {first}")
    };
    if more > 0 {
        line.push_str(&format!(" (+{more} lines)"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tag(call: &str) -> Subagent {
        Subagent {
            parent_tool_call_id: call.into(),
            child_session_id: Some("1a2b3c4d5e6f".into()),
        }
    }

    fn call(name: &str, input: Value) -> Update {
        Update::ToolCall {
            tool_call_id: "c".into(),
            name: name.into(),
            raw_input: input,
        }
    }

    #[test]
    fn a_task_is_headed_by_its_description_and_agent() {
        assert_eq!(
            task_header(
                &json!({"description": "Read the notes", "prompt": "…", "agent": "reader"})
            ),
            "Read the notes (reader)"
        );
        assert_eq!(task_header(&json!({"prompt": "x"})), "(no description)");
        // Escape sequences in a model's arguments never reach the terminal.
        assert_eq!(task_header(&json!({"description": "a\x1b[2Jb"})), "a[2Jb");
    }

    #[test]
    fn a_running_subagent_is_one_live_line_of_counts_and_its_latest_step() {
        let mut subagents = Subagents::default();
        assert_eq!(subagents.live(), None);
        subagents.started("t1", &json!({"description": "Run", "agent": "runner"}));
        assert_eq!(
            subagents.live().unwrap(),
            "subagent Run (runner) · no tool calls"
        );
        subagents.event(&tag("t1"), &call("bash", json!({"command": "ls -la"})));
        subagents.event(
            &tag("t1"),
            &Update::ToolResult {
                tool_call_id: "c".into(),
                name: "bash".into(),
                raw_output: json!("boom"),
                is_error: true,
            },
        );
        subagents.event(&tag("t1"), &call("read_file", json!({"path": "a.rs"})));
        assert_eq!(
            subagents.live().unwrap(),
            "subagent Run (runner) · 2 tool calls (1 failed) · read_file `a.rs`"
        );
        // A second one: the live line counts them together.
        subagents.started("t2", &json!({"description": "Other"}));
        subagents.event(&tag("t2"), &call("grep", json!({"pattern": "x"})));
        assert_eq!(subagents.live().unwrap(), "2 subagents · 3 tool calls");
    }

    #[test]
    fn a_finished_subagent_is_one_summary_line_naming_its_session() {
        let mut subagents = Subagents::default();
        subagents.started("t1", &json!({"description": "Run"}));
        subagents.event(&tag("t1"), &call("bash", json!({"command": "ls"})));
        subagents.asked(&tag("t1"), "bash");
        assert_eq!(subagents.asks(&tag("t1")), "subagent Run asks:");
        let line = subagents.finished("t1", "It printed child-ran.\nMore detail.", false);
        assert_eq!(
            line,
            "└ subagent Run: 1 tool call, 1 approval — answer: It printed child-ran. … · /load 1a2b3c4d for its log"
        );
        assert!(!subagents.is_running("t1"));
        assert_eq!(subagents.live(), None);
        // A call that failed before any child ran: no session to name.
        assert_eq!(
            subagents.finished("t9", "task: there is no agent \"x\"", true),
            "└ subagent: no tool calls — failed: task: there is no agent \"x\""
        );
    }

    #[test]
    fn events_of_a_call_not_seen_start_are_counted_under_it() {
        let mut subagents = Subagents::default();
        subagents.event(&tag("t1"), &call("bash", json!({"command": "ls"})));
        assert!(subagents.is_running("t1"));
        assert_eq!(
            subagents.live().unwrap(),
            "subagent · 1 tool call · bash `ls`"
        );
    }

    #[test]
    fn at_most_so_many_subagents_are_followed() {
        let mut subagents = Subagents::default();
        for i in 0..MAX_TRACKED + 5 {
            subagents.event(&tag(&format!("t{i}")), &call("bash", json!({})));
        }
        assert_eq!(subagents.running.len(), MAX_TRACKED);
    }

    #[test]
    fn a_replayed_task_result_is_one_line() {
        assert_eq!(
            replayed("three files\nsrc/a.rs\nsrc/b.rs\n", false),
            "└ subagent answered: three files (+2 lines)"
        );
        assert_eq!(replayed("cancelled", true), "└ subagent failed: cancelled");
    }
}

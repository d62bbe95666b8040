//! `task`: hands a piece of work to a subagent, a child session that runs to its end with
//! its own context and its profile's tools; its final answer is the call's result.
//!
//! Only its definition and arguments live here: running a child session needs the turn
//! (its session, its cancellation, the clients its events go to), so the turn runs the
//! call itself (`turn/subagent.rs`) once it passed the checks every call passes. Its
//! description lists the agent profiles of the session's project, so it is built for
//! each turn ([`definition`]) rather than once like the built-in tools'.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Tool, ToolContext, ToolOutput};
use crate::config::Policy;
use crate::project::AgentProfile;

pub(super) struct TaskTool;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TaskArgs {
    /// A short title of the work (3 to 7 words), shown to the user.
    pub description: String,
    /// Everything the subagent needs to know: it sees nothing of this conversation. Say
    /// what to do and what to report back.
    pub prompt: String,
    /// The agent profile to run, by name (see the list in this tool's description);
    /// absent: a general-purpose subagent with your tools.
    pub agent: Option<String>,
}

impl Tool for TaskTool {
    const NAME: &'static str = "task";
    const DESCRIPTION: &'static str = "Hand a self-contained piece of work to a subagent: it \
        runs in a session of its own (same working directory and sandbox, a fresh context) \
        with the tools of its profile, and its final answer is this call's result. Use it for \
        side-investigations whose details you do not need to keep, so your context stays \
        clean. Several task calls in one response run at the same time.";
    const READ_ONLY: bool = false;
    const APPROVAL: Policy = Policy::Allow;
    type Args = TaskArgs;

    fn check(&self, args: &TaskArgs) -> Result<(), String> {
        if args.prompt.trim().is_empty() {
            return Err("`prompt` must not be blank".into());
        }
        Ok(())
    }

    async fn run(&self, _args: TaskArgs, _ctx: &ToolContext) -> ToolOutput {
        // The turn runs `task` calls (`turn/subagent.rs`): a call reaching here came from
        // elsewhere, which has no session to run a child in.
        ToolOutput::error("task: subagents run only inside a session's turn")
    }
}

/// The `task` tool as a turn offers it: its description ends with the agent profiles.
pub fn definition(agents: &[AgentProfile]) -> std::sync::Arc<dyn super::DynTool> {
    let mut description = TaskTool::DESCRIPTION.to_owned();
    description.push_str("\n\nAgents (`agent`):");
    for agent in agents {
        description.push_str(&format!("\n- {}: {}", agent.name, agent.description));
    }
    super::registry::erase_described(TaskTool, description)
}

/// A `task` call's arguments, which passed its definition's checks.
pub fn args(value: &serde_json::Value) -> Result<TaskArgs, String> {
    serde_json::from_value(value.clone()).map_err(|e| format!("invalid arguments for task: {e}"))
}

//! The session's permission mode applied to a turn (docs/protocol.md, "Permission modes"):
//! which tools a model call is offered, whether a call may run at all, and which calls run
//! without asking. Enforced here, at every model call and every tool call, never by the
//! prompt alone: a tool the mode does not offer is refused if called anyway.
//!
//! The mode is read from the session each time, so `session/set_mode` (or an approved
//! `exit_plan`, `exit_plan.rs`) takes effect at the next model call and the next tool call of
//! a running turn.

use super::step::Turn;
use super::target::Target;
use crate::config::{Config, Policy};
use crate::sandbox::{Mode as SandboxMode, Support, ToolSandbox};
use crate::tools::{DynTool, ToolDef, ToolSet};
use std::borrow::Cow;
use zeroclaw_protocol::methods::PermissionMode;

/// What the system prompt says while the session is in plan mode.
const PLANNING: &str = "\n\nYou are in plan mode: look around with the read-only tools, and \
     change nothing (no edits, no commands; the tools that could are not offered and are \
     refused). When you know what to do, call exit_plan with your plan, step by step; the \
     user is asked to start with it. If they accept, the session leaves plan mode and you \
     carry the plan out in this same turn; if not, keep planning with what they said.";

impl Turn<'_> {
    /// The tools offered to the next model call: in plan mode only the read-only ones, and
    /// `exit_plan`; otherwise all of `tools`.
    pub(super) fn offered_definitions<'s>(&self, tools: &'s ToolSet) -> Cow<'s, [ToolDef]> {
        if self.session.mode() != PermissionMode::Plan {
            return Cow::Borrowed(tools.definitions());
        }
        let mut offered: Vec<ToolDef> = tools
            .definitions()
            .iter()
            .filter(|d| d.read_only)
            .cloned()
            .collect();
        offered.push(super::exit_plan::definition());
        Cow::Owned(offered)
    }

    /// The system prompt's words for the mode (plan mode's), to add after it.
    pub(super) fn mode_prompt(&self) -> &'static str {
        match self.session.mode() {
            PermissionMode::Plan => PLANNING,
            _ => "",
        }
    }

    /// Why the mode refuses a call of `tool` outright; `None` if it may go on to its
    /// approval. Only plan mode refuses: a tool that is not read-only.
    pub(super) fn mode_refusal(&self, tool: &dyn DynTool) -> Option<String> {
        let def = tool.definition();
        if self.session.mode() != PermissionMode::Plan || def.read_only {
            return None;
        }
        Some(format!(
            "refused: the session is in plan mode, where only read-only tools run, and {} can \
             change things; it did not run. Finish the plan and call exit_plan with it: once the \
             user accepts it you may carry it out",
            def.name
        ))
    }

    /// The policy of a call as the mode changes it: `accept-edits` allows a call of a tool
    /// that writes a path inside the working directory (`write_file`, `edit_file`, any
    /// such tool), `auto` allows every call while the turn's sandbox confines its tools (or
    /// `[approvals] allow_auto_without_sandbox` says so). Only `ask` is lifted: `deny`
    /// stays, and a protected target, leaving the sandbox and an unattended run's rules are
    /// decided after this as always (`permission.rs`).
    pub(super) fn mode_policy(
        &self,
        policy: Policy,
        tool: &dyn DynTool,
        target: Option<&Target>,
    ) -> Policy {
        if policy != Policy::Ask || self.origin.unattended.is_some() {
            return policy;
        }
        let lifted = match self.session.mode() {
            PermissionMode::AcceptEdits => {
                !tool.definition().read_only && target.is_some_and(|t| !t.outside_cwd)
            }
            PermissionMode::Auto => {
                auto_refusal(self.env.config, &self.tools_context.sandbox).is_none()
            }
            PermissionMode::Plan | PermissionMode::Default => false,
        };
        if lifted { Policy::Allow } else { policy }
    }
}

/// Why `auto` may not be a session's mode: its tools would run unconfined (sandbox mode
/// `full`, or no sandbox on this machine) and `[approvals] allow_auto_without_sandbox` is
/// off. `None`: it may.
pub fn auto_refused(
    config: &Config,
    sandbox_mode: SandboxMode,
    support: &Support,
) -> Option<String> {
    if config.approvals.allow_auto_without_sandbox {
        return None;
    }
    let why = if sandbox_mode == SandboxMode::Full {
        "the session's sandbox mode is `full`, so its tools run unconfined".to_owned()
    } else {
        let reason = support.unavailable_reason()?;
        format!("the sandbox is unavailable on this machine ({reason}), so tools run unconfined")
    };
    Some(format!(
        "mode `auto` runs every tool call without asking, which is allowed only inside the \
         sandbox: {why}. Set [approvals] allow_auto_without_sandbox = true to allow it anyway"
    ))
}

/// [`auto_refused`] for a turn's sandbox.
fn auto_refusal(config: &Config, sandbox: &ToolSandbox) -> Option<String> {
    auto_refused(config, sandbox.policy.mode, &sandbox.support)
}

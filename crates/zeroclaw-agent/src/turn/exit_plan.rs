//! `exit_plan`: how the model leaves plan mode. Offered only in plan mode (`modes.rs`), it
//! carries the plan to the user as an approval request ("start with this plan?"): a yes
//! switches the session to `default` (`mode_changed`) and the turn goes on, now offered
//! every tool; a no (or no answer) leaves it in plan mode and the model is told to keep
//! planning. It is the turn's own tool, not the registry's: what it does is change the
//! session the turn runs in, through the turn's approval.

use super::step::Turn;
use crate::provider::ToolCall;
use crate::tools::{ToolDef, ToolOutput};
use serde_json::{Value, json};
use zeroclaw_protocol::methods::PermissionMode;

/// The tool's name.
pub(super) const EXIT_PLAN: &str = "exit_plan";

/// Why the user is asked, on the `approval_request`.
const QUESTION: &str = "start with this plan? (yes leaves plan mode for `default`)";

/// What the model is shown.
pub(super) fn definition() -> ToolDef {
    ToolDef {
        name: EXIT_PLAN.to_owned(),
        description: "Leave plan mode: present your plan to the user, who is asked whether to \
                      start with it. If they accept, the session switches to mode `default` and \
                      you carry the plan out (every tool is offered again); if not, you stay in \
                      plan mode and keep planning. Call it once the plan is complete."
            .to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "plan": {
                    "type": "string",
                    "description": "The plan, in Markdown: the steps you will take, the files you will change and how."
                }
            },
            "required": ["plan"],
            "additionalProperties": false
        }),
        read_only: true,
    }
}

impl Turn<'_> {
    /// One `exit_plan` call with its arguments (valid JSON); never fails, every problem is
    /// the result the model reads.
    pub(super) async fn exit_plan(&self, call: &ToolCall, args: &Value) -> ToolOutput {
        let mode = self.session.mode();
        if mode != PermissionMode::Plan {
            return ToolOutput::error(format!(
                "exit_plan is for plan mode, and the session is in mode `{mode}`: there is no \
                 plan mode to leave; go on with the task"
            ));
        }
        if let Err(invalid) = crate::tools::check_args(&definition(), args) {
            return invalid;
        }
        if args["plan"].as_str().is_none_or(|p| p.trim().is_empty()) {
            return ToolOutput::error("invalid arguments for exit_plan: `plan` is blank");
        }
        if let Err(refusal) = self
            .ask(call, None, Some(QUESTION.to_owned()), None, async { None })
            .await
        {
            return ToolOutput::error(format!(
                "{refusal}\nThe plan was not accepted: the session stays in plan mode. Keep \
                 planning (ask_user if something is unclear), then call exit_plan again with \
                 the plan changed"
            ));
        }
        let changed = self
            .session
            .change_mode(self.env.store, PermissionMode::Default, Some(self.id()))
            .await;
        match changed {
            Ok(Some(_)) => ToolOutput::ok(
                "The user accepted the plan: the session is now in mode `default` and every \
                 tool is offered. Carry the plan out now (changes may still ask the user's \
                 approval).",
            ),
            Ok(None) => ToolOutput::error("the session was deleted; the plan cannot start"),
            Err(e) => {
                tracing::error!(error = %e, session = %self.session.id, "could not store the mode an accepted plan set");
                ToolOutput::error(format!(
                    "the plan was accepted but the mode could not be stored ({e}); the session \
                     stays in plan mode"
                ))
            }
        }
    }
}

//! One tool call: checked, its path resolved and guarded (see `target.rs`), approved (see
//! `approval.rs`), then run with the turn's context (`tool_context.rs`).

use super::hooks::HookPermission;
use super::step::Turn;
use super::target::{self, Own, Target};
use crate::provider::ToolCall;
use crate::tools::preview::PreviewAt;
use crate::tools::{DynTool, ToolOutput, ToolSet};
use std::path::PathBuf;

impl Turn<'_> {
    /// Runs one tool call, asking for approval when its policy (or its target, or a
    /// `PreToolUse` hook's `hook` decision) says so. Never fails: every problem becomes an
    /// error result the model can read; the flag says whether the tool ran. A call that
    /// could not run (invalid arguments, a write confined away) is never asked about.
    pub(super) async fn execute(
        &self,
        call: &ToolCall,
        tools: &ToolSet,
        hook: Option<HookPermission>,
    ) -> (ToolOutput, bool) {
        let args = match &call.arguments {
            Ok(args) => args,
            Err(why) => return (ToolOutput::error(why.clone()), false),
        };
        if call.name == super::exit_plan::EXIT_PLAN {
            return (self.exit_plan(call, args).await, true);
        }
        let Some(tool) = tools.get(&call.name) else {
            let out = ToolOutput::error(format!(
                "there is no tool named {:?}; the tools are: {}",
                call.name,
                tools.names().join(", ")
            ));
            return (out, false);
        };
        if let Some(refusal) = self.mode_refusal(tool) {
            return (ToolOutput::error(refusal), false);
        }
        if let Some(refusal) = self.untrusted_skill_script(call, args) {
            return (ToolOutput::error(refusal), false);
        }
        let checked = match tool.check(args) {
            Ok(checked) => checked,
            Err(out) => return (out, false),
        };
        let target = match checked.path {
            Some(path) => match self.target(tool, path).await {
                Ok(target) => Some(target),
                Err(out) => return (out, false),
            },
            None => None,
        };
        // Computed only if the call is asked about (a future does nothing until awaited).
        let at = PreviewAt {
            cwd: PathBuf::from(&self.session.cwd),
            path: target.as_ref().map(|t| t.path.clone()),
        };
        let preview = tool.preview(args, &at);
        if let Err(refusal) = self
            .permission(
                call,
                tool,
                target.as_ref(),
                checked.escape.as_deref(),
                hook,
                preview,
            )
            .await
        {
            return (ToolOutput::error(refusal), false);
        }
        // `task` runs a child session, which needs the turn (`subagent.rs`).
        if call.name == crate::tools::TASK && self.offers_task() {
            return (self.task(call, args).await, true);
        }
        (tool.run(args, &self.tools_context).await, true)
    }

    /// The call's `path` resolved (on the blocking pool: it asks the file system); the
    /// refusal if it writes outside the cwd while `tools.confine_to_cwd` is on.
    async fn target(&self, tool: &dyn DynTool, path: String) -> Result<Target, ToolOutput> {
        let def = tool.definition();
        let (name, writes) = (def.name.clone(), !def.read_only);
        let cwd = PathBuf::from(&self.session.cwd);
        let data_dir = self.env.dirs.data_dir.clone();
        let config_file = self.env.dirs.config_file.clone();
        let resolved = tokio::task::spawn_blocking(move || {
            let own = Own {
                data_dir: &data_dir,
                config_file: &config_file,
            };
            (target::resolve(&cwd, &path, writes, &own), cwd)
        })
        .await;
        let (target, cwd) =
            resolved.map_err(|e| ToolOutput::error(format!("{name}: internal error: {e}")))?;
        if writes && target.outside_cwd && self.env.config.tools.confine_to_cwd {
            return Err(ToolOutput::error(format!(
                "{name}: {} is outside the working directory {}; writes are confined to it \
                 (tools.confine_to_cwd), so this call did not run. Write inside it, or ask \
                 the user to change the setting",
                target.path.display(),
                cwd.display()
            )));
        }
        Ok(target)
    }
}

//! One tool call: checked, its path resolved and guarded (see `target.rs`), approved (see
//! `approval.rs`), then run.

use super::ask_user::{Elicitation, NoOne};
use super::client_files::ClientFs;
use super::step::Turn;
use super::target::{self, Own, Target};
use crate::provider::ToolCall;
use crate::tools::preview::PreviewAt;
use crate::tools::spill::{self, SpillTo};
use crate::tools::{AskUser, ClientFiles, DynTool, ToolContext, ToolLimits, ToolOutput, ToolSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

impl Turn<'_> {
    /// Runs one tool call, asking for approval when its policy (or its target) says so.
    /// Never fails: every problem becomes an error result the model can read. A call that
    /// could not run (invalid arguments, a write confined away) is never asked about.
    pub(super) async fn execute(&self, call: &ToolCall, tools: &ToolSet) -> ToolOutput {
        let args = match &call.arguments {
            Ok(args) => args,
            Err(why) => return ToolOutput::error(why.clone()),
        };
        let Some(tool) = tools.get(&call.name) else {
            return ToolOutput::error(format!(
                "there is no tool named {:?}; the tools are: {}",
                call.name,
                tools.names().join(", ")
            ));
        };
        let checked = match tool.check(args) {
            Ok(checked) => checked,
            Err(out) => return out,
        };
        let target = match checked.path {
            Some(path) => match self.target(tool, path).await {
                Ok(target) => Some(target),
                Err(out) => return out,
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
            .permission(call, target.as_ref(), tool.policy(), preview)
            .await
        {
            return ToolOutput::error(refusal);
        }
        let config = self.env.config;
        // An unattended run's sandbox is its entry's (strict by default), whatever the
        // session or `[sandbox]` say; a person's session has its own or the config's.
        let (choice, require) = match &self.origin.unattended {
            Some(unattended) => (unattended.sandbox.choice(), unattended.sandbox.require),
            None => (
                self.session.sandbox.unwrap_or(config.sandbox.choice()),
                config.sandbox.require,
            ),
        };
        let sandbox = self.env.sandbox.for_turn(
            &config.sandbox,
            choice,
            require,
            PathBuf::from(&self.session.cwd),
        );
        let context = ToolContext {
            sandbox,
            cwd: self.session.cwd.clone().into(),
            cancel: self.active.cancel.child_token(),
            process_records: Some(crate::tools::orphans::dir(&self.env.dirs.data_dir)),
            spill: (config.tools.saved_output_limit_bytes > 0).then(|| SpillTo {
                dir: spill::session_dir(&self.env.dirs.data_dir, &self.session.id),
                limit: config.tools.saved_output_limit_bytes,
            }),
            limits: ToolLimits {
                output_limit_bytes: config.tools.output_limit_bytes,
                bash_default_timeout: Duration::from_secs(config.tools.bash_timeout_secs.max(1)),
                ..ToolLimits::default()
            },
            ask_user: match (&self.origin.unattended, &self.origin.peer) {
                (Some(unattended), _) => {
                    Some(Arc::new(NoOne(unattended.clone())) as Arc<dyn AskUser>)
                }
                (None, Some(peer)) if self.origin.elicitation => Some(Arc::new(Elicitation {
                    peer: peer.clone(),
                    session_id: self.session.id.clone(),
                    turn_id: self.id().to_owned(),
                    timeout: Duration::from_secs(config.agent.ask_user_timeout_secs),
                })
                    as Arc<dyn AskUser>),
                (None, _) => None,
            },
            scrub: crate::state::scrub(config),
            // The prompting client's file system, if it declared one (an unattended run has
            // no client: the disk).
            client_files: self
                .origin
                .peer
                .as_ref()
                .filter(|_| self.origin.fs.read_text_file || self.origin.fs.write_text_file)
                .map(|peer| {
                    Arc::new(ClientFs {
                        peer: peer.clone(),
                        session_id: self.session.id.clone(),
                        capabilities: self.origin.fs,
                    }) as Arc<dyn ClientFiles>
                }),
        };
        tool.run(args, &context).await
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

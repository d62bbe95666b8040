//! One tool call: checked, approved (see `approval.rs`), then run.

use super::ask_user::Elicitation;
use super::step::Turn;
use crate::provider::ToolCall;
use crate::tools::{AskUser, ToolContext, ToolLimits, ToolOutput, ToolSet};
use std::sync::Arc;
use std::time::Duration;

impl Turn<'_> {
    /// Runs one tool call, asking for approval when its policy says so. Never fails: every
    /// problem becomes an error result the model can read.
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
        if let Err(refusal) = self.permission(call).await {
            return ToolOutput::error(refusal);
        }
        let config = self.env.config;
        let context = ToolContext {
            cwd: self.session.cwd.clone().into(),
            cancel: self.active.cancel.child_token(),
            process_records: Some(crate::tools::orphans::dir(self.env.data_dir)),
            limits: ToolLimits {
                output_limit_bytes: config.tools.output_limit_bytes,
                bash_default_timeout: Duration::from_secs(config.tools.bash_timeout_secs.max(1)),
                ..ToolLimits::default()
            },
            ask_user: self.origin.elicitation.then(|| {
                Arc::new(Elicitation {
                    peer: self.origin.peer.clone(),
                    session_id: self.session.id.clone(),
                    turn_id: self.id().to_owned(),
                    timeout: Duration::from_secs(config.agent.ask_user_timeout_secs),
                }) as Arc<dyn AskUser>
            }),
        };
        tool.run(args, &context).await
    }
}

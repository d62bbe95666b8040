//! One tool call: checked, approved (see `approval.rs`), then run, or handed to `ask_user`.

use super::step::Turn;
use crate::provider::ToolCall;
use crate::tools::{self, ToolContext, ToolLimits, ToolOutput};
use std::time::Duration;

impl Turn<'_> {
    /// Runs one tool call, asking for approval when its policy says so. Never fails: every
    /// problem becomes an error result the model can read.
    pub(super) async fn execute(&self, call: &ToolCall) -> ToolOutput {
        let args = match &call.arguments {
            Ok(args) => args,
            Err(why) => return error_output(why.clone()),
        };
        if tools::find(&call.name).is_none() {
            let names: Vec<&str> = tools::definitions().iter().map(|t| t.name).collect();
            return error_output(format!(
                "there is no tool named {:?}; the tools are: {}",
                call.name,
                names.join(", ")
            ));
        }
        if let Err(refusal) = self.permission(call).await {
            return error_output(refusal);
        }
        if call.name == "ask_user" {
            return self.ask_user(args).await;
        }
        let tools_config = &self.env.config.tools;
        let context = ToolContext {
            cwd: self.session.cwd.clone().into(),
            cancel: self.active.cancel.child_token(),
            process_records: Some(crate::tools::orphans::dir(self.env.data_dir)),
            limits: ToolLimits {
                output_limit_bytes: tools_config.output_limit_bytes,
                bash_default_timeout: Duration::from_secs(tools_config.bash_timeout_secs.max(1)),
                ..ToolLimits::default()
            },
        };
        tools::run(&call.name, args, &context).await
    }
}

pub(super) fn error_output(text: String) -> ToolOutput {
    ToolOutput {
        text,
        is_error: true,
    }
}

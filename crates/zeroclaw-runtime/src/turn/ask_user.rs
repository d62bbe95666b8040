//! `ask_user`: the model asks the user a question through the client that sent the prompt.

use super::step::Turn;
use super::tool_call::error_output;
use crate::tools::ToolOutput;
use serde_json::{Value, json};
use std::time::Duration;
use zeroclaw_protocol::{ElicitationCreate, ElicitationRequest, Method};
use zeroclaw_rpc::CallError;

impl Turn<'_> {
    /// `ask_user`: an `elicitation/create` request to the client that sent the prompt.
    pub(super) async fn ask_user(&self, args: &Value) -> ToolOutput {
        let Some(question) = args.get("question").and_then(Value::as_str) else {
            return error_output("ask_user needs a `question` string".into());
        };
        if !self.origin.elicitation {
            return error_output(
                "the client that sent this prompt cannot show questions (it did not declare the elicitation capability); continue without asking, and state the assumption you make".into(),
            );
        }
        let mut answer_schema = json!({"type": "string", "description": question});
        if let Some(choices) = args
            .get("choices")
            .and_then(Value::as_array)
            .filter(|c| !c.is_empty())
        {
            answer_schema["enum"] = Value::Array(choices.clone());
        }
        let request = ElicitationRequest {
            session_id: Some(self.session.id.clone()),
            turn_id: Some(self.id().to_owned()),
            message: question.to_owned(),
            requested_schema: Some(json!({
                "type": "object",
                "properties": {"answer": answer_schema},
                "required": ["answer"],
            })),
        };
        let params = serde_json::to_value(&request).unwrap_or(Value::Null);
        let timeout = Duration::from_secs(self.env.config.agent.ask_user_timeout_secs);
        let answer = tokio::select! {
            answer = self.origin.peer.request(ElicitationCreate::NAME, params, timeout) => answer,
            () = self.active.cancel.cancelled() => {
                return error_output("the turn was cancelled before the user answered".into());
            }
        };
        match answer {
            Ok(result) => match result.get("action").and_then(Value::as_str) {
                Some("accept") => {
                    let content = result.get("content").cloned().unwrap_or(Value::Null);
                    let text = match content.get("answer") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => content.to_string(),
                    };
                    ToolOutput {
                        text,
                        is_error: false,
                    }
                }
                Some("decline") => error_output("the user declined to answer".into()),
                Some("cancel") => {
                    error_output("the user dismissed the question without answering".into())
                }
                other => error_output(format!(
                    "the client answered with an unknown action {other:?}; treat the question as unanswered"
                )),
            },
            Err(CallError::Timeout(d)) => error_output(format!(
                "the user did not answer within {} s; continue without the answer",
                d.as_secs()
            )),
            Err(CallError::Closed) => error_output(
                "the client disconnected before the user answered; continue without the answer"
                    .into(),
            ),
            Err(CallError::Rpc(e)) => error_output(format!(
                "the client could not ask the question: {}",
                e.message
            )),
        }
    }
}

//! How the `ask_user` tool reaches the person: an `elicitation/create` request to the
//! client that sent the prompt. What the model is told of each answer is the tool's
//! (`tools/ask_user.rs`).

use crate::link::{CallError, Link};
use crate::tools::{Answer, AskUser};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use zeroclaw_protocol::{ElicitationCreate, ElicitationRequest, Method};

#[derive(Debug)]
pub(super) struct Elicitation {
    pub peer: Arc<dyn Link>,
    pub session_id: String,
    pub turn_id: String,
    pub timeout: Duration,
}

impl Elicitation {
    /// Sends one `elicitation/create` and waits for the client's answer.
    async fn request(&self, message: &str, schema: Value) -> Result<Value, Answer> {
        let request = ElicitationRequest {
            session_id: Some(self.session_id.clone()),
            turn_id: Some(self.turn_id.clone()),
            message: message.to_owned(),
            requested_schema: Some(schema),
        };
        let params = serde_json::to_value(&request).unwrap_or(Value::Null);
        match self
            .peer
            .request(ElicitationCreate::NAME, params, self.timeout)
            .await
        {
            Ok(result) => Ok(result),
            Err(CallError::Timeout(d)) => Err(Answer::TimedOut(d)),
            Err(CallError::Closed) => Err(Answer::Disconnected),
            Err(CallError::Rpc(e)) => Err(Answer::Failed(e.message)),
        }
    }
}

impl AskUser for Elicitation {
    fn elicit<'a>(
        &'a self,
        message: &'a str,
        schema: &'a Value,
    ) -> BoxFuture<'a, Result<Value, Answer>> {
        Box::pin(self.request(message, schema.clone()))
    }

    fn ask<'a>(&'a self, question: &'a str, choices: &'a [String]) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            let mut answer_schema = json!({"type": "string", "description": question});
            if !choices.is_empty() {
                answer_schema["enum"] = json!(choices);
            }
            let schema = json!({
                "type": "object",
                "properties": {"answer": answer_schema},
                "required": ["answer"],
            });
            let result = match self.request(question, schema).await {
                Ok(result) => result,
                Err(answer) => return answer,
            };
            match result.get("action").and_then(Value::as_str) {
                Some("accept") => {
                    let content = result.get("content").cloned().unwrap_or(Value::Null);
                    Answer::Given(match content.get("answer") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => content.to_string(),
                    })
                }
                Some("decline") => Answer::Declined,
                Some("cancel") => Answer::Dismissed,
                other => Answer::Unknown(other.map(str::to_owned)),
            }
        })
    }
}

/// `ask_user` in an unattended run: nobody is there to answer, and the model is told so.
#[derive(Debug)]
pub(super) struct NoOne(pub std::sync::Arc<super::Unattended>);

impl NoOne {
    fn why(&self) -> Answer {
        Answer::NoOne(format!(
            "no one can answer now: this is an unattended run of {} {}; continue without the answer, and state the assumption you make",
            self.0.source, self.0.name
        ))
    }
}

impl AskUser for NoOne {
    fn ask<'a>(&'a self, _question: &'a str, _choices: &'a [String]) -> BoxFuture<'a, Answer> {
        Box::pin(async move { self.why() })
    }

    fn elicit<'a>(
        &'a self,
        _message: &'a str,
        _schema: &'a Value,
    ) -> BoxFuture<'a, Result<Value, Answer>> {
        Box::pin(async move { Err(self.why()) })
    }
}

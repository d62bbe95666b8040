//! `ask_user`: put a question to the person at the client and return their answer.
//!
//! The tool does not know how the question travels: it asks through the [`AskUser`]
//! capability in its [`ToolContext`], which the turn provides (an `elicitation/create`
//! request to the client that sent the prompt). What the model reads about each outcome
//! is written here.

use std::fmt::Debug;
use std::time::Duration;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Tool, ToolContext, ToolOutput};
use crate::config::Policy;

/// A way to put a question to the person at the client.
pub trait AskUser: Send + Sync + Debug {
    /// Asks `question`, offering `choices` when there are any, and waits for the outcome.
    /// Dropping the future abandons the question (the turn was cancelled).
    fn ask<'a>(&'a self, question: &'a str, choices: &'a [String]) -> BoxFuture<'a, Answer>;

    /// Puts a form (an MCP server's `elicitation/create`: its message and requested schema)
    /// to the person: the client's answer as it sent it (`{action, content?}`), or why there
    /// is none.
    fn elicit<'a>(
        &'a self,
        _message: &'a str,
        _schema: &'a serde_json::Value,
    ) -> BoxFuture<'a, Result<serde_json::Value, Answer>> {
        Box::pin(async { Err(Answer::Failed("this client cannot show forms".into())) })
    }
}

/// What became of a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The person answered this.
    Given(String),
    /// The person declined to answer.
    Declined,
    /// The person dismissed the question.
    Dismissed,
    /// The client replied with an outcome this daemon does not know (the one it named).
    Unknown(Option<String>),
    /// Nobody answered within this time.
    TimedOut(Duration),
    /// The client went away before an answer came.
    Disconnected,
    /// The client could not ask: its error message.
    Failed(String),
    /// Nobody can be asked (an unattended run): what the model is told, whole.
    NoOne(String),
}

pub(super) struct AskUserTool;

#[derive(Deserialize, JsonSchema)]
pub(super) struct Args {
    /// The question, phrased so it can be answered without further context.
    question: String,
    /// Optional answers to offer; the person may still answer freely.
    choices: Option<Vec<String>>,
}

impl Tool for AskUserTool {
    const NAME: &'static str = "ask_user";
    const DESCRIPTION: &'static str = "Ask the person at the client a question and wait for their answer, which is returned \
        as the result. Use it when a decision is genuinely theirs (ambiguous requirements, \
        destructive actions, choosing between options), not for things you can find out \
        yourself.";
    const READ_ONLY: bool = true;
    const APPROVAL: Policy = Policy::Allow;
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let Some(asker) = &ctx.ask_user else {
            return ToolOutput::error(
                "the client that sent this prompt cannot show questions (it did not declare the elicitation capability); continue without asking, and state the assumption you make",
            );
        };
        let choices = args.choices.unwrap_or_default();
        let answer = tokio::select! {
            answer = asker.ask(&args.question, &choices) => answer,
            () = ctx.cancel.cancelled() => {
                return ToolOutput::error("the turn was cancelled before the user answered");
            }
        };
        match answer {
            Answer::Given(text) => ToolOutput::ok(text),
            Answer::Declined => ToolOutput::error("the user declined to answer"),
            Answer::Dismissed => {
                ToolOutput::error("the user dismissed the question without answering")
            }
            Answer::Unknown(action) => ToolOutput::error(format!(
                "the client answered with an unknown action {action:?}; treat the question as unanswered"
            )),
            Answer::TimedOut(d) => ToolOutput::error(format!(
                "the user did not answer within {} s; continue without the answer",
                d.as_secs()
            )),
            Answer::Disconnected => ToolOutput::error(
                "the client disconnected before the user answered; continue without the answer",
            ),
            Answer::Failed(message) => {
                ToolOutput::error(format!("the client could not ask the question: {message}"))
            }
            Answer::NoOne(message) => ToolOutput::error(message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ctx, run};
    use super::*;
    use serde_json::json;
    use std::sync::{Arc, Mutex};
    use tokio::sync::Notify;

    /// Records each question and gives `answer`, or, with none, waits forever (after
    /// saying it was asked).
    #[derive(Debug, Default)]
    struct Person {
        answer: Option<Answer>,
        asked: Mutex<Vec<(String, Vec<String>)>>,
        waiting: Notify,
    }

    impl AskUser for Person {
        fn ask<'a>(&'a self, question: &'a str, choices: &'a [String]) -> BoxFuture<'a, Answer> {
            self.asked
                .lock()
                .unwrap()
                .push((question.to_owned(), choices.to_vec()));
            Box::pin(async move {
                match &self.answer {
                    Some(answer) => answer.clone(),
                    None => {
                        self.waiting.notify_one();
                        std::future::pending().await
                    }
                }
            })
        }
    }

    async fn ask(answer: Answer) -> (ToolOutput, Arc<Person>) {
        let dir = tempfile::tempdir().unwrap();
        let mut c = ctx(dir.path());
        let person = Arc::new(Person {
            answer: Some(answer),
            ..Person::default()
        });
        c.ask_user = Some(person.clone());
        let args = json!({"question": "Which colour?", "choices": ["red", "blue"]});
        (run("ask_user", &args, &c).await, person)
    }

    #[tokio::test]
    async fn the_answer_is_the_result_and_the_question_carries_the_choices() {
        let (out, person) = ask(Answer::Given("blue".into())).await;
        assert_eq!(out, ToolOutput::ok("blue"));
        assert_eq!(
            *person.asked.lock().unwrap(),
            [(
                "Which colour?".to_owned(),
                vec!["red".to_owned(), "blue".to_owned()]
            )]
        );
    }

    #[tokio::test]
    async fn every_unanswered_outcome_is_an_error_result_saying_what_happened() {
        for (answer, want) in [
            (Answer::Declined, "the user declined to answer"),
            (
                Answer::Dismissed,
                "the user dismissed the question without answering",
            ),
            (
                Answer::Unknown(Some("shrug".into())),
                "the client answered with an unknown action Some(\"shrug\"); treat the question as unanswered",
            ),
            (
                Answer::TimedOut(Duration::from_secs(3)),
                "the user did not answer within 3 s; continue without the answer",
            ),
            (
                Answer::Disconnected,
                "the client disconnected before the user answered; continue without the answer",
            ),
            (
                Answer::Failed("no UI here".into()),
                "the client could not ask the question: no UI here",
            ),
        ] {
            assert_eq!(ask(answer).await.0, ToolOutput::error(want));
        }
    }

    #[tokio::test]
    async fn without_a_way_to_ask_the_model_is_told_to_go_on_without() {
        let dir = tempfile::tempdir().unwrap();
        let out = run("ask_user", &json!({"question": "?"}), &ctx(dir.path())).await;
        assert!(out.is_error);
        assert!(out.text.contains("elicitation capability"), "{}", out.text);
    }

    #[tokio::test]
    async fn cancelling_the_turn_stops_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = ctx(dir.path());
        let person = Arc::new(Person::default());
        c.ask_user = Some(person.clone());
        let cancel = c.cancel.clone();
        let asked = person.waiting.notified();
        let args = json!({"question": "Well?"});
        let call = run("ask_user", &args, &c);
        let cancel_when_asked = async {
            asked.await;
            cancel.cancel();
        };
        let (out, ()) = tokio::join!(call, cancel_when_asked);
        assert_eq!(
            out,
            ToolOutput::error("the turn was cancelled before the user answered")
        );
    }

    #[tokio::test]
    async fn a_question_that_is_not_a_string_is_refused_before_asking() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = ctx(dir.path());
        let person = Arc::new(Person::default());
        c.ask_user = Some(person.clone());
        let out = run("ask_user", &json!({"question": 1}), &c).await;
        assert_eq!(
            out,
            ToolOutput::error(
                "invalid arguments for ask_user: `question` must be a string, got a number"
            )
        );
        assert!(person.asked.lock().unwrap().is_empty());
    }
}

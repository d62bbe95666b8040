//! Answering the daemon's `elicitation/create` (the agent's `ask_user`) with a form on the
//! terminal, built from `requestedSchema.properties`: one question per field.
//!
//! - string: free text; with `enum`, numbered choices (a number picks one; other text is
//!   taken as it is, since ask_user lets the person answer freely);
//! - number / integer: parsed, asked again until it parses;
//! - boolean: y / n;
//! - required fields are asked again when left empty; empty optional ones are left out;
//! - an empty answer to the first field declines the whole form; Ctrl-C or Ctrl-D cancels it.

use crate::input::{Input, Read};
use crate::render::Screen;
use crate::term::{bold, dim, sanitize};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{mpsc, oneshot};
use zeroclaw_client::{ElicitationHandler, ElicitationRequest, ElicitationResponse};
use zeroclaw_rpc::BoxFuture;

/// What a field accepts.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Text,
    Number,
    Integer,
    Boolean,
    Choice(Vec<Value>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub label: String,
    pub description: Option<String>,
    pub kind: Kind,
    pub required: bool,
}

/// The fields of a requested schema, in the schema's order. A schema without properties
/// asks one optional free-text `answer`.
pub fn fields(schema: Option<&Value>) -> Vec<Field> {
    let required: Vec<&str> = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .filter(|p| !p.is_empty())
    else {
        return vec![Field {
            name: "answer".into(),
            label: "answer".into(),
            description: None,
            kind: Kind::Text,
            required: false,
        }];
    };
    properties
        .iter()
        .map(|(name, property)| {
            let choices = property
                .get("enum")
                .and_then(Value::as_array)
                .filter(|c| !c.is_empty());
            let kind = match (choices, property.get("type").and_then(Value::as_str)) {
                (Some(choices), _) => Kind::Choice(choices.clone()),
                (None, Some("number")) => Kind::Number,
                (None, Some("integer")) => Kind::Integer,
                (None, Some("boolean")) => Kind::Boolean,
                _ => Kind::Text,
            };
            let text = |key: &str| property.get(key).and_then(Value::as_str).map(sanitize);
            Field {
                name: name.clone(),
                label: text("title").unwrap_or_else(|| sanitize(name)),
                description: text("description"),
                kind,
                required: required.contains(&name.as_str()),
            }
        })
        .collect()
}

/// The prompt for a field: `  label [hint]: `.
pub fn prompt(field: &Field) -> String {
    let hint = match &field.kind {
        Kind::Text => String::new(),
        Kind::Number => " (a number)".into(),
        Kind::Integer => " (a whole number)".into(),
        Kind::Boolean => " [y/n]".into(),
        Kind::Choice(choices) => format!(" [1-{}]", choices.len()),
    };
    let optional = if field.required { "" } else { " (optional)" };
    format!("  {}{hint}{optional}: ", field.label)
}

/// Parses a non-empty answer for a field; `Err` says what to type instead.
pub fn parse(kind: &Kind, answer: &str) -> Result<Value, String> {
    let answer = answer.trim();
    match kind {
        Kind::Text => Ok(Value::String(answer.to_owned())),
        Kind::Integer => answer
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "type a whole number, like 3".into()),
        Kind::Number => {
            if let Ok(n) = answer.parse::<i64>() {
                return Ok(Value::from(n));
            }
            answer
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| "type a number, like 2.5".into())
        }
        Kind::Boolean => match answer.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("type y or n".into()),
        },
        Kind::Choice(choices) => {
            let picked = answer
                .parse::<usize>()
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| choices.get(i));
            let named = || {
                choices.iter().find(|c| match c {
                    Value::String(s) => s.eq_ignore_ascii_case(answer),
                    other => serde_json::from_str::<Value>(answer).is_ok_and(|v| &v == *other),
                })
            };
            if let Some(choice) = picked.or_else(named) {
                return Ok(choice.clone());
            }
            if answer.parse::<usize>().is_err() && choices.iter().all(Value::is_string) {
                Ok(Value::String(answer.to_owned()))
            } else {
                Err(format!("pick a number from 1 to {}", choices.len()))
            }
        }
    }
}

/// A question from the daemon and where its answer goes.
pub type Question = (ElicitationRequest, oneshot::Sender<ElicitationResponse>);

/// The client's elicitation handler: hands each question to the turn loop, which shows it
/// once it has printed every event that came before it (the `tool_call` line of the
/// `ask_user` call above all), so output and form never interleave.
pub struct Forwarder {
    pub questions: mpsc::Sender<Question>,
}

impl ElicitationHandler for Forwarder {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<ElicitationResponse> {
        let questions = self.questions.clone();
        Box::pin(async move {
            let (answer, answered) = oneshot::channel();
            if questions.send((request, answer)).await.is_err() {
                return ElicitationResponse::cancel();
            }
            answered
                .await
                .unwrap_or_else(|_| ElicitationResponse::cancel())
        })
    }
}

/// Shows `ask_user` questions as forms on the terminal.
pub struct TerminalForms {
    pub input: Input,
    pub screen: Arc<Mutex<Screen>>,
}

impl TerminalForms {
    fn line(&self, text: &str) {
        self.screen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .line(text);
    }
}

impl TerminalForms {
    /// Asks the question as a form and returns the answer.
    pub async fn ask(&self, request: ElicitationRequest) -> ElicitationResponse {
        let message = sanitize(&request.message);
        self.line("");
        self.line(&bold(&format!("? {message}")));
        let fields = fields(request.requested_schema.as_ref());
        let mut content = Map::new();
        for (i, field) in fields.iter().enumerate() {
            if let Some(description) = field.description.as_deref().filter(|d| *d != message) {
                self.line(&dim(&format!("  {description}")));
            }
            if let Kind::Choice(choices) = &field.kind {
                for (n, choice) in choices.iter().enumerate() {
                    let text = choice.as_str().map_or_else(|| choice.to_string(), sanitize);
                    self.line(&format!("    {}) {text}", n + 1));
                }
            }
            let prompt = prompt(field);
            loop {
                let answer = match self.input.read(&prompt).await {
                    Read::Line(answer) => answer,
                    Read::Interrupted | Read::Eof => {
                        self.line(&dim("  (question dismissed)"));
                        return ElicitationResponse::cancel();
                    }
                };
                if answer.trim().is_empty() {
                    if i == 0 {
                        self.line(&dim("  (declined to answer)"));
                        return ElicitationResponse::decline();
                    }
                    if field.required {
                        self.line(&dim("  an answer is required here"));
                        continue;
                    }
                    break;
                }
                match parse(&field.kind, &answer) {
                    Ok(value) => {
                        content.insert(field.name.clone(), value);
                        break;
                    }
                    Err(hint) => self.line(&dim(&format!("  {hint}"))),
                }
            }
        }
        ElicitationResponse::accept(Value::Object(content))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_follow_the_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Your name"},
                "age": {"type": "integer"},
                "ratio": {"type": "number", "description": "between 0 and 1"},
                "ok": {"type": "boolean"},
                "colour": {"type": "string", "enum": ["red", "blue"]}
            },
            "required": ["name", "ok"]
        });
        let f = fields(Some(&schema));
        let kinds: Vec<&Kind> = f.iter().map(|f| &f.kind).collect();
        assert_eq!(
            kinds,
            [
                &Kind::Text,
                &Kind::Integer,
                &Kind::Number,
                &Kind::Boolean,
                &Kind::Choice(vec![json!("red"), json!("blue")])
            ]
        );
        assert_eq!(f[0].label, "Your name");
        assert!(f[0].required && !f[1].required && f[3].required);
        assert_eq!(f[2].description.as_deref(), Some("between 0 and 1"));
        assert_eq!(prompt(&f[0]), "  Your name: ");
        assert_eq!(prompt(&f[4]), "  colour [1-2] (optional): ");
        // No schema: one free-text answer.
        assert_eq!(fields(None)[0].name, "answer");
    }

    #[test]
    fn answers_parse_by_kind() {
        assert_eq!(parse(&Kind::Text, " hi "), Ok(json!("hi")));
        assert_eq!(parse(&Kind::Integer, "42"), Ok(json!(42)));
        assert!(parse(&Kind::Integer, "4.2").is_err());
        assert_eq!(parse(&Kind::Number, "2.5"), Ok(json!(2.5)));
        assert_eq!(parse(&Kind::Number, "3"), Ok(json!(3)));
        assert!(parse(&Kind::Number, "lots").is_err());
        assert!(parse(&Kind::Number, "NaN").is_err());
        assert_eq!(parse(&Kind::Boolean, "Y"), Ok(json!(true)));
        assert_eq!(parse(&Kind::Boolean, "no"), Ok(json!(false)));
        assert!(parse(&Kind::Boolean, "maybe").is_err());
        let colours = Kind::Choice(vec![json!("red"), json!("blue")]);
        assert_eq!(parse(&colours, "2"), Ok(json!("blue")));
        assert_eq!(parse(&colours, "RED"), Ok(json!("red")));
        assert!(parse(&colours, "3").is_err());
        assert_eq!(parse(&colours, "green"), Ok(json!("green")));
        let sizes = Kind::Choice(vec![json!(1), json!(10)]);
        assert_eq!(parse(&sizes, "2"), Ok(json!(10)));
        assert_eq!(parse(&sizes, "10"), Ok(json!(10)));
        assert!(parse(&sizes, "huge").is_err());
    }
}

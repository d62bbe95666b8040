//! Typed `session/update` events and the per-session fan-out.

use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::broadcast;

/// One `session/update` notification.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionUpdate {
    pub session_id: String,
    pub turn_id: Option<String>,
    pub update: Update,
}

/// What happened. Unknown types are kept as [`Update::Other`], so a newer daemon's events
/// do not break an older client.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Update {
    AgentMessageChunk {
        text: String,
    },
    AgentThoughtChunk {
        text: String,
    },
    UserMessageChunk {
        text: String,
    },
    #[serde(rename_all = "camelCase")]
    ToolCall {
        tool_call_id: String,
        name: String,
        #[serde(default)]
        raw_input: Value,
    },
    #[serde(rename_all = "camelCase")]
    ToolResult {
        tool_call_id: String,
        name: String,
        #[serde(default)]
        raw_output: Value,
        #[serde(default)]
        is_error: bool,
    },
    #[serde(rename_all = "camelCase")]
    ApprovalRequest {
        request_id: String,
        tool_call_id: String,
        name: String,
        #[serde(default)]
        raw_input: Value,
        #[serde(default)]
        options: Vec<String>,
    },
    #[serde(rename_all = "camelCase")]
    TurnComplete {
        stop_reason: String,
        #[serde(default)]
        error: Option<String>,
    },
    #[serde(skip)]
    Other(Value),
}

impl SessionUpdate {
    /// Parses the params of a `session/update`; `None` if they carry no session id.
    pub fn parse(params: &Value) -> Option<Self> {
        let session_id = params.get("sessionId")?.as_str()?.to_owned();
        let turn_id = params
            .get("turnId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let update = serde_json::from_value(params.clone())
            .unwrap_or_else(|_| Update::Other(params.clone()));
        Some(Self {
            session_id,
            turn_id,
            update,
        })
    }
}

/// Events buffered per subscriber. Overflow rule: a subscriber that falls this far behind
/// gets `RecvError::Lagged(n)` from its receiver (tokio's broadcast semantics) and the
/// oldest events are lost to it; the connection itself never waits.
pub const EVENT_BUFFER: usize = 8192;

/// Routes updates to the subscribers of their session.
#[derive(Debug, Default)]
pub(crate) struct Router {
    sessions: Mutex<HashMap<String, broadcast::Sender<SessionUpdate>>>,
}

impl Router {
    pub(crate) fn subscribe(&self, session_id: &str) -> broadcast::Receiver<SessionUpdate> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions
            .entry(session_id.to_owned())
            .or_insert_with(|| broadcast::channel(EVENT_BUFFER).0)
            .subscribe()
    }

    pub(crate) fn route(&self, update: SessionUpdate) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tx) = sessions.get(&update.session_id) {
            let id = update.session_id.clone();
            if tx.send(update).is_err() {
                // Every receiver is gone: stop keeping a channel for the session.
                sessions.remove(&id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn updates_parse_by_type_and_unknown_types_are_kept() {
        let u = SessionUpdate::parse(&json!({"sessionId":"s","turnId":"t","type":"tool_call","toolCallId":"c","name":"bash","rawInput":{"command":"ls"}})).unwrap();
        assert_eq!(u.turn_id.as_deref(), Some("t"));
        assert_eq!(
            u.update,
            Update::ToolCall {
                tool_call_id: "c".into(),
                name: "bash".into(),
                raw_input: json!({"command":"ls"})
            }
        );
        let u =
            SessionUpdate::parse(&json!({"sessionId":"s","type":"future_thing","x":1})).unwrap();
        assert!(matches!(u.update, Update::Other(_)));
        assert!(SessionUpdate::parse(&json!({"type":"turn_complete"})).is_none());
    }
}

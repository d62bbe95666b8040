//! The agent's plan (issue 33): a successful `todo_write` call is the session's new
//! checklist. It is stored as a `plan` message right after the call's result and sent as
//! a `plan` event, so every attached client updates its checklist, and a replay (a client
//! joining later, a reload) carries the same events in the same order: the last one is
//! the current plan. The model is never sent the `plan` message: it has the call and its
//! result.

use super::TurnError;
use super::step::Turn;
use crate::provider::ToolCall;
use crate::store::{MessageKind, NewMessage};
use crate::tools::{TODO_WRITE, todo_plan};
use serde_json::json;
use zeroclaw_protocol::Update;

impl Turn<'_> {
    /// Records and sends the plan `call` set, if it is a `todo_write` call (that ran).
    pub(super) async fn record_plan(&self, step: i64, call: &ToolCall) -> Result<(), TurnError> {
        if call.name != TODO_WRITE {
            return Ok(());
        }
        let Some(entries) = call.arguments.as_ref().ok().and_then(todo_plan) else {
            return Ok(());
        };
        let message = NewMessage {
            step,
            tool_call_id: Some(call.id.clone()),
            tool_name: Some(call.name.clone()),
            data: Some(json!({ "entries": entries })),
            ..NewMessage::default()
        };
        self.record(MessageKind::Plan, message, Update::Plan { entries })
            .await
    }
}

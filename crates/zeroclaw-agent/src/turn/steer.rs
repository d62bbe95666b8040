//! `session/steer` in the turn: the messages a user added while it ran, taken at a step
//! boundary (before the next model request) and, like the prompt, stored then sent (as
//! `user_message` events) and added to the conversation after what the model has seen.
//! The queue and its bound are the session's (`session/steer.rs`).

use super::halt::Halt;
use super::step::Turn;
use crate::provider::ChatMessage;
use crate::store::{MessageKind, NewMessage};
use serde_json::json;
use zeroclaw_protocol::Update;

/// The `data` a steer message is stored with, so a replay shows it as `user_message`.
pub(crate) fn steer_data() -> serde_json::Value {
    json!({ "steer": true })
}

impl Turn<'_> {
    /// Stores, sends and adds to `messages` each of `texts`, in order, as user messages of
    /// step `step`.
    pub(super) async fn steered(
        &mut self,
        step: i64,
        texts: Vec<String>,
        messages: &mut Vec<ChatMessage>,
    ) -> Result<(), Halt> {
        if texts.is_empty() {
            return Ok(());
        }
        // The prompt is stored before anything that came after it.
        self.ensure_started().await?;
        for text in texts {
            let message = NewMessage {
                step,
                text: Some(text.clone()),
                data: Some(steer_data()),
                ..NewMessage::default()
            };
            let update = Update::UserMessage {
                text: text.as_str().into(),
            };
            self.record(MessageKind::User, message, update).await?;
            messages.push(ChatMessage::user(text));
        }
        Ok(())
    }
}

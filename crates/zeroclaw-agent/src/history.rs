//! Stored messages, seen three ways: as the conversation the model is sent, as the
//! `session/update` events of a replay, and as `session/messages` entries.
//!
//! A compacted session's newest `summary` message stands, for the model, for every message
//! up to the one it names (`data.upTo`); those stay stored and are still replayed and
//! listed. What the model is sent after a summary has old tool outputs cut to their head
//! and tail.

use crate::project::hooks;
use crate::prompt::sent_images::{Unsent, note, with_notes};
use crate::provider::{ChatMessage, ToolCall};
use crate::store::{MessageKind, MessageRow};
use serde_json::Value;
use std::collections::HashSet;
use std::time::{Duration, UNIX_EPOCH};
use zeroclaw_protocol::events::HookResult;
use zeroclaw_protocol::{Message, Update};

/// What the model is sent of a session's history.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Context {
    /// The newest summary's text: what the messages it folds said.
    pub summary: Option<String>,
    pub messages: Vec<ChatMessage>,
}

/// How much of a tool output of an earlier turn a compacted session sends: its head and its
/// tail, half each.
pub const OLD_OUTPUT_KEEP: usize = 2048;

/// The newest summary in `rows`: its text and the id of the last message it folds.
pub fn latest_summary(rows: &[MessageRow]) -> Option<(&str, i64)> {
    rows.iter().rev().find_map(|row| {
        (row.kind == MessageKind::Summary).then(|| {
            let up_to = row
                .data
                .as_ref()
                .and_then(|d| d.get("upTo"))
                .and_then(Value::as_i64)
                .unwrap_or(row.id);
            (row.text.as_deref().unwrap_or_default(), up_to)
        })
    })
}

/// The conversation as the model sees it. One assistant message per model step (its text
/// and every tool call it made), followed by that step's tool results. A call whose result
/// never got stored (the turn was cancelled or the daemon died) gets a stand-in result, since
/// providers reject a tool call left unanswered. After a summary, only the messages it does
/// not fold, with the tool outputs of turns before the last cut to [`OLD_OUTPUT_KEEP`].
pub fn conversation(rows: &[MessageRow]) -> Context {
    let summary = latest_summary(rows);
    let unanswered = unanswered_turns(rows);
    let rows: Vec<&MessageRow> = rows
        .iter()
        .filter(|row| row.kind != MessageKind::Summary)
        .filter(|row| summary.is_none_or(|(_, up_to)| row.id > up_to))
        .filter(|row| {
            row.turn_id
                .as_deref()
                .is_none_or(|turn| !unanswered.contains(turn))
        })
        .collect();
    let last_prompt = rows
        .iter()
        .rposition(|row| row.kind == MessageKind::User)
        .unwrap_or(0);
    let mut messages: Vec<ChatMessage> = Vec::new();
    // (turn, step) of the assistant message being built, and its index.
    let mut current: Option<(Option<&str>, i64, usize)> = None;
    for (at, row) in rows.iter().enumerate() {
        let key = (row.turn_id.as_deref(), row.step);
        match row.kind {
            MessageKind::User => {
                current = None;
                messages.push(ChatMessage::User {
                    text: prompt_text(row),
                    images: row.images.clone(),
                });
            }
            MessageKind::Thought
            | MessageKind::Summary
            | MessageKind::Error
            | MessageKind::Plan => {}
            MessageKind::Hook => {
                let Some(hook) = hook_result(row) else {
                    continue;
                };
                match (hook.event.as_str(), hook.outcome.as_str()) {
                    // What the hook added goes with the prompt it ran for.
                    ("UserPromptSubmit", "continue") => {
                        if let (Some(context), Some(ChatMessage::User { text, .. })) =
                            (&hook.context, messages.last_mut())
                        {
                            text.push_str(&hooks::prompt_context(&hook.command, context));
                        }
                    }
                    // The turn went on: the hook's reason is what the model was sent.
                    ("Stop", "block") => {
                        current = None;
                        messages.push(ChatMessage::user(hooks::stop_feedback(
                            &hook.command,
                            hook.message.as_deref().unwrap_or_default(),
                        )));
                    }
                    _ => {}
                }
            }
            MessageKind::Assistant | MessageKind::ToolCall => {
                let at = match current {
                    Some((turn, step, at)) if (turn, step) == key => at,
                    _ => {
                        messages.push(ChatMessage::Assistant {
                            text: String::new(),
                            tool_calls: Vec::new(),
                        });
                        let at = messages.len() - 1;
                        current = Some((key.0, key.1, at));
                        at
                    }
                };
                if let Some(ChatMessage::Assistant { text, tool_calls }) = messages.get_mut(at) {
                    if row.kind == MessageKind::Assistant {
                        text.push_str(row.text.as_deref().unwrap_or_default());
                    } else {
                        let raw = match &row.data {
                            Some(Value::String(s)) => s.clone(),
                            Some(v) => v.to_string(),
                            None => String::new(),
                        };
                        tool_calls.push(ToolCall::new(
                            row.tool_call_id.clone().unwrap_or_default(),
                            row.tool_name.clone().unwrap_or_default(),
                            raw,
                        ));
                    }
                }
            }
            MessageKind::ToolResult => {
                let output = result_text(row);
                let output = if summary.is_some() && at < last_prompt {
                    head_and_tail(&output, OLD_OUTPUT_KEEP)
                } else {
                    output
                };
                messages.push(ChatMessage::ToolResult {
                    call_id: row.tool_call_id.clone().unwrap_or_default(),
                    name: row.tool_name.clone().unwrap_or_default(),
                    output,
                    is_error: row.is_error,
                });
            }
        }
    }
    Context {
        summary: summary.map(|(text, _)| text.to_owned()),
        messages: answer_orphan_calls(messages),
    }
}

/// A prompt's text, with a note for each of its images the store left unread: older than
/// the newest a request carries (`store/attachments.rs`, `prompt/sent_images.rs`). Those
/// are its first ones; `row.images` holds the rest.
fn prompt_text(row: &MessageRow) -> String {
    let text = row.text.as_deref().unwrap_or_default();
    let listed = crate::store::image_refs(row);
    let unread = listed.len().saturating_sub(row.images.len());
    if unread == 0 {
        return text.to_owned();
    }
    let notes = listed[..unread].iter().map(|i| {
        note(
            &i.mime_type,
            usize::try_from(i.size).unwrap_or(usize::MAX),
            Unsent::OverBound,
        )
    });
    with_notes(text, notes)
}

/// `text` if it is at most `keep` bytes; else its first and last `keep / 2` bytes (at
/// character boundaries) around a line that says how much was cut.
pub fn head_and_tail(text: &str, keep: usize) -> String {
    if text.len() <= keep {
        return text.to_owned();
    }
    let mut head = keep / 2;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - keep / 2;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n[... {} bytes cut ...]\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

fn result_text(row: &MessageRow) -> String {
    match &row.data {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => row.text.clone().unwrap_or_default(),
    }
}

fn answer_orphan_calls(messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
    let answered: HashSet<String> = messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::ToolResult { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    let mut out = Vec::with_capacity(messages.len());
    let mut owed: Vec<(String, String)> = Vec::new();
    for message in messages {
        let is_result = matches!(message, ChatMessage::ToolResult { .. });
        if !is_result {
            settle(&mut out, &mut owed);
        }
        if let ChatMessage::Assistant { tool_calls, .. } = &message {
            owed = tool_calls
                .iter()
                .filter(|c| !answered.contains(&c.id))
                .map(|c| (c.id.clone(), c.name.clone()))
                .collect();
        }
        out.push(message);
    }
    settle(&mut out, &mut owed);
    out
}

/// The turns that failed before the model answered anything: a prompt and its `error`
/// entry, nothing else but hooks' runs. The model is never sent them: to it, that prompt
/// was never made (as before such turns were kept), so a retried prompt does not reach it
/// twice. So with a prompt a `UserPromptSubmit` hook rejected.
fn unanswered_turns(rows: &[MessageRow]) -> std::collections::HashSet<&str> {
    let mut failed: std::collections::HashSet<&str> = rows
        .iter()
        .filter(|row| row.kind == MessageKind::Error)
        .filter_map(|row| row.turn_id.as_deref())
        .collect();
    for row in rows {
        if !matches!(
            row.kind,
            MessageKind::User | MessageKind::Error | MessageKind::Hook
        ) && let Some(turn) = row.turn_id.as_deref()
        {
            failed.remove(turn);
        }
    }
    let rejected = rows.iter().filter(|row| {
        row.kind == MessageKind::Hook
            && hook_result(row)
                .is_some_and(|h| h.event == "UserPromptSubmit" && h.outcome == "block")
    });
    failed.extend(rejected.filter_map(|row| row.turn_id.as_deref()));
    failed
}

/// A `hook` message's run, as stored.
pub fn hook_result(row: &MessageRow) -> Option<HookResult> {
    serde_json::from_value(row.data.clone()?).ok()
}

/// What the session's `SessionStart` hooks added, for the system prompt: of each command,
/// its latest run's context (a session loaded again runs them again).
pub fn session_context(rows: &[MessageRow]) -> Option<String> {
    let mut latest: Vec<(String, String)> = Vec::new();
    for hook in rows
        .iter()
        .filter(|row| row.kind == MessageKind::Hook && row.turn_id.is_none())
        .filter_map(hook_result)
        .filter(|h| h.event == "SessionStart")
    {
        latest.retain(|(command, _)| *command != hook.command);
        if let Some(context) = hook.context {
            latest.push((hook.command, context));
        }
    }
    if latest.is_empty() {
        return None;
    }
    let mut out = String::from(
        "\n\n# Session context\n\nWhat the user's SessionStart hooks said when this session started:",
    );
    for (command, context) in latest {
        out.push_str(&format!("\n\n## `{command}`\n\n{context}"));
    }
    Some(out)
}

fn settle(out: &mut Vec<ChatMessage>, owed: &mut Vec<(String, String)>) {
    for (call_id, name) in owed.drain(..) {
        out.push(ChatMessage::ToolResult {
            call_id,
            name,
            output: "not run: the turn ended before this call ran".into(),
            is_error: true,
        });
    }
}

/// The `session/update` event replaying one stored message. Takes the row, so its text
/// and data move into the event instead of being copied: replay reads every message of a
/// session once, and a copy of each was a measurable part of its cost (docs/benchmarks.md).
pub fn replay_event(mut row: MessageRow) -> Update<'static> {
    let images = match row.kind {
        MessageKind::User => crate::store::image_refs(&row),
        _ => Vec::new(),
    };
    let hook = match row.kind {
        MessageKind::Hook => Some(hook_result(&row)),
        _ => None,
    };
    let plan = match row.kind {
        MessageKind::Plan => Some(plan_entries(&row)),
        _ => None,
    };
    let steer = row.kind == MessageKind::User
        && row
            .data
            .as_ref()
            .and_then(|d| d.get("steer"))
            .and_then(Value::as_bool)
            == Some(true);
    let text = row.text.take();
    let tool_call_id = row.tool_call_id.take().unwrap_or_default();
    let name = row.tool_name.take().unwrap_or_default();
    let data = row.data.take().unwrap_or(Value::Null);
    let text_or_empty = || text.clone().unwrap_or_default().into();
    match row.kind {
        // A `session/steer` message is replayed as it was first sent.
        MessageKind::User if steer => Update::UserMessage {
            text: text.unwrap_or_default().into(),
        },
        MessageKind::User => Update::UserMessageChunk {
            text: text.unwrap_or_default().into(),
            images,
        },
        MessageKind::Assistant => Update::AgentMessageChunk {
            text: text.unwrap_or_default().into(),
        },
        MessageKind::Thought => Update::AgentThoughtChunk {
            text: text.unwrap_or_default().into(),
        },
        MessageKind::ToolCall => Update::ToolCall {
            tool_call_id,
            name,
            raw_input: data,
        },
        MessageKind::ToolResult => Update::ToolResult {
            tool_call_id,
            name,
            raw_output: data,
            is_error: row.is_error,
        },
        MessageKind::Summary => Update::ContextCompacted {
            summary: text_or_empty(),
            messages_folded: data.get("folded").and_then(Value::as_u64).unwrap_or(0),
        },
        // What a client attached at the time saw.
        MessageKind::Error => Update::TurnComplete {
            stop_reason: zeroclaw_protocol::StopReason::Error,
            error: text,
        },
        MessageKind::Hook => match hook.flatten() {
            Some(hook) => Update::HookResult(Box::new(hook)),
            None => Update::Unknown,
        },
        MessageKind::Plan => match plan.flatten() {
            Some(entries) => Update::Plan { entries },
            None => Update::Unknown,
        },
    }
}

/// A stored `plan` message's entries (its data is `{entries}`).
fn plan_entries(row: &MessageRow) -> Option<Vec<zeroclaw_protocol::events::PlanEntry>> {
    let entries = row.data.as_ref()?.get("entries")?;
    serde_json::from_value(entries.clone()).ok()
}

/// A `session/messages` entry.
pub fn message(row: &MessageRow) -> Message {
    let mut message = Message {
        id: row.id,
        turn_id: row.turn_id.clone(),
        kind: row.kind,
        created_at: timestamp(row.created_at),
        text: None,
        tool_call_id: None,
        name: None,
        raw_input: None,
        raw_output: None,
        is_error: None,
        cancelled: row.cancelled,
        truncated: false,
        hidden: row.hidden,
        images: crate::store::image_refs(row),
    };
    let data = || Some(row.data.clone().unwrap_or(Value::Null));
    match row.kind {
        MessageKind::User
        | MessageKind::Assistant
        | MessageKind::Thought
        | MessageKind::Summary
        | MessageKind::Error => {
            message.text = Some(row.text.clone().unwrap_or_default());
        }
        MessageKind::Plan => message.raw_output = data(),
        MessageKind::Hook => {
            message.text = row.text.clone();
            message.tool_call_id = row.tool_call_id.clone();
            message.name = row.tool_name.clone();
            message.raw_output = data();
            message.is_error = Some(row.is_error);
        }
        MessageKind::ToolCall | MessageKind::ToolResult => {
            message.tool_call_id = row.tool_call_id.clone();
            message.name = row.tool_name.clone();
            if row.kind == MessageKind::ToolCall {
                message.raw_input = data();
            } else {
                message.raw_output = data();
                message.is_error = Some(row.is_error);
            }
        }
    }
    message
}

/// RFC 3339 with milliseconds, UTC.
pub fn timestamp(ms: i64) -> String {
    let t = UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_millis(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(id: i64, turn: &str, step: i64, kind: MessageKind) -> MessageRow {
        MessageRow::bare(id, turn, step, kind)
    }

    #[test]
    fn a_step_is_one_assistant_message_with_all_its_calls_before_their_results() {
        let mut user = row(1, "t", 0, MessageKind::User);
        user.text = Some("hi".into());
        let mut text = row(2, "t", 1, MessageKind::Assistant);
        text.text = Some("let me look".into());
        let call = |id: i64, call: &str| {
            let mut r = row(id, "t", 1, MessageKind::ToolCall);
            r.tool_call_id = Some(call.into());
            r.tool_name = Some("bash".into());
            r.data = Some(json!({"command": "ls"}));
            r
        };
        let result = |id: i64, call: &str| {
            let mut r = row(id, "t", 1, MessageKind::ToolResult);
            r.tool_call_id = Some(call.into());
            r.tool_name = Some("bash".into());
            r.data = Some(json!("out"));
            r
        };
        let rows = vec![user, text, call(3, "a"), result(4, "a"), call(5, "b")];
        let conversation = conversation(&rows).messages;
        assert_eq!(conversation.len(), 4);
        match &conversation[1] {
            ChatMessage::Assistant { text, tool_calls } => {
                assert_eq!(text, "let me look");
                assert_eq!(tool_calls.len(), 2);
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(&conversation[2], ChatMessage::ToolResult { call_id, output, .. } if call_id == "a" && output == "out")
        );
        assert!(
            matches!(&conversation[3], ChatMessage::ToolResult { call_id, is_error: true, .. } if call_id == "b")
        );
    }

    #[test]
    fn a_summary_stands_for_what_it_folds_and_old_outputs_are_cut() {
        let user = |id: i64, turn: &str| {
            let mut r = row(id, turn, 0, MessageKind::User);
            r.text = Some(format!("prompt {id}"));
            r
        };
        let call = |id: i64, turn: &str| {
            let mut r = row(id, turn, 1, MessageKind::ToolCall);
            r.tool_call_id = Some(format!("c{id}"));
            r.tool_name = Some("bash".into());
            r
        };
        let result = |id: i64, turn: &str| {
            let mut r = row(id, turn, 1, MessageKind::ToolResult);
            r.tool_call_id = Some(format!("c{}", id - 1));
            r.tool_name = Some("bash".into());
            r.data = Some(json!("o".repeat(10_000)));
            r
        };
        let mut summary = row(10, "t3", 0, MessageKind::Summary);
        summary.text = Some("they said hello".into());
        summary.data = Some(json!({"upTo": 3, "folded": 3}));
        let rows = vec![
            user(1, "t1"),
            call(2, "t1"),
            result(3, "t1"),
            user(4, "t2"),
            call(5, "t2"),
            result(6, "t2"),
            user(7, "t3"),
            call(8, "t3"),
            result(9, "t3"),
            summary,
        ];
        let context = conversation(&rows);
        assert_eq!(context.summary.as_deref(), Some("they said hello"));
        let outputs: Vec<usize> = context
            .messages
            .iter()
            .filter_map(|m| match m {
                ChatMessage::ToolResult { output, .. } => Some(output.len()),
                _ => None,
            })
            .collect();
        // Turn t1 is folded; t2's output (an earlier turn) is cut; t3's (the last) is whole.
        assert_eq!(context.messages.len(), 6);
        assert!(outputs[0] < 2200 && outputs[1] == 10_000, "{outputs:?}");
        assert!(
            matches!(&context.messages[0], ChatMessage::User { text, .. } if text == "prompt 4")
        );
        // What a turn reads (`Store::context`: the messages after the summary's range, the
        // summary among them) gives the same conversation as the whole history.
        assert_eq!(conversation(&rows[3..]), context);
        // Without a summary nothing is cut.
        let whole = conversation(&rows[..6]);
        assert_eq!(whole.summary, None);
        assert_eq!(whole.messages.len(), 6);
        assert_eq!(
            head_and_tail("héllo wörld", 4).matches("bytes cut").count(),
            1
        );
    }

    #[test]
    fn timestamps_are_rfc3339() {
        assert_eq!(timestamp(0), "1970-01-01T00:00:00.000Z");
    }
}

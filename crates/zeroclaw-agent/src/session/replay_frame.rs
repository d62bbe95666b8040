//! A replay's frames written from the stored rows.
//!
//! Replay sends one `session/update` per stored message. Going through the event type
//! meant parsing each row's stored JSON (a tool call's input, a tool's output) into a
//! `serde_json::Value`, building the event and serialising it all again. The rows that make
//! up nearly all of a history — prompts, answers, thoughts, tool calls and results — are
//! framed here instead as streamed chunks are (`chunk_frame.rs`): the fixed parts written
//! once per page, each string escaped as serde_json escapes it, and the stored JSON spliced
//! in as it is, once it is known to be one line of valid JSON. The bytes are those of the
//! event path for the same row (a test compares them for every kind this frames); a row
//! this does not frame (a hook, a plan, a summary, an error, a prompt with images or sent
//! as a steer, data that is not one line of valid JSON) or whose frame passes the cap goes
//! the event path, which also cuts what is too long.

use serde_json::value::RawValue;
use zeroclaw_protocol::events::SESSION_UPDATE;

use super::fit::fit_update;
use crate::history;
use crate::link::Notification;
use crate::store::{MessageKind, RawMessageRow};

/// The frames replaying `rows` (oldest first) in `session_id`, each at most `cap` bytes.
pub fn replay_frames(session_id: &str, rows: Vec<RawMessageRow>, cap: usize) -> Vec<Notification> {
    let mut head = Vec::with_capacity(96);
    head.extend_from_slice(br#"{"jsonrpc":"2.0","method":"#);
    push_json_str(&mut head, SESSION_UPDATE);
    head.extend_from_slice(br#","params":{"sessionId":"#);
    push_json_str(&mut head, session_id);
    let mut frames = Vec::with_capacity(rows.len());
    for row in rows {
        match frame(&head, &row, cap) {
            Some(frame) => frames.push(frame),
            None => {
                let mut message = row.parse();
                let turn_id = message.turn_id.take();
                let event = history::replay_event(message);
                frames.extend(fit_update(session_id, turn_id.as_deref(), event, cap));
            }
        }
    }
    frames
}

/// The one frame of `row`, or `None` when the event path must make it.
fn frame(head: &[u8], row: &RawMessageRow, cap: usize) -> Option<Notification> {
    let text = row.text.as_deref().unwrap_or_default();
    let data = match row.kind {
        MessageKind::ToolCall | MessageKind::ToolResult => one_line_json(row.data.as_deref())?,
        // A prompt's data says it carried images or came as a steer.
        MessageKind::User if row.data.is_some() => return None,
        MessageKind::User | MessageKind::Assistant | MessageKind::Thought => "",
        _ => return None,
    };
    let call_id = row.tool_call_id.as_deref().unwrap_or_default();
    let name = row.tool_name.as_deref().unwrap_or_default();
    let size = head.len()
        + row.turn_id.as_ref().map_or(0, String::len)
        + text.len()
        + call_id.len()
        + name.len()
        + data.len()
        + 96;
    let mut out = Vec::with_capacity(size + size / 16);
    out.extend_from_slice(head);
    if let Some(turn) = &row.turn_id {
        out.extend_from_slice(br#","turnId":"#);
        push_json_str(&mut out, turn);
    }
    match row.kind {
        MessageKind::ToolCall | MessageKind::ToolResult => {
            let result = row.kind == MessageKind::ToolResult;
            out.extend_from_slice(if result {
                br#","type":"tool_result","toolCallId":"#
            } else {
                br#","type":"tool_call","toolCallId":"#
            });
            push_json_str(&mut out, call_id);
            out.extend_from_slice(br#","name":"#);
            push_json_str(&mut out, name);
            out.extend_from_slice(if result {
                br#","rawOutput":"#
            } else {
                br#","rawInput":"#
            });
            out.extend_from_slice(data.as_bytes());
            if result {
                out.extend_from_slice(if row.is_error {
                    br#","isError":true"#
                } else {
                    br#","isError":false"#
                });
            }
        }
        kind => {
            out.extend_from_slice(match kind {
                MessageKind::User => br#","type":"user_message_chunk","text":"#,
                MessageKind::Thought => br#","type":"agent_thought_chunk","text":"#,
                _ => br#","type":"agent_message_chunk","text":"#,
            });
            push_json_str(&mut out, text);
        }
    }
    out.extend_from_slice(b"}}");
    (out.len() <= cap).then(|| Notification::from_serialized(out))
}

/// The stored data as it goes in a frame: `null` for none, the text itself when it is one
/// line of valid JSON (what the daemon stores), else `None` (the event path then reads it as
/// the rest of the daemon does).
fn one_line_json(data: Option<&str>) -> Option<&str> {
    let Some(text) = data else {
        return Some("null");
    };
    let one_line = !text.bytes().any(|b| b == b'\n' || b == b'\r');
    (one_line && serde_json::from_str::<&RawValue>(text).is_ok()).then_some(text.trim())
}

/// `text` as a JSON string, escaped as serde_json escapes it.
fn push_json_str(out: &mut Vec<u8>, text: &str) {
    // Serialising a `str` into a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut *out, text);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn row(kind: MessageKind, text: Option<&str>, data: Option<&str>) -> RawMessageRow {
        RawMessageRow {
            id: 7,
            turn_id: Some("turn\\\"1\"".into()),
            step: 2,
            kind,
            text: text.map(Into::into),
            tool_call_id: Some("call-ü\n1".into()),
            tool_name: Some("bash".into()),
            data: data.map(Into::into),
            is_error: true,
            cancelled: false,
            created_at: 0,
            hidden: false,
        }
    }

    /// What the event path makes of `row`.
    fn by_events(row: RawMessageRow, cap: usize) -> Vec<String> {
        let mut message = row.parse();
        let turn = message.turn_id.take();
        fit_update(
            "sess-\"1\"",
            turn.as_deref(),
            history::replay_event(message),
            cap,
        )
        .iter()
        .map(|f| String::from_utf8_lossy(f.as_bytes()).into_owned())
        .collect()
    }

    fn framed(row: RawMessageRow, cap: usize) -> Vec<String> {
        replay_frames("sess-\"1\"", vec![row], cap)
            .iter()
            .map(|f| String::from_utf8_lossy(f.as_bytes()).into_owned())
            .collect()
    }

    /// Every row this frames itself comes out byte for byte as the event path writes it,
    /// and so does every row it leaves to that path.
    #[test]
    fn each_row_is_framed_as_the_event_path_frames_it() {
        let texts = [
            None,
            Some(""),
            Some("line\nbreak\ttab \"quoted\" back\\slash \u{0}\u{1f}\u{7f} ünïcødé 🦀 </script>"),
        ];
        let datas = [
            None,
            Some(r#"{"command":"ls -la","nested":{"z":1,"a":[1.5,-2,true,null,"x\n"]}}"#),
            Some(r#""just a string""#),
            Some("[]"),
            // Not what the daemon stores: left to the event path.
            Some("{\n  \"pretty\": true\n}"),
            Some("{damaged"),
            Some(r#"{"steer":true}"#),
        ];
        let kinds = [
            MessageKind::User,
            MessageKind::Assistant,
            MessageKind::Thought,
            MessageKind::ToolCall,
            MessageKind::ToolResult,
            MessageKind::Error,
            MessageKind::Summary,
        ];
        for kind in kinds {
            for text in texts {
                for data in datas {
                    for turn in [true, false] {
                        let mut r = row(kind, text, data);
                        if !turn {
                            r.turn_id = None;
                        }
                        assert_eq!(
                            framed(r.clone(), 1 << 20),
                            by_events(r, 1 << 20),
                            "{kind:?} {text:?} {data:?} turn {turn}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_row_over_the_cap_is_cut_or_split_by_the_event_path() {
        for kind in [MessageKind::Assistant, MessageKind::ToolResult] {
            let long = "x".repeat(4000);
            let data = format!("{{\"output\":\"{long}\"}}");
            let r = row(kind, Some(&long), Some(&data));
            let frames = framed(r.clone(), 1000);
            assert!(!frames.is_empty() && frames.iter().all(|f| f.len() <= 1000));
            assert_eq!(frames, by_events(r, 1000), "{kind:?}");
        }
    }
}

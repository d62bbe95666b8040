//! Fitting a `session/update` into the frame cap (`daemon.max_frame_bytes`).
//!
//! No line the daemon writes may pass the cap its clients read with: a line over it is one
//! they drop. An event over the cap is made to fit by one rule, documented in
//! `docs/protocol.md` §6:
//!
//! - A streamed text chunk (`agent_message_chunk`, `agent_thought_chunk`,
//!   `user_message_chunk`) is split, at character boundaries, into several chunks of the
//!   same type that each fit. Chunks are concatenated by their readers, so nothing is lost.
//! - Any other event (a tool call's arguments, a tool's output, an approval request, an
//!   error) keeps its shape and has its longest strings cut, each ending with
//!   [`CUT_MARKER`] and the number of bytes removed, until it fits. The history keeps the
//!   whole payload; only the event is cut.
//! - An event that still does not fit (thousands of small values) has its payload object
//!   replaced by the marker alone; one that cannot fit even so is dropped and logged.

use crate::link::Notification;
use serde_json::Value;
use zeroclaw_protocol::{SessionUpdate, Update, events::SESSION_UPDATE};

/// Begins the text that replaces what was cut from a string.
pub const CUT_MARKER: &str = "…[cut by zeroclaw to fit the frame limit: ";

/// Room kept for the marker text and the count after it.
const MARKER_ROOM: usize = CUT_MARKER.len() + 32;

/// Members of the params never cut: they say what the event is and where it belongs.
const IDENTITY: [&str; 5] = [
    "type",
    "sessionId",
    "turnId",
    "parentToolCallId",
    "childSessionId",
];

/// How many strings are cut, longest first, before the payload is replaced whole.
const MAX_CUTS: usize = 16;

/// The frames that carry `update` within `cap` bytes each: usually one.
pub fn fit_update(
    session_id: &str,
    turn_id: Option<&str>,
    update: Update<'_>,
    cap: usize,
) -> Vec<Notification> {
    let params = SessionUpdate {
        session_id: session_id.into(),
        turn_id: turn_id.map(Into::into),
        parent_tool_call_id: None,
        child_session_id: None,
        update,
    };
    fit(params, cap)
}

/// [`fit_update`] for a subagent's event as its parent session's clients get it: in the
/// parent's session and turn, tagged with the `task` call and the child session.
pub fn fit_forwarded(
    parent: (&str, &str),
    tool_call_id: &str,
    child_session_id: &str,
    update: Update<'_>,
    cap: usize,
) -> Vec<Notification> {
    let params = SessionUpdate {
        session_id: parent.0.into(),
        turn_id: Some(parent.1.into()),
        parent_tool_call_id: Some(tool_call_id.into()),
        child_session_id: Some(child_session_id.into()),
        update,
    };
    fit(params, cap)
}

fn fit(params: SessionUpdate<'_>, cap: usize) -> Vec<Notification> {
    let kind = params.update.kind();
    let session_id = params.session_id.as_ref();
    let frame = match Notification::new(SESSION_UPDATE, &params) {
        Ok(frame) => frame,
        Err(e) => {
            tracing::error!(session = %session_id, kind, error = %e, "event not serialisable; not sent");
            return Vec::new();
        }
    };
    if frame.as_bytes().len() <= cap {
        return vec![frame];
    }
    let size = frame.as_bytes().len();
    let fitted = match &params.update {
        Update::AgentMessageChunk { text }
        | Update::AgentThoughtChunk { text }
        | Update::UserMessageChunk { text, .. } => split_text(&params, text, cap),
        _ => cut_payload(&params, cap).map(|frame| vec![frame]),
    };
    match fitted {
        Some(frames) => {
            tracing::debug!(session = %session_id, kind, size, cap, frames = frames.len(), "event over the frame limit split or cut to fit");
            frames
        }
        None => {
            tracing::warn!(session = %session_id, kind, size, cap, "event cannot fit the frame limit; not sent");
            Vec::new()
        }
    }
}

/// The bytes `c` takes inside a JSON string as serde_json writes it.
fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// `text` as consecutive chunks of the event's type, each frame within `cap`; a prompt's
/// images go with its first chunk.
fn split_text(params: &SessionUpdate<'_>, text: &str, cap: usize) -> Option<Vec<Notification>> {
    let with = |piece: &str, first: bool| -> Option<Notification> {
        let update = Update::chunk(false, piece);
        let update = match &params.update {
            Update::AgentThoughtChunk { .. } => Update::chunk(true, piece),
            Update::UserMessageChunk { images, .. } => Update::UserMessageChunk {
                text: piece.into(),
                images: if first { images.clone() } else { Vec::new() },
            },
            _ => update,
        };
        let piece_params = SessionUpdate {
            session_id: params.session_id.clone(),
            turn_id: params.turn_id.clone(),
            parent_tool_call_id: params.parent_tool_call_id.clone(),
            child_session_id: params.child_session_id.clone(),
            update,
        };
        Notification::new(SESSION_UPDATE, &piece_params).ok()
    };
    let envelope = with("", true)?.as_bytes().len();
    let budget = cap.checked_sub(envelope).filter(|b| *b >= 6)?;
    let mut frames = Vec::new();
    let (mut start, mut used) = (0, 0);
    for (at, c) in text.char_indices() {
        let len = escaped_len(c);
        if used + len > budget {
            frames.push(with(&text[start..at], frames.is_empty())?);
            (start, used) = (at, 0);
        }
        used += len;
    }
    frames.push(with(&text[start..], frames.is_empty())?);
    Some(frames)
}

/// The event with its longest strings cut until it fits.
fn cut_payload(params: &SessionUpdate<'_>, cap: usize) -> Option<Notification> {
    let mut value = serde_json::to_value(params).ok()?;
    let serialised = |value: &Value| Notification::new(SESSION_UPDATE, value).ok();
    for _ in 0..MAX_CUTS {
        let frame = serialised(&value)?;
        let size = frame.as_bytes().len();
        if size <= cap {
            return Some(frame);
        }
        let Some(longest) = longest_string(&mut value) else {
            break;
        };
        // Each byte kept takes at least one byte on the wire: cutting `excess` bytes (and
        // room for the marker) from one string is enough if the string is that long.
        let excess = size - cap + MARKER_ROOM;
        cut(longest, excess);
    }
    // Too many small values: keep the event's identity, replace its payload.
    let members = value.as_object_mut()?;
    for key in ["rawInput", "rawOutput"] {
        if let Some(payload) = members.get_mut(key) {
            let removed = payload.to_string().len();
            *payload = Value::String(format!("{CUT_MARKER}{removed} bytes removed]"));
        }
    }
    serialised(&value).filter(|frame| frame.as_bytes().len() <= cap)
}

/// The longest string inside the event's params, leaving out what names it (`type`, the
/// session and turn ids).
fn longest_string(params: &mut Value) -> Option<&mut String> {
    fn walk<'v>(value: &'v mut Value, best: &mut Option<&'v mut String>) {
        match value {
            // Cutting a string no longer than the marker gains nothing.
            Value::String(s)
                if s.len() > MARKER_ROOM && best.as_ref().is_none_or(|b| s.len() > b.len()) =>
            {
                *best = Some(s);
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, best)),
            Value::Object(members) => members.values_mut().for_each(|v| walk(v, best)),
            _ => {}
        }
    }
    let mut best = None;
    params
        .as_object_mut()?
        .iter_mut()
        .filter(|(key, _)| !IDENTITY.contains(&key.as_str()))
        .for_each(|(_, v)| walk(v, &mut best));
    best
}

/// Cuts `remove` bytes (at least) off the end of `s`, at a character boundary, and says so.
fn cut(s: &mut String, remove: usize) {
    let mut keep = s.len().saturating_sub(remove);
    while !s.is_char_boundary(keep) {
        keep -= 1;
    }
    let removed = s.len() - keep;
    s.truncate(keep);
    s.push_str(&format!("{CUT_MARKER}{removed} bytes removed]"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::borrow::Cow;

    const CAP: usize = 1024;

    fn parse(frame: &Notification) -> Value {
        assert!(
            frame.as_bytes().len() <= CAP,
            "{} bytes",
            frame.as_bytes().len()
        );
        serde_json::from_slice(frame.as_bytes()).unwrap()
    }

    #[test]
    fn an_event_that_fits_is_one_frame_as_is() {
        let frames = fit_update("s", Some("t"), Update::chunk(false, "hi"), CAP);
        assert_eq!(frames.len(), 1);
        assert_eq!(parse(&frames[0])["params"]["text"], "hi");
    }

    #[test]
    fn a_long_chunk_is_split_into_chunks_that_join_to_it() {
        // Quotes, control characters and multi-byte characters take more than one byte.
        let text: String = "a\"b\u{1}é🦀\n".repeat(500);
        for thought in [false, true] {
            let frames = fit_update("s", Some("t"), Update::chunk(thought, text.as_str()), CAP);
            assert!(frames.len() > 1);
            let kind = if thought {
                "agent_thought_chunk"
            } else {
                "agent_message_chunk"
            };
            let mut joined = String::new();
            for frame in &frames {
                let update = &parse(frame)["params"];
                assert_eq!(update["type"], kind);
                joined.push_str(update["text"].as_str().unwrap());
            }
            assert_eq!(joined, text);
        }
        let user = Update::UserMessageChunk {
            images: Vec::new(),
            text: Cow::Owned(text.clone()),
        };
        let frames = fit_update("s", None, user, CAP);
        assert!(frames.len() > 1);
        assert_eq!(parse(&frames[0])["params"]["type"], "user_message_chunk");
    }

    #[test]
    fn a_long_tool_output_is_cut_with_a_marker_keeping_its_shape() {
        let output = "x".repeat(5000);
        let update = Update::ToolResult {
            tool_call_id: "c1".into(),
            name: "read_file".into(),
            raw_output: json!(output),
            is_error: false,
        };
        let frames = fit_update("s", Some("t"), update, CAP);
        assert_eq!(frames.len(), 1);
        let update = parse(&frames[0])["params"].clone();
        assert_eq!(update["toolCallId"], "c1");
        let out = update["rawOutput"].as_str().unwrap();
        assert!(out.starts_with("xxx") && out.contains(CUT_MARKER), "{out}");
        assert!(out.ends_with("bytes removed]"));

        // Arguments: an object keeps its members; the long ones are cut.
        let update = Update::ToolCall {
            tool_call_id: "c2".into(),
            name: "write_file".into(),
            raw_input: json!({"path": "a.txt", "content": "y".repeat(3000), "more": "z".repeat(3000)}),
        };
        let update = parse(&fit_update("s", Some("t"), update, CAP)[0])["params"].clone();
        assert_eq!(update["rawInput"]["path"], "a.txt");
        for key in ["content", "more"] {
            assert!(
                update["rawInput"][key]
                    .as_str()
                    .unwrap()
                    .contains(CUT_MARKER)
            );
        }
    }

    #[test]
    fn a_payload_of_many_small_values_is_replaced_by_the_marker() {
        let update = Update::ToolResult {
            tool_call_id: "c1".into(),
            name: "list_dir".into(),
            raw_output: json!((0..2000).collect::<Vec<_>>()),
            is_error: false,
        };
        let frames = fit_update("s", Some("t"), update, CAP);
        let update = parse(&frames[0])["params"].clone();
        assert_eq!(update["name"], "list_dir");
        assert!(
            update["rawOutput"]
                .as_str()
                .unwrap()
                .starts_with(CUT_MARKER)
        );
    }

    #[test]
    fn an_event_whose_identity_passes_the_cap_is_dropped() {
        let update = Update::ToolResult {
            tool_call_id: "c".repeat(2000),
            name: "x".into(),
            raw_output: json!("out"),
            is_error: false,
        };
        // The id is cut like any other long string: the event still goes.
        let frames = fit_update("s", Some("t"), update, CAP);
        assert_eq!(frames.len(), 1);
        assert!(fit_update(&"s".repeat(2000), None, Update::chunk(false, "x"), CAP).is_empty());
    }
}

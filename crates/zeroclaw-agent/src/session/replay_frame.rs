//! A replay's frames written from the stored rows, on the store's thread as its cursor
//! reads them (`Store::replay_page`): no row is copied out of SQLite first.
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
use std::ops::ControlFlow;
use zeroclaw_protocol::events::SESSION_UPDATE;

use super::audience::TextKey;
use super::fit::fit_update;
use super::frame_buf::{FrameBuf, push_json_str};
use crate::history;
use crate::link::Notification;
use crate::store::{MessageKind, RawMessageRef};

/// One page of a replay as it was read: its frames, and what the joining connection's
/// bookkeeping needs of its rows (`audience.rs`).
#[derive(Debug)]
pub struct ReplayPage {
    pub frames: Vec<Notification>,
    /// How many rows it read.
    pub rows: usize,
    /// Its frames' bytes: the page ends once they reach [`PAGE_BYTES`].
    pub bytes: usize,
    /// The id of its last row.
    pub last_id: Option<i64>,
    /// Its answers' and thoughts' (turn, step, thought): what may also be held as chunks.
    pub streamed: Vec<TextKey>,
    /// The frames are cut off this (see `frame_buf.rs`).
    buf: FrameBuf,
}

impl Default for ReplayPage {
    fn default() -> Self {
        Self {
            frames: Vec::new(),
            rows: 0,
            bytes: 0,
            last_id: None,
            streamed: Vec::new(),
            buf: FrameBuf::new(PAGE_BUFFER),
        }
    }
}

/// What a page's buffer grows by when the next frame does not fit: a few dozen frames of
/// a typical history.
const PAGE_BUFFER: usize = 64 * 1024;

/// A page's frames, in bytes, at most (plus the frames of the row that passes it): with
/// the page being sent while the next is read, what a joining connection's replay holds in
/// memory, whatever its rows' sizes.
pub const PAGE_BYTES: usize = 1024 * 1024;

impl ReplayPage {
    /// Whether this is the history's last page: it ended before `limit` rows and not for
    /// its size.
    pub fn is_last(&self, limit: usize) -> bool {
        self.rows < limit && self.bytes < PAGE_BYTES
    }
}

/// Frames one session's rows.
#[derive(Debug)]
pub struct ReplayFramer {
    session_id: String,
    /// The frame up to the session's id: the same for every row.
    head: Vec<u8>,
    cap: usize,
}

impl ReplayFramer {
    /// Frames for `session_id`, each at most `cap` bytes.
    pub fn new(session_id: &str, cap: usize) -> Self {
        let mut head = Vec::with_capacity(96);
        head.extend_from_slice(br#"{"jsonrpc":"2.0","method":"#);
        push_json_str(&mut head, SESSION_UPDATE);
        head.extend_from_slice(br#","params":{"sessionId":"#);
        push_json_str(&mut head, session_id);
        Self {
            session_id: session_id.to_owned(),
            head,
            cap,
        }
    }

    /// Adds `row` (the next, oldest first) to `page`; `Break` once the page is full.
    pub fn add(&self, page: &mut ReplayPage, row: RawMessageRef<'_>) -> ControlFlow<()> {
        let before = page.frames.len();
        self.add_frames(page, row);
        page.bytes += page.frames[before..]
            .iter()
            .map(|f| f.as_bytes().len())
            .sum::<usize>();
        if page.bytes >= PAGE_BYTES {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }

    fn add_frames(&self, page: &mut ReplayPage, row: RawMessageRef<'_>) {
        page.rows += 1;
        page.last_id = Some(row.id);
        if let (MessageKind::Assistant | MessageKind::Thought, Some(turn)) = (row.kind, row.turn_id)
        {
            let thought = row.kind == MessageKind::Thought;
            page.streamed.push((turn.to_owned(), row.step, thought));
        }
        match frame(&mut page.buf, &self.head, &row, self.cap) {
            Some(frame) => page.frames.push(frame),
            None => {
                let mut message = row.to_owned_row().parse();
                let turn_id = message.turn_id.take();
                let event = history::replay_event(message);
                let cap = self.cap;
                page.frames
                    .extend(fit_update(&self.session_id, turn_id.as_deref(), event, cap));
            }
        }
    }
}

/// The one frame of `row`, cut off `buf`, or `None` when the event path must make it.
fn frame(
    buf: &mut FrameBuf,
    head: &[u8],
    row: &RawMessageRef<'_>,
    cap: usize,
) -> Option<Notification> {
    let text = row.text.unwrap_or_default();
    let data = match row.kind {
        MessageKind::ToolCall | MessageKind::ToolResult => one_line_json(row.data)?,
        // A prompt's data says it carried images or came as a steer.
        MessageKind::User if row.data.is_some() => return None,
        MessageKind::User | MessageKind::Assistant | MessageKind::Thought => "",
        _ => return None,
    };
    let call_id = row.tool_call_id.unwrap_or_default();
    let name = row.tool_name.unwrap_or_default();
    let size = head.len()
        + row.turn_id.map_or(0, str::len)
        + text.len()
        + call_id.len()
        + name.len()
        + data.len()
        + 96;
    buf.frame(size + size / 16, cap, |out| {
        out.extend_from_slice(head);
        if let Some(turn) = row.turn_id {
            out.extend_from_slice(br#","turnId":"#);
            push_json_str(out, turn);
        }
        match row.kind {
            MessageKind::ToolCall | MessageKind::ToolResult => {
                let result = row.kind == MessageKind::ToolResult;
                out.extend_from_slice(if result {
                    br#","type":"tool_result","toolCallId":"#
                } else {
                    br#","type":"tool_call","toolCallId":"#
                });
                push_json_str(out, call_id);
                out.extend_from_slice(br#","name":"#);
                push_json_str(out, name);
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
                push_json_str(out, text);
            }
        }
        out.extend_from_slice(b"}}");
    })
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::store::RawMessageRow;

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

    fn borrowed(row: &RawMessageRow) -> RawMessageRef<'_> {
        RawMessageRef {
            id: row.id,
            turn_id: row.turn_id.as_deref(),
            step: row.step,
            kind: row.kind,
            text: row.text.as_deref(),
            tool_call_id: row.tool_call_id.as_deref(),
            tool_name: row.tool_name.as_deref(),
            data: row.data.as_deref(),
            is_error: row.is_error,
            cancelled: row.cancelled,
            created_at: row.created_at,
            hidden: row.hidden,
        }
    }

    /// What the event path makes of `row`.
    fn by_events(row: RawMessageRow, cap: usize) -> Vec<String> {
        by_events_for("sess-\"1\"", row, cap)
    }

    fn by_events_for(session: &str, row: RawMessageRow, cap: usize) -> Vec<String> {
        let mut message = row.parse();
        let turn = message.turn_id.take();
        fit_update(
            session,
            turn.as_deref(),
            history::replay_event(message),
            cap,
        )
        .iter()
        .map(|f| String::from_utf8_lossy(f.as_bytes()).into_owned())
        .collect()
    }

    fn framed(row: &RawMessageRow, cap: usize) -> Vec<String> {
        let mut page = ReplayPage::default();
        let _ = ReplayFramer::new("sess-\"1\"", cap).add(&mut page, borrowed(row));
        assert_eq!((page.rows, page.last_id), (1, Some(row.id)));
        page.frames
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
                            framed(&r, 1 << 20),
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
            let frames = framed(&r, 1000);
            assert!(!frames.is_empty() && frames.iter().all(|f| f.len() <= 1000));
            assert_eq!(frames, by_events(r, 1000), "{kind:?}");
        }
    }

    /// Frames share the page's buffer: those made after it had to grow (a frame bigger
    /// than the room left) and those after a row left to the event path are still whole.
    #[test]
    fn a_pages_frames_stay_whole_as_its_buffer_grows() {
        let framer = ReplayFramer::new("s", 1 << 20);
        let mut page = ReplayPage::default();
        let sizes = [10, 40_000, 30_000, 5, 70_000, 200_000, 1];
        let rows: Vec<RawMessageRow> = sizes
            .iter()
            .enumerate()
            .flat_map(|(i, &n)| {
                let text = format!("{i}{}", "y".repeat(n));
                let answer = row(MessageKind::Assistant, Some(&text), None);
                let left_out = row(MessageKind::Summary, Some(&text), None);
                [answer, left_out]
            })
            .collect();
        for r in &rows {
            let _ = framer.add(&mut page, borrowed(r));
        }
        let expected: Vec<String> = rows
            .into_iter()
            .flat_map(|r| by_events_for("s", r, 1 << 20))
            .collect();
        let got: Vec<String> = page
            .frames
            .iter()
            .map(|f| String::from_utf8_lossy(f.as_bytes()).into_owned())
            .collect();
        assert_eq!(got, expected);
    }

    /// A page ends at the row whose frames take it to `PAGE_BYTES`, and a page ended so is
    /// not the last, however few rows it has.
    #[test]
    fn a_page_of_big_rows_ends_at_its_byte_bound_and_is_not_the_last() {
        let framer = ReplayFramer::new("s", 1 << 20);
        let mut page = ReplayPage::default();
        let big = row(MessageKind::Assistant, Some(&"z".repeat(100_000)), None);
        let mut added = 0;
        while framer.add(&mut page, borrowed(&big)).is_continue() {
            added += 1;
            assert!(added < 100, "the page never filled");
        }
        assert_eq!(page.rows, added + 1);
        assert_eq!(page.rows, PAGE_BYTES.div_ceil(page.bytes / page.rows));
        assert!(page.bytes >= PAGE_BYTES && page.bytes < PAGE_BYTES + 101_000);
        assert!(!page.is_last(1024));

        let mut short = ReplayPage::default();
        let _ = framer.add(&mut short, borrowed(&big));
        assert!(short.is_last(1024) && !short.is_last(1));
    }

    #[test]
    fn a_page_lists_its_streamed_rows_and_its_last_id() {
        let framer = ReplayFramer::new("s", 1 << 20);
        let mut page = ReplayPage::default();
        let mut answer = row(MessageKind::Assistant, Some("a"), None);
        answer.id = 3;
        let mut thought = row(MessageKind::Thought, Some("t"), None);
        thought.id = 4;
        let mut call = row(MessageKind::ToolCall, None, Some("{}"));
        call.id = 5;
        for r in [&answer, &thought, &call] {
            let _ = framer.add(&mut page, borrowed(r));
        }
        assert_eq!(
            (page.rows, page.last_id, page.frames.len()),
            (3, Some(5), 3)
        );
        let turn = answer.turn_id.clone().unwrap();
        assert_eq!(page.streamed, [(turn.clone(), 2, false), (turn, 2, true)]);
    }
}

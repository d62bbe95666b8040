//! Streamed text chunks framed without serde walking the whole event each time.
//!
//! A chunk's `session/update` differs from the one before only in its text: the rest (the
//! method, the session and turn ids, the type) is written once per model call, and each
//! chunk escapes just its text between that prefix and the closing braces. The bytes are
//! exactly those of [`fit_update`](super::fit::fit_update) for the same event (a test
//! compares them); a chunk over the frame cap is left to it, to be split.

use super::frame_buf::{FrameBuf, push_json_str};
use crate::link::Notification;
use zeroclaw_protocol::events::SESSION_UPDATE;

/// The constant parts of one model call's chunk frames.
pub struct ChunkFramer {
    /// Everything before the text's opening quote, for answer and thought chunks.
    message: Vec<u8>,
    thought: Vec<u8>,
    cap: usize,
    /// The frames are cut off this (see `frame_buf.rs`).
    buf: FrameBuf,
}

const SUFFIX: &[u8] = b"}}";

/// What the chunks' buffer grows by: about a hundred typical chunks, and what a frame held
/// for a joining connection may keep alive.
const CHUNK_BUFFER: usize = 16 * 1024;

impl ChunkFramer {
    /// Frames for `turn_id`'s chunks in `session_id`, each at most `cap` bytes.
    pub fn new(session_id: &str, turn_id: &str, cap: usize) -> Self {
        let prefix = |kind: &str| {
            let mut out = Vec::with_capacity(160);
            out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"#);
            push_json_str(&mut out, SESSION_UPDATE);
            out.extend_from_slice(br#","params":{"sessionId":"#);
            push_json_str(&mut out, session_id);
            out.extend_from_slice(br#","turnId":"#);
            push_json_str(&mut out, turn_id);
            out.extend_from_slice(br#","type":"#);
            push_json_str(&mut out, kind);
            out.extend_from_slice(br#","text":"#);
            out
        };
        Self {
            message: prefix("agent_message_chunk"),
            thought: prefix("agent_thought_chunk"),
            cap,
            buf: FrameBuf::new(CHUNK_BUFFER),
        }
    }

    /// The one frame of a chunk, or `None` when it would pass the cap (then the event
    /// goes through `fit_update`, which splits it).
    pub fn frame(&mut self, thought: bool, text: &str) -> Option<Notification> {
        let prefix = if thought {
            &self.thought
        } else {
            &self.message
        };
        // The text's quotes and a little escaping room: usually no growth.
        let estimate = prefix.len() + text.len() + text.len() / 8 + 8;
        self.buf.frame(estimate, self.cap, |out| {
            out.extend_from_slice(prefix);
            push_json_str(out, text);
            out.extend_from_slice(SUFFIX);
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::session::fit::fit_update;
    use zeroclaw_protocol::Update;

    #[test]
    fn a_chunks_frame_is_byte_for_byte_the_one_serde_writes() {
        let mut framer = ChunkFramer::new("sess-\"1\"", "turn\\1", 1 << 20);
        for text in [
            "",
            "tok ",
            "line\nbreak\ttab \"quoted\" back\\slash",
            "\u{0}\u{1f}\u{7f} control",
            "ünïcødé ✻ 🦀",
            "</script>",
        ] {
            for thought in [false, true] {
                let expected = fit_update(
                    "sess-\"1\"",
                    Some("turn\\1"),
                    Update::chunk(thought, text),
                    1 << 20,
                );
                assert_eq!(expected.len(), 1);
                let frame = framer.frame(thought, text).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(frame.as_bytes()),
                    String::from_utf8_lossy(expected[0].as_bytes()),
                    "{text:?}, thought {thought}"
                );
            }
        }
    }

    #[test]
    fn a_chunk_over_the_cap_is_left_to_be_split() {
        let mut framer = ChunkFramer::new("s", "t", 200);
        assert!(framer.frame(false, &"x".repeat(50)).is_some());
        assert!(framer.frame(false, &"x".repeat(200)).is_none());
    }
}

//! The bytes one connection owes the other side and has not written yet.
//!
//! The connection task appends whole NDJSON lines here (its own answers directly, frames
//! from other tasks as it takes them off the outbound queue) and writes from the front
//! whenever the stream takes bytes, so a burst of answers costs one write, not one each.
//! The frame count is exact (a partly written frame still counts), because the peer's
//! no-wedge argument is made in frames: see [`crate::PeerConfig::max_outstanding`].

use std::collections::VecDeque;

/// A buffer that grew past this for one big frame is dropped once it is written, so one
/// large message does not pin its size to an otherwise idle connection.
const RETAINED_BUFFER: usize = 64 * 1024;

#[derive(Debug)]
pub(crate) struct Outbox {
    buf: Vec<u8>,
    /// How much of `buf` the stream has taken.
    written: usize,
    /// Where each frame not yet wholly written ends in `buf`.
    ends: VecDeque<usize>,
    max_frames: usize,
    /// The frame cap. Overflow rule: a longer frame is dropped and logged, never written
    /// (answers are made to fit before they get here: see the peer's `write_answer`).
    max_frame_bytes: usize,
}

impl Outbox {
    pub(crate) fn new(max_frames: usize, max_frame_bytes: usize) -> Self {
        Self {
            buf: Vec::new(),
            written: 0,
            ends: VecDeque::new(),
            max_frames: max_frames.max(1),
            max_frame_bytes,
        }
    }

    /// Whether another frame may be added. Overflow rule: the connection stops reading and
    /// taking from its queue until the other side has read enough (backpressure).
    pub(crate) fn has_room(&self) -> bool {
        self.ends.len() < self.max_frames
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Appends one frame (no newline in it) as a line.
    pub(crate) fn push(&mut self, frame: &[u8]) {
        self.push_with(|buf| buf.extend_from_slice(frame));
    }

    /// Appends one frame that `write` serialises straight into the buffer.
    pub(crate) fn push_with(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        let start = self.buf.len();
        write(&mut self.buf);
        debug_assert!(!self.buf[start..].contains(&b'\n'));
        let size = self.buf.len() - start;
        if size > self.max_frame_bytes {
            self.buf.truncate(start);
            tracing::warn!(
                size,
                limit = self.max_frame_bytes,
                "a frame over the frame cap was dropped, not written"
            );
            return;
        }
        self.buf.push(b'\n');
        self.ends.push_back(self.buf.len());
    }

    /// What is still to be written.
    pub(crate) fn unwritten(&self) -> &[u8] {
        &self.buf[self.written..]
    }

    /// Records that the stream took `n` more bytes.
    pub(crate) fn consumed(&mut self, n: usize) {
        self.written = (self.written + n).min(self.buf.len());
        while self.ends.front().is_some_and(|&end| end <= self.written) {
            self.ends.pop_front();
        }
        if self.written == self.buf.len() {
            self.buf.clear();
            self.written = 0;
            if self.buf.capacity() > RETAINED_BUFFER {
                self.buf = Vec::new();
            }
        } else if self.written >= RETAINED_BUFFER && self.written * 2 >= self.buf.len() {
            // A connection that is never quite caught up must not keep every byte it has
            // sent: drop the written front once it is at least half the buffer.
            self.buf.drain(..self.written);
            for end in &mut self.ends {
                *end -= self.written;
            }
            self.written = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_leave_only_when_wholly_written() {
        let mut out = Outbox::new(2, 16);
        out.push(b"ab");
        out.push(b"cde");
        assert!(!out.has_room());
        assert_eq!(out.unwritten(), b"ab\ncde\n");
        out.consumed(2);
        assert!(
            !out.has_room(),
            "the first frame's newline is not written yet"
        );
        out.consumed(1);
        assert!(out.has_room());
        assert_eq!(out.unwritten(), b"cde\n");
        out.consumed(4);
        assert!(out.is_empty());
        assert_eq!(out.unwritten(), b"");
        out.push_with(|buf| buf.extend_from_slice(b"f"));
        assert_eq!(out.unwritten(), b"f\n");
        // Over the cap: never written.
        out.push(&[b'y'; 17]);
        out.push(&[b'z'; 16]);
        assert_eq!(out.unwritten(), [&b"f\n"[..], &[b'z'; 16], b"\n"].concat());
    }

    #[test]
    fn a_buffer_that_is_never_fully_written_stays_bounded() {
        let mut out = Outbox::new(1_000, 1_000);
        let frame = [b'x'; 999];
        // Always half a frame behind: the buffer never empties.
        out.push(&frame);
        out.consumed(500);
        for _ in 0..10_000 {
            out.push(&frame);
            out.consumed(1_000);
            assert!(out.buf.len() <= 3 * RETAINED_BUFFER, "{}", out.buf.len());
        }
        assert_eq!(out.ends.len(), 1);
        assert_eq!(out.unwritten(), [&frame[500..], b"\n"].concat());
    }
}

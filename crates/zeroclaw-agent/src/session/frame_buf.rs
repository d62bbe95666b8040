//! Where hand-written frames (streamed chunks, replay pages) are written: one buffer that
//! each frame is cut off as shared bytes.
//!
//! A frame of its own allocation is freed by whichever connection task writes it last,
//! usually on another thread than the one that made it, and glibc's malloc then takes the
//! making thread's arena lock: under `perf`, those locks' waits and wake-ups and malloc
//! itself were the largest costs of streaming and of a long replay after serde_json
//! (docs/benchmarks.md). Cut off one buffer, a frame costs a reference count instead, and
//! the buffer is freed once, when its last frame is dropped. A frame still held (an event
//! kept for a joining connection) keeps its buffer alive: at most [`FrameBuf`]'s `grow`
//! bytes each.

use crate::link::Notification;
use bytes::{BufMut, BytesMut};

#[derive(Debug)]
pub struct FrameBuf {
    buf: BytesMut,
    /// What the buffer grows by when the next frame does not fit.
    grow: usize,
}

impl FrameBuf {
    pub fn new(grow: usize) -> Self {
        Self {
            buf: BytesMut::new(),
            grow,
        }
    }

    /// The frame `write` writes (about `estimate` bytes), cut off the buffer, or `None` when
    /// it is longer than `cap` (then nothing of it is kept).
    pub fn frame(
        &mut self,
        estimate: usize,
        cap: usize,
        write: impl FnOnce(&mut BytesMut),
    ) -> Option<Notification> {
        // Every frame made before was cut off: the buffer holds none.
        debug_assert!(self.buf.is_empty());
        if self.buf.capacity() < estimate {
            self.buf.reserve(estimate.max(self.grow));
        }
        write(&mut self.buf);
        if self.buf.len() > cap {
            self.buf.clear();
            return None;
        }
        Some(Notification::from_shared(self.buf.split().freeze()))
    }
}

/// `text` as a JSON string, escaped as serde_json escapes it.
pub fn push_json_str(out: &mut impl BufMut, text: &str) {
    // Serialising a `str` into memory cannot fail.
    let _ = serde_json::to_writer(BufMut::writer(&mut *out), text);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn frames_cut_off_one_buffer_stay_whole_as_it_grows_and_one_over_the_cap_leaves_nothing() {
        let mut buf = FrameBuf::new(64);
        let mut frames = Vec::new();
        for n in [3, 100, 7, 300, 1] {
            let text = "x".repeat(n);
            let frame = buf.frame(n + 2, 1000, |out| push_json_str(out, &text));
            frames.push((frame.unwrap(), format!("\"{text}\"")));
        }
        let long = "y".repeat(2000);
        assert!(
            buf.frame(10, 1000, |out| push_json_str(out, &long))
                .is_none()
        );
        let after = buf.frame(4, 1000, |out| push_json_str(out, "ok")).unwrap();
        for (frame, expected) in &frames {
            assert_eq!(frame.as_bytes(), expected.as_bytes());
        }
        assert_eq!(after.as_bytes(), b"\"ok\"");
    }
}

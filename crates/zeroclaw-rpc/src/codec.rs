//! NDJSON framing: one JSON value per `\n`-terminated line.
//!
//! The decoder is a pure state machine over a byte buffer so it can be driven by any
//! reader, fuzzed, and property-tested without I/O. Its one promise beyond splitting lines
//! is bounded memory: a line longer than the cap is reported once as [`Frame::Oversized`]
//! and the rest of it is thrown away as it arrives, never buffered.

use bytes::{Buf, Bytes, BytesMut};
use std::io;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Default frame cap: 16 MiB of line content (the `\n` is not counted).
pub const DEFAULT_MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// How much the reader asks the OS for per read. Small enough that an idle connection
/// costs little, large enough that a burst of pipelined frames needs few syscalls.
const READ_CHUNK: usize = 4 * 1024;

/// A buffer that grew past this for one big frame is dropped once it is empty, so a single
/// large message does not pin megabytes to an otherwise idle connection.
const RETAINED_BUFFER: usize = 64 * 1024;

/// One unit out of the decoder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A complete line without its `\n` (and without a trailing `\r`). Never blank.
    Line(Bytes),
    /// A line longer than `limit` bytes was seen; it is being discarded up to its newline.
    Oversized { limit: usize },
    /// The end of the oversized line reported just before, at its newline (or at the end of
    /// the stream): its last bytes, at most [`OVERSIZED_TAIL`] of them, without the `\r`.
    /// An answer written by this crate ends with its `id`, so the reader can still tell
    /// which of its requests the discarded line answered.
    OversizedEnd { tail: Bytes },
}

/// How much of an oversized line's end [`Frame::OversizedEnd`] keeps: room for
/// `,"id":"zc-out-<n>"}` and then some.
pub const OVERSIZED_TAIL: usize = 64;

/// Splits a byte stream into frames; see the module docs.
#[derive(Debug)]
pub struct LineDecoder {
    max: usize,
    /// Inside an oversized line: drop bytes until the next `\n`.
    discarding: bool,
    /// Bytes at the start of the buffer already known to hold no `\n`, so a frame that
    /// arrives in many small reads is scanned once, not once per read.
    scanned: usize,
    /// The last bytes of the line being discarded (one more than [`OVERSIZED_TAIL`], for
    /// a `\r` to strip).
    tail: Vec<u8>,
    /// The end of an oversized line that arrived whole, returned by the next call.
    end: Option<Bytes>,
}

impl LineDecoder {
    pub fn new(max_frame_bytes: usize) -> Self {
        Self {
            max: max_frame_bytes,
            discarding: false,
            scanned: 0,
            tail: Vec::new(),
            end: None,
        }
    }

    pub fn max_frame_bytes(&self) -> usize {
        self.max
    }

    /// Takes the next frame out of `buf`, or returns `None` when more bytes are needed.
    /// Whatever it does not return stays in `buf` (at most `max` bytes of it).
    pub fn decode(&mut self, buf: &mut BytesMut) -> Option<Frame> {
        loop {
            if let Some(tail) = self.end.take() {
                return Some(Frame::OversizedEnd { tail });
            }
            if self.discarding {
                match memchr::memchr(b'\n', &buf[..]) {
                    Some(i) => {
                        self.keep_tail(&buf[..i]);
                        buf.advance(i + 1);
                        self.discarding = false;
                        self.scanned = 0;
                        return Some(self.end_of_discarded());
                    }
                    None => {
                        self.keep_tail(buf);
                        buf.clear();
                        release_if_large(buf);
                        return None;
                    }
                }
            }
            match memchr::memchr(b'\n', &buf[self.scanned..]) {
                Some(rel) => {
                    let end = self.scanned + rel;
                    self.scanned = 0;
                    let mut line = buf.split_to(end + 1);
                    line.truncate(end);
                    if line.last() == Some(&b'\r') {
                        line.truncate(end - 1);
                    }
                    if buf.is_empty() {
                        release_if_large(buf);
                    }
                    if line.len() > self.max {
                        let from = line.len() - OVERSIZED_TAIL.min(line.len());
                        self.end = Some(line.split_off(from).freeze());
                        return Some(Frame::Oversized { limit: self.max });
                    }
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    return Some(Frame::Line(line.freeze()));
                }
                // One byte of slack: a line exactly at the cap may still be followed by
                // the `\r` of its `\r\n` before the newline arrives.
                None if buf.len() > self.max + 1 => {
                    self.discarding = true;
                    self.scanned = 0;
                    self.tail.clear();
                    self.keep_tail(buf);
                    buf.clear();
                    release_if_large(buf);
                    return Some(Frame::Oversized { limit: self.max });
                }
                None => {
                    self.scanned = buf.len();
                    return None;
                }
            }
        }
    }

    /// Remembers the last bytes of the line being discarded.
    fn keep_tail(&mut self, bytes: &[u8]) {
        const KEEP: usize = OVERSIZED_TAIL + 1;
        let bytes = &bytes[bytes.len() - KEEP.min(bytes.len())..];
        let excess = (self.tail.len() + bytes.len()).saturating_sub(KEEP);
        self.tail.drain(..excess);
        self.tail.extend_from_slice(bytes);
    }

    fn end_of_discarded(&mut self) -> Frame {
        let mut tail = std::mem::take(&mut self.tail);
        if tail.last() == Some(&b'\r') {
            tail.pop();
        }
        let from = tail.len() - OVERSIZED_TAIL.min(tail.len());
        Frame::OversizedEnd {
            tail: Bytes::copy_from_slice(&tail[from..]),
        }
    }

    /// Whether [`Self::decode`] would return something from `buf` as it is, without more
    /// bytes.
    pub fn has_frame(&self, buf: &BytesMut) -> bool {
        self.end.is_some()
            || memchr::memchr(b'\n', &buf[self.scanned.min(buf.len())..]).is_some()
            || (!self.discarding && buf.len() > self.max + 1)
    }

    /// At end of stream: a final line without its `\n` still counts as a frame, and a line
    /// being discarded ends.
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Option<Frame> {
        if let Some(frame) = self.decode(buf) {
            return Some(frame);
        }
        if self.discarding {
            self.discarding = false;
            buf.clear();
            return Some(self.end_of_discarded());
        }
        if buf.is_empty() {
            return None;
        }
        buf.extend_from_slice(b"\n");
        self.decode(buf)
    }
}

fn release_if_large(buf: &mut BytesMut) {
    if buf.capacity() > RETAINED_BUFFER {
        *buf = BytesMut::new();
    }
}

/// Reads frames from an async byte stream.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    buf: BytesMut,
    decoder: LineDecoder,
    eof: bool,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub fn new(inner: R, max_frame_bytes: usize) -> Self {
        Self {
            inner,
            buf: BytesMut::new(),
            decoder: LineDecoder::new(max_frame_bytes),
            eof: false,
        }
    }

    /// Whether the next frame (or the end of the stream) is already known, so
    /// [`Self::next_frame`] will not read.
    pub fn has_frame(&self) -> bool {
        self.eof || self.decoder.has_frame(&self.buf)
    }

    /// The next frame, or `None` at end of stream.
    pub async fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        loop {
            if let Some(frame) = self.decoder.decode(&mut self.buf) {
                return Ok(Some(frame));
            }
            if self.eof {
                return Ok(self.decoder.decode_eof(&mut self.buf));
            }
            self.buf.reserve(READ_CHUNK);
            if self.inner.read_buf(&mut self.buf).await? == 0 {
                self.eof = true;
            }
        }
    }
}

/// Writes frames as NDJSON lines, coalescing a batch into one write.
#[derive(Debug)]
pub struct FrameWriter<W> {
    inner: W,
    buf: Vec<u8>,
}

impl<W: AsyncWrite + Unpin> FrameWriter<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            buf: Vec::new(),
        }
    }

    /// Writes each frame followed by `\n`. Frames must not contain a raw newline, which
    /// serde_json's compact output never does.
    pub async fn write_frames(&mut self, frames: &[Vec<u8>]) -> io::Result<()> {
        self.buf.clear();
        for frame in frames {
            debug_assert!(!frame.contains(&b'\n'));
            self.buf.extend_from_slice(frame);
            self.buf.push(b'\n');
        }
        self.inner.write_all(&self.buf).await?;
        self.inner.flush().await?;
        if self.buf.capacity() > RETAINED_BUFFER {
            self.buf = Vec::new();
        }
        Ok(())
    }

    /// Writes a prefix of `bytes` (whole lines, newlines included); cancel-safe.
    pub async fn write_bytes(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.inner.write(bytes).await
    }

    pub async fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().await
    }

    pub async fn shutdown(&mut self) -> io::Result<()> {
        self.inner.shutdown().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(decoder: &mut LineDecoder, buf: &mut BytesMut) -> Vec<Frame> {
        std::iter::from_fn(|| decoder.decode(buf)).collect()
    }

    fn line(s: &str) -> Frame {
        Frame::Line(Bytes::copy_from_slice(s.as_bytes()))
    }

    #[test]
    fn splits_lines_strips_cr_and_skips_blank_lines() {
        let mut d = LineDecoder::new(100);
        let mut buf = BytesMut::from(&b"{\"a\":1}\r\n\n  \r\n{\"b\":2}\n{\"c\""[..]);
        assert_eq!(
            frames(&mut d, &mut buf),
            vec![line("{\"a\":1}"), line("{\"b\":2}")]
        );
        assert_eq!(&buf[..], b"{\"c\"");
    }

    #[test]
    fn byte_at_a_time_yields_the_same_frame() {
        let mut d = LineDecoder::new(100);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for b in b"{\"x\":[1,2,3]}\n" {
            buf.extend_from_slice(&[*b]);
            out.extend(frames(&mut d, &mut buf));
        }
        assert_eq!(out, vec![line("{\"x\":[1,2,3]}")]);
    }

    #[test]
    fn oversized_line_is_reported_once_and_discarded_without_buffering() {
        let mut d = LineDecoder::new(8);
        let mut buf = BytesMut::new();
        buf.extend_from_slice(b"1234567890");
        assert_eq!(d.decode(&mut buf), Some(Frame::Oversized { limit: 8 }));
        assert!(buf.is_empty());
        for _ in 0..100 {
            buf.extend_from_slice(b"xxxxxxxxxxxxxxxx");
            assert_eq!(d.decode(&mut buf), None);
            assert!(buf.is_empty(), "discarded bytes must not accumulate");
        }
        buf.extend_from_slice(b"tail\r\n{}\n");
        let mut end = vec![b'x'; OVERSIZED_TAIL - 4];
        end.extend_from_slice(b"tail");
        assert_eq!(
            frames(&mut d, &mut buf),
            vec![
                Frame::OversizedEnd {
                    tail: Bytes::from(end)
                },
                line("{}")
            ]
        );
    }

    #[test]
    fn oversized_line_arriving_whole_is_reported() {
        let mut d = LineDecoder::new(4);
        let mut buf = BytesMut::from(&b"12345\n1234\n"[..]);
        assert_eq!(
            frames(&mut d, &mut buf),
            vec![
                Frame::Oversized { limit: 4 },
                Frame::OversizedEnd {
                    tail: Bytes::from_static(b"12345")
                },
                line("1234")
            ]
        );
    }

    #[test]
    fn line_exactly_at_the_cap_is_accepted() {
        let mut d = LineDecoder::new(4);
        let mut buf = BytesMut::from(&b"1234"[..]);
        assert_eq!(d.decode(&mut buf), None);
        buf.extend_from_slice(b"\n");
        assert_eq!(d.decode(&mut buf), Some(line("1234")));
    }

    #[test]
    fn line_at_the_cap_with_crlf_split_across_reads_is_accepted() {
        let mut d = LineDecoder::new(4);
        let mut buf = BytesMut::from(&b"1234\r"[..]);
        assert_eq!(d.decode(&mut buf), None);
        buf.extend_from_slice(b"\n");
        assert_eq!(d.decode(&mut buf), Some(line("1234")));
        let mut buf = BytesMut::from(&b"12345\r"[..]);
        assert_eq!(d.decode(&mut buf), Some(Frame::Oversized { limit: 4 }));
        // The end of the stream ends the discarded line too.
        assert_eq!(
            d.decode_eof(&mut buf),
            Some(Frame::OversizedEnd {
                tail: Bytes::from_static(b"12345")
            })
        );
        assert_eq!(d.decode_eof(&mut buf), None);
    }

    #[test]
    fn final_line_without_newline_counts_at_eof() {
        let mut d = LineDecoder::new(100);
        let mut buf = BytesMut::from(&b"{}"[..]);
        assert_eq!(d.decode(&mut buf), None);
        assert_eq!(d.decode_eof(&mut buf), Some(line("{}")));
        assert_eq!(d.decode_eof(&mut buf), None);
    }

    #[tokio::test]
    async fn has_frame_says_whether_the_next_frame_needs_a_read() {
        let (mut a, b) = tokio::io::duplex(64);
        let mut r = FrameReader::new(b, 1024);
        assert!(!r.has_frame());
        a.write_all(b"{\"a\":1}\n{\"b\"").await.unwrap();
        assert_eq!(r.next_frame().await.unwrap(), Some(line("{\"a\":1}")));
        assert!(!r.has_frame(), "only part of the next line is buffered");
        a.write_all(b":2}\n{}\n").await.unwrap();
        assert_eq!(r.next_frame().await.unwrap(), Some(line("{\"b\":2}")));
        assert!(r.has_frame(), "the empty object is buffered whole");
        assert_eq!(r.next_frame().await.unwrap(), Some(line("{}")));
        drop(a);
        assert_eq!(r.next_frame().await.unwrap(), None);
        assert!(r.has_frame(), "the end of the stream is known");
    }

    #[tokio::test]
    async fn reader_and_writer_round_trip() {
        let (a, b) = tokio::io::duplex(64);
        let mut w = FrameWriter::new(a);
        let mut r = FrameReader::new(b, 1024);
        let writer = tokio::spawn(async move {
            w.write_frames(&[b"{\"a\":1}".to_vec(), b"[2]".to_vec()])
                .await
                .unwrap();
        });
        assert_eq!(r.next_frame().await.unwrap(), Some(line("{\"a\":1}")));
        assert_eq!(r.next_frame().await.unwrap(), Some(line("[2]")));
        writer.await.unwrap();
        assert_eq!(r.next_frame().await.unwrap(), None);
    }
}

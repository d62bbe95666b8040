//! `LineDecoder` over arbitrary bytes split at arbitrary points.
//!
//! Input layout: byte 0 = `k`; the next `k % 16` bytes are chunk lengths (each `b + 1`,
//! used cyclically); the rest is the byte stream. For three caps (a tiny one derived from
//! byte 0, 64, and the default) the chunked feed must yield exactly the frames of the whole
//! feed, both must match a line-by-line model of the framing rules, nothing may panic, and
//! the buffer must never hold more than `max + 1` bytes between reads (`max + 1 + chunk`
//! right after one).
#![no_main]

use bytes::{Bytes, BytesMut};
use libfuzzer_sys::fuzz_target;
use zeroclaw_rpc::DEFAULT_MAX_FRAME_BYTES;
use zeroclaw_rpc::codec::{Frame, LineDecoder};

fuzz_target!(|input: &[u8]| {
    let Some((&head, rest)) = input.split_first() else {
        return;
    };
    let n = usize::from(head % 16).min(rest.len());
    let (lens, data) = rest.split_at(n);
    let chunks: Vec<usize> = if lens.is_empty() {
        vec![1]
    } else {
        lens.iter().map(|&b| usize::from(b) + 1).collect()
    };
    let tiny = usize::from(head >> 4) + 1;
    for max in [tiny, 64, DEFAULT_MAX_FRAME_BYTES] {
        let whole = feed_whole(max, data);
        let chunked = feed_chunked(max, data, &chunks);
        assert_eq!(whole, chunked, "max {max}: chunking changed the frames");
        assert_eq!(
            whole,
            model(max, data),
            "max {max}: frames differ from the model"
        );
    }
});

fn drain(decoder: &mut LineDecoder, buf: &mut BytesMut, out: &mut Vec<Frame>) {
    while let Some(frame) = decoder.decode(buf) {
        out.push(frame);
    }
}

fn finish(decoder: &mut LineDecoder, buf: &mut BytesMut, out: &mut Vec<Frame>) {
    drain(decoder, buf, out);
    while let Some(frame) = decoder.decode_eof(buf) {
        out.push(frame);
    }
    assert!(buf.is_empty(), "bytes left over after end of stream");
}

fn feed_whole(max: usize, data: &[u8]) -> Vec<Frame> {
    let mut decoder = LineDecoder::new(max);
    let mut buf = BytesMut::from(data);
    let mut out = Vec::new();
    finish(&mut decoder, &mut buf, &mut out);
    out
}

fn feed_chunked(max: usize, data: &[u8], chunks: &[usize]) -> Vec<Frame> {
    let mut decoder = LineDecoder::new(max);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut rest = data;
    for &len in chunks.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at(len.min(rest.len()));
        rest = tail;
        buf.extend_from_slice(chunk);
        assert!(buf.len() <= max + 1 + chunk.len());
        drain(&mut decoder, &mut buf, &mut out);
        assert!(
            buf.len() <= max + 1,
            "decoder holds {} bytes with cap {max}",
            buf.len()
        );
    }
    finish(&mut decoder, &mut buf, &mut out);
    out
}

/// The framing rules, one line at a time: split on `\n`, drop one trailing `\r`, a line
/// longer than `max` is `Oversized`, a blank (all ASCII whitespace) line is skipped, and a
/// final line without `\n` still counts.
fn model(max: usize, data: &[u8]) -> Vec<Frame> {
    let mut out = Vec::new();
    let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > max {
            out.push(Frame::Oversized { limit: max });
        } else if !line.iter().all(u8::is_ascii_whitespace) {
            out.push(Frame::Line(Bytes::copy_from_slice(line)));
        }
    }
    out
}

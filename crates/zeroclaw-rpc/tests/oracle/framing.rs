//! The NDJSON framing rules as a line-by-line model, and the two ways of feeding a
//! `LineDecoder` (whole, and in chunks) whose frames must both match it. Included by
//! `fuzz/fuzz_targets/codec_chunking.rs` as well as by the property tests.

use bytes::{Bytes, BytesMut};
use zeroclaw_rpc::codec::{Frame, LineDecoder, OVERSIZED_TAIL};

/// The framing rules, one line at a time: split on `\n`, drop one trailing `\r`, a line
/// longer than `max` is `Oversized` followed by `OversizedEnd` with its last
/// `OVERSIZED_TAIL` bytes, a blank (all ASCII whitespace) line is skipped, and a
/// final line without `\n` still counts.
pub fn frames(max: usize, data: &[u8]) -> Vec<Frame> {
    let mut out = Vec::new();
    let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > max {
            out.push(Frame::Oversized { limit: max });
            out.push(oversized_end(line));
        } else if !line.iter().all(u8::is_ascii_whitespace) {
            out.push(Frame::Line(Bytes::copy_from_slice(line)));
        }
    }
    out
}

/// What follows `Oversized`: the line's last bytes.
pub fn oversized_end(line: &[u8]) -> Frame {
    let from = line.len().saturating_sub(OVERSIZED_TAIL);
    Frame::OversizedEnd {
        tail: Bytes::copy_from_slice(&line[from..]),
    }
}

/// `data` cut into pieces of `sizes` (used cyclically).
pub fn chunked<'a>(data: &'a [u8], sizes: &'a [usize]) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut rest = data;
    sizes.iter().cycle().map_while(move |&n| {
        if rest.is_empty() {
            return None;
        }
        let (chunk, tail) = rest.split_at(n.min(rest.len()));
        rest = tail;
        Some(chunk)
    })
}

/// The frames of `data` handed to the decoder in one piece.
pub fn decode_whole(max: usize, data: &[u8]) -> Vec<Frame> {
    let mut decoder = LineDecoder::new(max);
    let mut buf = BytesMut::from(data);
    let mut out = Vec::new();
    finish(&mut decoder, &mut buf, &mut out);
    out
}

/// The frames of `data` handed to the decoder in pieces of `sizes`; the decoder must never
/// hold more than `max + 1` bytes between reads (`max + 1 + chunk` right after one).
pub fn decode_chunked(max: usize, data: &[u8], sizes: &[usize]) -> Vec<Frame> {
    let mut decoder = LineDecoder::new(max);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for chunk in chunked(data, sizes) {
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

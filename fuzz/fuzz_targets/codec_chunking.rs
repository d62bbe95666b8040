//! `LineDecoder` over arbitrary bytes split at arbitrary points.
//!
//! Input layout: byte 0 = `k`; the next `k % 16` bytes are chunk lengths (each `b + 1`,
//! used cyclically); the rest is the byte stream. For three caps (a tiny one derived from
//! byte 0, 64, and the default) the chunked feed must yield exactly the frames of the whole
//! feed, both must match a line-by-line model of the framing rules, nothing may panic, and
//! the buffer must never hold more than `max + 1` bytes between reads (`max + 1 + chunk`
//! right after one).
#![no_main]

/// The framing model and decoder feeds, shared with `crates/zeroclaw-rpc/tests/properties.rs`.
#[path = "../../crates/zeroclaw-rpc/tests/oracle/framing.rs"]
mod framing;

use libfuzzer_sys::fuzz_target;
use zeroclaw_rpc::DEFAULT_MAX_FRAME_BYTES;

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
        let whole = framing::decode_whole(max, data);
        let chunked = framing::decode_chunked(max, data, &chunks);
        assert_eq!(whole, chunked, "max {max}: chunking changed the frames");
        assert_eq!(
            whole,
            framing::frames(max, data),
            "max {max}: frames differ from the model"
        );
    }
});

//! The frame cap on the writing side, and what a discarded oversized line still tells: an
//! answer over the cap is replaced by a `-32603` naming it, so the caller is answered either
//! way; the tail of an oversized answer names the request it answered.

use super::HandlerResult;
use crate::message::{Id, RpcError, write_response};
use crate::outbox::Outbox;

pub(super) fn reply(out: &mut Outbox, id: &Id, outcome: &HandlerResult, max_frame_bytes: usize) {
    out.push_with(|buf| write_answer(buf, id, outcome, max_frame_bytes));
}

/// Appends the answer, or, when it would pass the frame cap, a `-32603` that names the cap
/// in its place: the caller is answered either way (a reader drops a line over its cap).
pub(super) fn write_answer(
    buf: &mut Vec<u8>,
    id: &Id,
    outcome: &HandlerResult,
    max_frame_bytes: usize,
) {
    let start = buf.len();
    write_response(buf, id, outcome);
    let size = buf.len() - start;
    if size > max_frame_bytes {
        buf.truncate(start);
        tracing::warn!(
            size,
            limit = max_frame_bytes,
            "an answer over the frame cap was replaced by an error"
        );
        write_response(
            buf,
            id,
            &Err(RpcError::answer_too_large(size, max_frame_bytes)),
        );
    }
}

/// The id a discarded line answered, from its last bytes ([`Frame::OversizedEnd`]): an
/// answer this crate writes ends `"id":"zc-out-<n>"}`. Only one brace may follow the id,
/// so it is the frame's own member (a nested object ending the frame would be followed by
/// two), and `"id":"` cannot occur inside a string, whose quotes are escaped.
///
/// [`Frame::OversizedEnd`]: crate::codec::Frame::OversizedEnd
pub(super) fn answered_id(tail: &[u8]) -> Option<&str> {
    let rest = tail.strip_suffix(b"\"}")?;
    let open = rest.iter().rposition(|&b| b == b'"')?;
    rest[..open].strip_suffix(b"\"id\":")?;
    let id = std::str::from_utf8(&rest[open + 1..]).ok()?;
    let n = id.strip_prefix("zc-out-")?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(id)
}

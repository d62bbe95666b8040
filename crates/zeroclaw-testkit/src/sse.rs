//! Server-sent events as the streaming builders write them: one event's bytes, and a text
//! cut into the pieces of its deltas.

/// Splits `s` into `n` pieces of as-equal-as-possible length in characters
/// (never inside a UTF-8 character). Fewer pieces come back when `s` has fewer
/// than `n` characters; an empty `s` (or `n == 0`) gives one empty piece.
pub fn split_evenly(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let n = n.clamp(1, chars.len().max(1));
    let base = chars.len() / n;
    let extra = chars.len() % n;
    let mut out = Vec::with_capacity(n);
    let mut at = 0;
    for i in 0..n {
        let len = base + usize::from(i < extra);
        out.push(chars[at..at + len].iter().collect());
        at += len;
    }
    out
}

/// Frames one SSE event: optional `event:` line, one `data:` line, blank line.
pub(crate) fn sse_event(event: Option<&str>, data: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 32);
    if let Some(name) = event {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(name.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(data.as_bytes());
    out.extend_from_slice(b"\n\n");
    out
}

//! Bytes as text for the model: lossy decoding, and cuts on character boundaries.

/// `bytes` as text: valid UTF-8 as is, otherwise decoded lossily. Returns whether it was lossy.
pub(super) fn lossy_utf8(bytes: Vec<u8>) -> (String, bool) {
    match String::from_utf8(bytes) {
        Ok(s) => (s, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    }
}

/// The longest prefix of `bytes` that does not end in the middle of a UTF-8 sequence.
/// (Only an incomplete sequence at the very end is dropped; invalid bytes elsewhere stay.)
pub(super) fn utf8_head(bytes: &[u8]) -> &[u8] {
    // A sequence is at most 4 bytes: look at the last up-to-3 bytes for an unfinished lead.
    let len = bytes.len();
    for back in 1..=len.min(3) {
        let b = bytes[len - back];
        if b & 0b1100_0000 == 0b1000_0000 {
            continue; // continuation byte; keep looking for its lead
        }
        let need = if b & 0b1110_0000 == 0b1100_0000 {
            2
        } else if b & 0b1111_0000 == 0b1110_0000 {
            3
        } else if b & 0b1111_1000 == 0b1111_0000 {
            4
        } else {
            1
        };
        return if need > back {
            &bytes[..len - back]
        } else {
            bytes
        };
    }
    bytes
}

/// `bytes` without leading UTF-8 continuation bytes (at most 3), so a tail cut out of
/// the middle of a text starts on a character boundary.
pub(super) fn utf8_tail(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|b| *b & 0b1100_0000 == 0b1000_0000)
        .count();
    &bytes[skip..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_boundaries() {
        let s = "aé€😀".as_bytes(); // 1 + 2 + 3 + 4 bytes
        for cut in 0..=s.len() {
            let h = utf8_head(&s[..cut]);
            assert!(std::str::from_utf8(h).is_ok(), "head {cut}");
            assert!(cut - h.len() < 4);
            let t = utf8_tail(&s[cut..]);
            assert!(std::str::from_utf8(t).is_ok(), "tail {cut}");
        }
        assert_eq!(utf8_head(b"ab\xff"), b"ab\xff"); // invalid, not incomplete: kept
        assert_eq!(utf8_head("é".as_bytes()), "é".as_bytes());
    }
}

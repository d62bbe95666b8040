//! Which of a conversation's images one model request carries, and the note that stands
//! for each one it does not.
//!
//! A stored prompt's images are sent again on every later turn, so without a bound a few
//! large ones would take a request past what providers accept (Anthropic: 32 MB) and every
//! turn would fail until compaction. A request carries the newest images up to
//! [`MAX_REQUEST_IMAGE_BYTES`] and [`MAX_REQUEST_IMAGES`]; a model that takes no images
//! gets none. Each image left out becomes a short text note in its prompt, so the model
//! knows one was there.

/// The most image bytes (decoded) one request carries: 20 MiB, about 27 MiB in base64,
/// within Anthropic's 32 MB request limit with room for the text.
pub const MAX_REQUEST_IMAGE_BYTES: usize = 20 * 1024 * 1024;

/// The most images one request carries: Anthropic's limit per request.
pub const MAX_REQUEST_IMAGES: usize = 100;

/// Why an image of the conversation is a note in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsent {
    /// The provider or model of the request takes no images.
    TextOnly,
    /// Newer images took the request's bound.
    OverBound,
}

/// How many of the images whose sizes are `newest_first` one request carries: the newest,
/// up to the bounds. The first that would go over ends them, so an older, smaller image is
/// never sent in place of a newer one.
pub fn newest_within_bound(newest_first: impl IntoIterator<Item = usize>) -> usize {
    let mut total = 0usize;
    newest_first
        .into_iter()
        .take(MAX_REQUEST_IMAGES)
        .take_while(|size| {
            total = total.saturating_add(*size);
            total <= MAX_REQUEST_IMAGE_BYTES
        })
        .count()
}

/// The note standing for an image of type `mime_type` and `size` bytes that a request does
/// not carry: `[image image/png, 12 KiB, not shown: this model does not take images]`.
pub fn note(mime_type: &str, size: usize, why: Unsent) -> String {
    let reason = match why {
        Unsent::TextOnly => "this model does not take images".to_owned(),
        Unsent::OverBound => format!(
            "a request carries only the newest {} MiB of images",
            MAX_REQUEST_IMAGE_BYTES / (1024 * 1024)
        ),
    };
    format!(
        "[image {mime_type}, {}, not shown: {reason}]",
        shown_size(size)
    )
}

/// A prompt's `text` with `notes` (one per image left out) before it, where Anthropic
/// puts the images; a prompt of images alone becomes its notes.
pub fn with_notes(text: &str, notes: impl IntoIterator<Item = String>) -> String {
    let mut out = notes.into_iter().collect::<Vec<_>>().join("\n");
    if !text.is_empty() {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(text);
    }
    out
}

/// A size as the dashboard says it: bytes below 1 KiB, KiB rounded up below 1 MiB, then
/// MiB with one decimal, rounded up.
fn shown_size(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..MIB => format!("{} KiB", bytes.div_ceil(1024)),
        _ => format!(
            "{:.1} MiB",
            bytes.saturating_mul(10).div_ceil(MIB) as f64 / 10.0
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1024 * 1024;

    #[test]
    fn the_newest_images_are_carried_up_to_the_bound() {
        assert_eq!(newest_within_bound([]), 0);
        assert_eq!(newest_within_bound([MIB; 3]), 3);
        assert_eq!(newest_within_bound([10 * MIB, 10 * MIB, 1]), 2);
        // An older small one is not sent in place of the newer one that did not fit.
        assert_eq!(newest_within_bound([15 * MIB, 6 * MIB, 1]), 1);
        assert_eq!(newest_within_bound([1; 150]), MAX_REQUEST_IMAGES);
    }

    #[test]
    fn a_note_names_the_image_and_why_it_is_not_shown() {
        assert_eq!(
            note("image/png", 70, Unsent::TextOnly),
            "[image image/png, 70 bytes, not shown: this model does not take images]"
        );
        assert_eq!(
            note("image/jpeg", 5 * MIB, Unsent::OverBound),
            "[image image/jpeg, 5.0 MiB, not shown: a request carries only the newest 20 MiB of images]"
        );
        assert_eq!(shown_size(12 * 1024 + 1), "13 KiB");
        assert_eq!(shown_size(MIB + 1), "1.1 MiB");
        assert_eq!(with_notes("", ["[a]".into()]), "[a]");
        assert_eq!(
            with_notes("hi", ["[a]".into(), "[b]".into()]),
            "[a]\n[b]\n\nhi"
        );
        assert_eq!(with_notes("hi", []), "hi");
    }
}

//! Quantities as the screen says them: sizes in bytes.

/// `812 B`, `1.2 KB`, `4.8 MB`.
pub fn size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

/// A prompt image's size, the same in the line under a prompt being sent and in a replay:
/// exact below 1 KiB (`70 bytes`), else as [`size`].
pub fn image_size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else {
        size(bytes)
    }
}

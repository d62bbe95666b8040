//! Images a prompt carries as content blocks (`session/prompt`'s `content`, docs/protocol.md
//! §9): named by an `@shot.png` mention (under the session's directory, as `mentions.rs` finds them), or
//! by a line of the prompt that is only the path of an image file (a pasted path, from
//! anywhere). The type is the file's extension (PNG, JPEG, GIF, WebP); the client library
//! reads the file and refuses one over 5 MiB. An image that cannot be attached stops the
//! prompt: it is not sent without it.

use crate::term::sanitize;
use std::path::{Path, PathBuf};
use zeroclaw_client::protocol::methods::{ContentBlock, MAX_CONTENT_BLOCKS, MAX_CONTENT_BYTES};

/// An image attached to the prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    /// How the prompt named it: the mention's path, or a pasted path's file name.
    pub label: String,
    pub size: u64,
    pub block: ContentBlock,
}

/// The image at `path` (resolved), labelled `label`; the error says why not, naming it.
pub fn attach(path: &Path, label: &str) -> Result<Image, String> {
    let cannot = |why: &str| {
        // The library's reason names the whole path first: the label says it shorter.
        let prefix = format!("{}: ", path.display());
        let why = why.strip_prefix(&prefix).unwrap_or(why);
        format!("cannot attach {}: {}", sanitize(label), sanitize(why))
    };
    let block = zeroclaw_client::image_block(path).map_err(|why| cannot(&why))?;
    let size = std::fs::metadata(path)
        .map_err(|e| cannot(&e.to_string()))?
        .len();
    Ok(Image {
        label: label.to_owned(),
        size,
        block,
    })
}

/// The error for an image mention naming no file that may be attached.
pub fn not_found(mention: &str, why: &str) -> String {
    format!("cannot attach @{}: {why}", sanitize(mention))
}

/// The image file a line of the prompt is the path of, alone: absolute, `~/…`, or relative
/// to the session's directory `root`; quoted (`'/my shot.png'`) or with its spaces escaped
/// (`/my\ shot.png`), as terminals paste a dropped file. `None` when the line is anything
/// else, or names no existing file with an image's extension (then it is only text).
pub fn pasted_path(line: &str, root: &Path) -> Option<PathBuf> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('@') {
        return None;
    }
    let quoted = [('\'', '\''), ('"', '"')].iter().find_map(|(open, close)| {
        line.strip_prefix(*open)
            .and_then(|l| l.strip_suffix(*close))
            .map(str::to_owned)
    });
    let written = quoted.unwrap_or_else(|| unescape(line));
    zeroclaw_client::image_type(Path::new(&written))?;
    let path = match written.strip_prefix("~/") {
        Some(rest) => std::env::home_dir()?.join(rest),
        None => root.join(&written),
    };
    path.is_file().then(|| path.canonicalize().unwrap_or(path))
}

/// A shell-escaped path as typed (`my\ shot.png`) without its backslashes. On Windows a
/// backslash separates the path's parts and is kept.
fn unescape(line: &str) -> String {
    if cfg!(windows) {
        return line.to_owned();
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// Why the prompt cannot carry all of `images` (the daemon's limits, said before sending).
pub fn too_many(images: &[Image]) -> Option<String> {
    if images.len() > MAX_CONTENT_BLOCKS {
        return Some(format!(
            "{} images: a prompt takes at most {MAX_CONTENT_BLOCKS}",
            images.len()
        ));
    }
    let total: u64 = images.iter().map(|i| i.size).sum();
    (total > MAX_CONTENT_BYTES as u64).then(|| {
        format!(
            "the images come to {}, over the {} a prompt takes",
            crate::units::size(total),
            crate::units::size(MAX_CONTENT_BYTES as u64)
        )
    })
}

/// The line under the prompt saying an image goes with it: `[image: shot.png, 70 bytes]`.
pub fn echo(image: &Image) -> String {
    let size = crate::units::image_size(image.size);
    format!("[image: {}, {size}]", sanitize(&image.label))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";

    #[test]
    fn a_line_that_is_only_an_image_path_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("my shot.png"), PNG).unwrap();
        std::fs::write(root.join("notes.txt"), "x").unwrap();
        let want = Some(root.join("my shot.png"));
        let absolute = root.join("my shot.png").display().to_string();
        assert_eq!(pasted_path(&format!("  '{absolute}' "), &root), want);
        assert_eq!(pasted_path(&format!("\"{absolute}\""), &root), want);
        #[cfg(unix)]
        assert_eq!(pasted_path(&absolute.replace(' ', "\\ "), &root), want);
        assert_eq!(pasted_path("my shot.png", &root), want);
        // Not a path alone, not an image, not there: only text.
        assert_eq!(pasted_path("look at my shot.png", &root), None);
        assert_eq!(pasted_path("notes.txt", &root), None);
        assert_eq!(pasted_path("gone.png", &root), None);
        assert_eq!(pasted_path("@my shot.png", &root), None);
    }

    #[test]
    fn an_image_is_attached_with_its_size_or_refused_saying_why() {
        let dir = tempfile::tempdir().unwrap();
        let shot = dir.path().join("shot.png");
        std::fs::write(&shot, PNG).unwrap();
        let image = attach(&shot, "shot.png").unwrap();
        assert_eq!(image.size, 8);
        assert_eq!(echo(&image), "[image: shot.png, 8 bytes]");
        assert!(
            matches!(image.block, ContentBlock::Image { ref mime_type, .. } if mime_type == "image/png")
        );

        let big = dir.path().join("big.png");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(zeroclaw_client::protocol::methods::MAX_IMAGE_BYTES as u64 + 1)
            .unwrap();
        let why = attach(&big, "big.png").unwrap_err();
        assert!(
            why.starts_with("cannot attach big.png: ") && why.contains("5 MiB"),
            "{why}"
        );
        assert!(!why.contains(&dir.path().display().to_string()), "{why}");

        let eleven = vec![image; MAX_CONTENT_BLOCKS + 1];
        assert!(too_many(&eleven).unwrap().contains("at most 10"));
        assert_eq!(too_many(&eleven[..2]), None);
    }
}

//! An image file as a prompt's content block (`session/prompt`'s `content`), for the
//! clients that attach files by path: `zeroclaw prompt --image`, zerocode's `@file.png`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use std::path::Path;
use zeroclaw_protocol::{ContentBlock, MAX_IMAGE_BYTES};

/// The image type a file name says, by its extension; `None` for other files.
pub fn image_type(path: &Path) -> Option<&'static str> {
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return None,
    })
}

/// The image at `path` as a content block; the error says what is wrong, naming the file.
/// A file over [`MAX_IMAGE_BYTES`] is refused before it is read.
pub fn image_block(path: &Path) -> Result<ContentBlock, String> {
    let shown = path.display();
    let Some(mime_type) = image_type(path) else {
        return Err(format!(
            "{shown}: not a PNG, JPEG, GIF or WebP image (by its extension)"
        ));
    };
    let size = std::fs::metadata(path)
        .map_err(|e| format!("{shown}: {e}"))?
        .len();
    if size > MAX_IMAGE_BYTES as u64 {
        return Err(format!(
            "{shown}: {size} bytes, over the limit of {MAX_IMAGE_BYTES} bytes (5 MiB) per image"
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{shown}: {e}"))?;
    Ok(ContentBlock::Image {
        mime_type: mime_type.to_owned(),
        data: STANDARD.encode(bytes),
        uri: None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_file_becomes_a_block_by_its_extension() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("shot.PNG");
        std::fs::write(&png, b"\x89PNG\r\n\x1a\n").unwrap();
        let block = image_block(&png).unwrap();
        assert_eq!(
            block,
            ContentBlock::Image {
                mime_type: "image/png".into(),
                data: STANDARD.encode(b"\x89PNG\r\n\x1a\n"),
                uri: None
            }
        );
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "x").unwrap();
        assert!(image_block(&text).unwrap_err().contains("not a PNG, JPEG"));
        let missing = image_block(&dir.path().join("gone.jpg")).unwrap_err();
        assert!(missing.contains("gone.jpg"), "{missing}");
        let big = dir.path().join("big.gif");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_IMAGE_BYTES as u64 + 1)
            .unwrap();
        assert!(image_block(&big).unwrap_err().contains("5 MiB"));
    }
}

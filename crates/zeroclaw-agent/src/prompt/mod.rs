//! A prompt as a turn takes it: its text, with the resources `session/prompt`'s `content`
//! sent folded in after it, and its images, each checked against the limits of
//! `content.rs` (zeroclaw-protocol) — a type the providers take, bytes that are that type,
//! sizes within bounds — so a bad block is refused before anything runs.

pub mod sent_images;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use std::sync::Arc;
use zeroclaw_protocol::{
    ContentBlock, IMAGE_TYPES, MAX_CONTENT_BLOCKS, MAX_CONTENT_BYTES, MAX_IMAGE_BYTES,
    MAX_RESOURCE_TEXT_BYTES,
};

/// What a turn is given to answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prompt {
    pub text: String,
    pub images: Vec<Image>,
}

/// An image sent with a prompt: its type (one of [`IMAGE_TYPES`]) and its bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    pub mime_type: String,
    pub data: Arc<[u8]>,
}

impl Image {
    /// The bytes in base64, as both providers' wire formats take them.
    pub fn base64(&self) -> String {
        STANDARD.encode(&self.data)
    }

    /// Whether `data` starts as an image of type `mime_type` does (its magic number).
    fn looks_like(mime_type: &str, data: &[u8]) -> bool {
        match mime_type {
            "image/png" => data.starts_with(b"\x89PNG\r\n\x1a\n"),
            "image/jpeg" => data.starts_with(&[0xFF, 0xD8, 0xFF]),
            "image/gif" => data.starts_with(b"GIF87a") || data.starts_with(b"GIF89a"),
            "image/webp" => data.len() >= 12 && &data[..4] == b"RIFF" && &data[8..12] == b"WEBP",
            _ => false,
        }
    }
}

impl From<String> for Prompt {
    fn from(text: String) -> Self {
        Self {
            text,
            images: Vec::new(),
        }
    }
}

impl From<&str> for Prompt {
    fn from(text: &str) -> Self {
        Self::from(text.to_owned())
    }
}

impl Prompt {
    /// `text` and `content` checked and combined: text resources and resource links are
    /// appended to the text in order, images kept. The error names the block and the
    /// limit, for `-32602`.
    pub fn from_content(text: String, content: Vec<ContentBlock>) -> Result<Self, String> {
        if content.len() > MAX_CONTENT_BLOCKS {
            return Err(format!(
                "content: at most {MAX_CONTENT_BLOCKS} blocks per prompt, got {}",
                content.len()
            ));
        }
        let mut prompt = Prompt::from(text);
        let mut total = 0usize;
        for (i, block) in content.into_iter().enumerate() {
            let at = |problem: String| format!("content[{i}]: {problem}");
            match block {
                ContentBlock::Image {
                    mime_type, data, ..
                } => {
                    let image = image(&mime_type, &data).map_err(at)?;
                    total += image.data.len();
                    prompt.images.push(image);
                }
                ContentBlock::ResourceLink { uri, name, .. } => {
                    total += uri.len() + name.len();
                    prompt
                        .text
                        .push_str(&format!("\n\n[attached resource link: {name} <{uri}>]"));
                }
                ContentBlock::Resource { resource } => match (resource.text, resource.blob) {
                    (Some(text), None) => {
                        if text.len() > MAX_RESOURCE_TEXT_BYTES {
                            return Err(at(format!(
                                "the resource's text is {} bytes, over the limit of {MAX_RESOURCE_TEXT_BYTES} bytes (1 MiB) per resource",
                                text.len()
                            )));
                        }
                        total += text.len();
                        prompt.text.push_str(&format!(
                            "\n\n<resource uri=\"{}\">\n{text}\n</resource>",
                            resource.uri
                        ));
                    }
                    (None, Some(blob)) => {
                        let mime_type = resource.mime_type.unwrap_or_default();
                        if !mime_type.starts_with("image/") {
                            return Err(at(format!(
                                "a resource's `blob` must be an image (one of {}), got {mime_type:?}; send other resources as `text`",
                                IMAGE_TYPES.join(", ")
                            )));
                        }
                        let image = image(&mime_type, &blob).map_err(at)?;
                        total += image.data.len();
                        prompt.images.push(image);
                    }
                    _ => {
                        return Err(at(
                            "a resource has either `text` or `blob`, exactly one".into()
                        ));
                    }
                },
            }
            if total > MAX_CONTENT_BYTES {
                return Err(format!(
                    "content: the blocks come to more than the limit of {MAX_CONTENT_BYTES} bytes (10 MiB) per prompt"
                ));
            }
        }
        Ok(prompt)
    }
}

/// An image block's bytes, checked.
fn image(mime_type: &str, data: &str) -> Result<Image, String> {
    if !IMAGE_TYPES.contains(&mime_type) {
        return Err(format!(
            "images of type {mime_type:?} are not taken; send one of {}",
            IMAGE_TYPES.join(", ")
        ));
    }
    // Decoded size from the encoded length, so an oversized image is refused unread.
    let decoded = data.len() / 4 * 3;
    if decoded > MAX_IMAGE_BYTES + 3 {
        return Err(format!(
            "the image is about {decoded} bytes, over the limit of {MAX_IMAGE_BYTES} bytes (5 MiB) per image"
        ));
    }
    let bytes = STANDARD
        .decode(data)
        .map_err(|e| format!("the image's `data` is not base64 ({e})"))?;
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(format!(
            "the image is {} bytes, over the limit of {MAX_IMAGE_BYTES} bytes (5 MiB) per image",
            bytes.len()
        ));
    }
    if !Image::looks_like(mime_type, &bytes) {
        return Err(format!("the image's bytes are not a {mime_type} image"));
    }
    Ok(Image {
        mime_type: mime_type.to_owned(),
        data: bytes.into(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use zeroclaw_protocol::EmbeddedResource;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn image_block(mime: &str, bytes: &[u8]) -> ContentBlock {
        ContentBlock::Image {
            mime_type: mime.into(),
            data: STANDARD.encode(bytes),
            uri: None,
        }
    }

    #[test]
    fn resources_fold_into_the_text_and_images_are_kept() {
        let prompt = Prompt::from_content(
            "look".into(),
            vec![
                image_block("image/png", PNG),
                ContentBlock::ResourceLink {
                    uri: "file:///w/a.rs".into(),
                    name: "a.rs".into(),
                    mime_type: None,
                },
                ContentBlock::Resource {
                    resource: EmbeddedResource {
                        uri: "file:///w/b.md".into(),
                        mime_type: None,
                        text: Some("B".into()),
                        blob: None,
                    },
                },
            ],
        )
        .unwrap();
        assert_eq!(
            prompt.text,
            "look\n\n[attached resource link: a.rs <file:///w/a.rs>]\n\n<resource uri=\"file:///w/b.md\">\nB\n</resource>"
        );
        assert_eq!(prompt.images.len(), 1);
        assert_eq!(&*prompt.images[0].data, PNG);
        assert_eq!(prompt.images[0].base64(), STANDARD.encode(PNG));
    }

    #[test]
    fn bad_blocks_are_refused_by_name() {
        let refuse =
            |blocks: Vec<ContentBlock>| Prompt::from_content("p".into(), blocks).unwrap_err();
        let err = refuse(vec![image_block("image/bmp", b"BM")]);
        assert!(
            err.starts_with("content[0]: images of type \"image/bmp\""),
            "{err}"
        );
        let err = refuse(vec![image_block("image/png", b"GIF89a...")]);
        assert_eq!(
            err,
            "content[0]: the image's bytes are not a image/png image"
        );
        let mut big = PNG.to_vec();
        big.resize(MAX_IMAGE_BYTES + 1, 0);
        let err = refuse(vec![image_block("image/png", &big)]);
        assert!(
            err.contains("over the limit of 5242880 bytes (5 MiB) per image"),
            "{err}"
        );
        let err = refuse(vec![ContentBlock::Image {
            mime_type: "image/png".into(),
            data: "not base64!".into(),
            uri: None,
        }]);
        assert!(err.contains("is not base64"), "{err}");
        let err = refuse(vec![image_block("image/png", PNG); MAX_CONTENT_BLOCKS + 1]);
        assert_eq!(err, "content: at most 10 blocks per prompt, got 11");
        let mut large = PNG.to_vec();
        large.resize(MAX_IMAGE_BYTES - 10, 0);
        let err = refuse(vec![image_block("image/png", &large); 3]);
        assert!(err.contains("10 MiB) per prompt"), "{err}");
        let blob = ContentBlock::Resource {
            resource: EmbeddedResource {
                uri: "file:///x.pdf".into(),
                mime_type: Some("application/pdf".into()),
                text: None,
                blob: Some(STANDARD.encode(b"%PDF")),
            },
        };
        assert!(refuse(vec![blob]).contains("must be an image"));
    }
}

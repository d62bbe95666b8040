//! What a prompt may carry besides its text (`session/prompt`'s `content`): ACP-shaped
//! content blocks — images, links to resources, embedded resources — with their limits,
//! and `session/attachment`, which answers a stored image's bytes (a history shows only a
//! reference, [`ImageRef`], so replay pages stay small).

use serde::{Deserialize, Serialize};

method!(
    /// A stored prompt image's bytes, by the `attachmentId` a history gave.
    SessionAttachment, "session/attachment", AttachmentParams, AttachmentResult
);

/// At most this many blocks in one prompt's `content` (-32602 beyond).
pub const MAX_CONTENT_BLOCKS: usize = 10;
/// An image's (or a resource blob's) largest size, decoded: 5 MiB, what providers take.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;
/// An embedded text resource's largest `text`, in bytes.
pub const MAX_RESOURCE_TEXT_BYTES: usize = 1024 * 1024;
/// All of one prompt's content blocks together, decoded: 10 MiB.
pub const MAX_CONTENT_BYTES: usize = 10 * 1024 * 1024;
/// The image types every provider takes.
pub const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// One block of a prompt's `content`, as ACP shapes it. Members ACP has and the daemon does
/// not use (`annotations`, a link's `title`, `description`, `size`) are accepted and
/// ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ContentBlock {
    /// An image: `data` is its bytes in base64 (standard alphabet, padded).
    #[serde(rename_all = "camelCase")]
    Image {
        mime_type: String,
        data: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uri: Option<String>,
    },
    /// A resource named, not sent: the model is told its name and URI (a file it can read
    /// with its tools, say).
    #[serde(rename_all = "camelCase")]
    ResourceLink {
        uri: String,
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    /// A resource sent whole: its text goes to the model after the prompt; a blob must be
    /// an image.
    Resource { resource: EmbeddedResource },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EmbeddedResource {
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The resource's text; or
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// its bytes, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

/// A prompt's image as a history shows it (`user_message_chunk`'s and `session/messages`'
/// `images`): what it is, and the id `session/attachment` takes for its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ImageRef {
    pub attachment_id: String,
    pub mime_type: String,
    /// Its size in bytes, decoded.
    pub size: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttachmentParams {
    pub session_id: String,
    pub attachment_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AttachmentResult {
    pub mime_type: String,
    /// The bytes, base64.
    pub data: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_read_as_acp_writes_them() {
        let blocks: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "image", "mimeType": "image/png", "data": "iVBO", "annotations": null},
            {"type": "resource_link", "uri": "file:///a.rs", "name": "a.rs", "size": 3},
            {"type": "resource", "resource": {"uri": "file:///b.md", "text": "hi", "mimeType": "text/markdown"}},
        ]))
        .unwrap();
        assert_eq!(
            blocks[0],
            ContentBlock::Image {
                mime_type: "image/png".into(),
                data: "iVBO".into(),
                uri: None
            }
        );
        assert!(matches!(&blocks[1], ContentBlock::ResourceLink { name, .. } if name == "a.rs"));
        assert!(
            matches!(&blocks[2], ContentBlock::Resource { resource } if resource.text.as_deref() == Some("hi"))
        );
        let unknown = serde_json::from_value::<ContentBlock>(json!({"type": "audio", "data": ""}));
        assert!(unknown.is_err());
    }
}

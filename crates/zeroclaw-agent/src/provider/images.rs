//! Whether a model takes images, so a prompt with images to one that does not is refused
//! with a clear message before the call (rather than the provider's error, or worse, a
//! model that silently ignores them); and the images each request carries ([`fit`]), per
//! provider of the route: the session's model may have changed since an image was sent,
//! and a `[[fallback]]` may take none.

use super::ChatMessage;
use crate::config::ProviderConfig;
use crate::prompt::sent_images::{Unsent, newest_within_bound, note, with_notes};
use std::borrow::Cow;

/// Name prefixes of well-known text-only models (after any `vendor/`, lowercased); a name
/// that also says `vision` or `-vl` takes images whatever its prefix.
const TEXT_ONLY: &[&str] = &[
    "gpt-3.5",
    "o1-mini",
    "o3-mini",
    "deepseek-",
    "codellama",
    "llama2",
    "llama3",
    "qwen2.5-coder",
    "smollm",
];

/// Whether `model` takes images: `[provider] images` when set, else not for the names of
/// [`TEXT_ONLY`], else yes (a provider that does not will say so).
pub fn takes_images(config: &ProviderConfig, model: &str) -> bool {
    config.images.unwrap_or_else(|| {
        let name = model.rsplit('/').next().unwrap_or(model).to_lowercase();
        let sees = name.contains("vision") || name.contains("-vl");
        sees || !TEXT_ONLY.iter().any(|prefix| name.starts_with(prefix))
    })
}

/// `messages` as a request to a model that does (`takes`) or does not take images carries
/// them: the newest images within the request's bound (`prompt/sent_images.rs`), none to a
/// model that takes none; each other image becomes a note in its prompt's text. Borrowed
/// when every image goes as it is.
pub fn fit(messages: &[ChatMessage], takes: bool) -> Cow<'_, [ChatMessage]> {
    // Newest first: the last message's last image first.
    let images = || {
        messages.iter().rev().flat_map(|m| {
            match m {
                ChatMessage::User { images, .. } => images.as_slice(),
                _ => &[],
            }
            .iter()
            .rev()
        })
    };
    let count = images().count();
    let carried = if takes {
        newest_within_bound(images().map(|i| i.data.len()))
    } else {
        0
    };
    if carried == count {
        return Cow::Borrowed(messages);
    }
    let why = if takes {
        Unsent::OverBound
    } else {
        Unsent::TextOnly
    };
    // The oldest ones are left out: walk from the start, noting until enough are.
    let mut left_out = count - carried;
    let mut out = messages.to_vec();
    for message in &mut out {
        if left_out == 0 {
            break;
        }
        if let ChatMessage::User { text, images } = message {
            let noted: Vec<_> = images.drain(..left_out.min(images.len())).collect();
            left_out -= noted.len();
            if !noted.is_empty() {
                let notes = noted.iter().map(|i| note(&i.mime_type, i.data.len(), why));
                *text = with_notes(text, notes);
            }
        }
    }
    Cow::Owned(out)
}

/// What an image costs in tokens, for the request's estimate: its base64 is not what the
/// model reads. About what Anthropic charges for a 1-megapixel image (pixels / 750).
pub const IMAGE_TOKENS: u64 = 1_600;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::Image;

    fn prompt(text: &str, sizes: &[usize]) -> ChatMessage {
        ChatMessage::User {
            text: text.into(),
            images: sizes
                .iter()
                .map(|&size| Image {
                    mime_type: "image/png".into(),
                    data: vec![0; size].into(),
                })
                .collect(),
        }
    }

    fn shape(messages: &[ChatMessage]) -> Vec<(String, usize)> {
        messages
            .iter()
            .map(|m| match m {
                ChatMessage::User { text, images } => (text.clone(), images.len()),
                _ => (String::new(), 0),
            })
            .collect()
    }

    #[test]
    fn a_request_carries_the_newest_images_within_the_bound_and_notes_the_rest() {
        const MIB: usize = 1024 * 1024;
        let messages = vec![
            prompt("one", &[8 * MIB, 8 * MIB]),
            ChatMessage::user("between"),
            prompt("two", &[8 * MIB; 3]),
        ];
        assert!(matches!(fit(&messages[..1], true), Cow::Borrowed(_)));
        let over = "[image image/png, 8.0 MiB, not shown: a request carries only the newest 20 MiB of images]";
        assert_eq!(
            shape(&fit(&messages, true)),
            [
                (format!("{over}\n{over}\n\none"), 0),
                ("between".into(), 0),
                (format!("{over}\n\ntwo"), 2),
            ]
        );
        let none = "[image image/png, 8.0 MiB, not shown: this model does not take images]";
        assert_eq!(
            shape(&fit(&messages[2..], false)),
            [(format!("{none}\n{none}\n{none}\n\ntwo"), 0)]
        );
        let text_only = [ChatMessage::user("hi")];
        assert!(matches!(fit(&text_only, false), Cow::Borrowed(_)));
    }

    #[test]
    fn known_text_only_names_take_no_images_unless_configured() {
        let config = ProviderConfig::default();
        assert!(!takes_images(&config, "llama3.2"));
        assert!(!takes_images(&config, "deepseek/deepseek-chat"));
        assert!(takes_images(&config, "llama3.2-vision"));
        assert!(takes_images(&config, "claude-sonnet-4-5"));
        assert!(takes_images(&config, "gpt-4o"));
        let configured = ProviderConfig {
            images: Some(true),
            ..ProviderConfig::default()
        };
        assert!(takes_images(&configured, "llama3.2"));
        let refused = ProviderConfig {
            images: Some(false),
            ..ProviderConfig::default()
        };
        assert!(!takes_images(&refused, "gpt-4o"));
    }
}

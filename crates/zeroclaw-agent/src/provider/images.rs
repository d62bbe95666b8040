//! Whether a model takes images, so a prompt with images to one that does not is refused
//! with a clear message before the call (rather than the provider's error, or worse, a
//! model that silently ignores them).

use crate::config::ProviderConfig;

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

/// What an image costs in tokens, for the request's estimate: its base64 is not what the
/// model reads. About what Anthropic charges for a 1-megapixel image (pixels / 750).
pub const IMAGE_TOKENS: u64 = 1_600;

#[cfg(test)]
mod tests {
    use super::*;

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

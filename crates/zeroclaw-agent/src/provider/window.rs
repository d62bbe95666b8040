//! How much a model can read: its context window, and an estimate of what a request takes
//! of it.
//!
//! The estimate counts the bytes of the request as sent (about four per token for English
//! text and code; `Provider::estimate`) and is calibrated by what the provider reports: a call's `input_tokens` divided by the estimate
//! of its request gives the ratio the next estimate is multiplied by.

/// The window of a model nobody configured and this table does not know: small enough for
/// the local models people run (llama.cpp's and Ollama's defaults are smaller still, so
/// set `provider.context_window` to the server's context size).
pub const FALLBACK_WINDOW: u64 = 8192;

/// Context windows of well-known models, by name prefix (the first match wins).
const KNOWN: &[(&str, u64)] = &[
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("claude-", 200_000),
    ("gemini-", 1_048_576),
    ("deepseek-", 128_000),
    ("mistral-large", 128_000),
];

/// The context window of `model`: configured, known, or [`FALLBACK_WINDOW`].
pub fn context_window(configured: Option<u64>, model: &str) -> u64 {
    configured.unwrap_or_else(|| {
        let model = model.rsplit('/').next().unwrap_or(model);
        KNOWN
            .iter()
            .find(|(prefix, _)| model.starts_with(prefix))
            .map_or(FALLBACK_WINDOW, |(_, window)| *window)
    })
}

/// Bytes per token assumed before a provider has reported any usage.
const BYTES_PER_TOKEN: u64 = 4;
/// Tokens `bytes` of text take, uncalibrated.
pub fn tokens_of(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(BYTES_PER_TOKEN)
}

/// Tokens per estimated token, learnt from the provider's reports; starts at 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration(f64);

impl Default for Calibration {
    fn default() -> Self {
        Self(1.0)
    }
}

impl Calibration {
    /// Learns from a call whose request was estimated at `estimated` and which the provider
    /// said took `reported` input tokens. Bounded to 0.25–4, so one odd report (a server that
    /// counts nothing, or counts a cache) cannot make compaction run on every call or never.
    pub fn learn(&mut self, estimated: u64, reported: u64) {
        if estimated > 0 && reported > 0 {
            self.0 = (reported as f64 / estimated as f64).clamp(0.25, 4.0);
        }
    }

    /// About how many bytes of text take `tokens` as the provider counts them.
    pub fn bytes_for(&self, tokens: u64) -> usize {
        (tokens as f64 * BYTES_PER_TOKEN as f64 / self.0) as usize
    }

    /// `estimated` as the provider would count it.
    pub fn apply(&self, estimated: u64) -> u64 {
        (estimated as f64 * self.0).ceil() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_come_from_the_config_then_the_table_then_the_fallback() {
        assert_eq!(context_window(Some(4096), "gpt-4o"), 4096);
        assert_eq!(context_window(None, "gpt-4o-mini"), 128_000);
        assert_eq!(context_window(None, "claude-sonnet-4-5"), 200_000);
        assert_eq!(context_window(None, "openai/gpt-4.1"), 1_047_576);
        assert_eq!(context_window(None, "llama3.2"), FALLBACK_WINDOW);
    }

    #[test]
    fn calibration_follows_reports_within_bounds() {
        let mut c = Calibration::default();
        assert_eq!(c.apply(100), 100);
        c.learn(100, 150);
        assert_eq!(c.apply(100), 150);
        c.learn(100, 1);
        assert_eq!(c.apply(100), 25);
        c.learn(0, 10);
        assert_eq!(c.apply(100), 25);
    }
}

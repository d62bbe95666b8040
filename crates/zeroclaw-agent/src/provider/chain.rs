//! Fallback routing: a model call tries the configured provider, and when it fails before
//! any output (its retries spent), each `[[fallback]]` in order. Which errors may move on,
//! and how each provider of the route is named in events and errors, are decided here;
//! the turn (`turn/step.rs`) and compaction walk the route.

use super::{ErrorKind, Provider, ProviderError};

/// One provider of a model call's route, with the model it is asked for.
#[derive(Debug, Clone, Copy)]
pub struct Hop<'a> {
    pub provider: &'a Provider,
    /// The session's model for the primary; a fallback's own `model`.
    pub model: &'a str,
}

impl Hop<'_> {
    /// How events and errors name it: `<model> at <base URL without credentials>`.
    pub fn label(&self) -> String {
        format!("{} at {}", self.model, self.provider.shown_url())
    }

    /// The context window of its model: its own table's `context_window`, else known by
    /// the model's name (`window.rs`).
    pub fn context_window(&self) -> u64 {
        super::window::context_window(self.provider.config.context_window, self.model)
    }

    /// What its calls cost: its own table's `pricing` (validation sees that every provider
    /// of a route has one, or none has).
    pub fn pricing(&self) -> Option<crate::config::Pricing> {
        self.provider.config.pricing
    }
}

impl Provider {
    /// The providers a model call tries, in order: this one asked for `model` (the
    /// session's), then each `[[fallback]]` asked for its own `model`. Each call starts
    /// again from the first: a fallback serves one call, never the session.
    pub fn route<'a>(&'a self, model: &'a str) -> Vec<Hop<'a>> {
        let primary = Hop {
            provider: self,
            model,
        };
        std::iter::once(primary)
            .chain(self.fallbacks.iter().map(|fallback| Hop {
                provider: fallback,
                model: &fallback.config.model,
            }))
            .collect()
    }
}

/// Whether a failure of the route's hop `index` lets the call move on to the next hop.
/// A refusal of the conversation as too long for the primary does not: the turn compacts
/// and asks the primary again (`turn/compact.rs`). Anything else does, as long as no
/// output has been shown (the caller's part).
pub fn may_fall_back(index: usize, error: &ProviderError) -> bool {
    index > 0 || error.kind != ErrorKind::ContextLength
}

/// The error a call whose every hop failed ends with, given each hop's label and error in
/// route order: the primary's (its kind and status, so the error's data still names the
/// configured provider), its message followed by what became of each fallback tried.
pub fn exhausted(failures: Vec<(String, ProviderError)>) -> ProviderError {
    let mut failures = failures.into_iter();
    let Some((_, mut primary)) = failures.next() else {
        return ProviderError::new(ErrorKind::Provider, "the model call had no provider to try");
    };
    for (label, error) in failures {
        primary.message.push_str(&format!(
            "; the fallback provider {label} failed too ({})",
            error.reason()
        ));
    }
    primary
}

/// A hop's failure after part of its answer was shown: not tried elsewhere (that would
/// show a second answer after half of the first), and the message says so when a
/// fallback was left untried.
pub fn after_output(mut error: ProviderError, untried: usize) -> ProviderError {
    if untried > 0 {
        error.message.push_str(
            " (not tried on a fallback provider: part of the answer had already streamed)",
        );
    }
    error
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::config::{Config, ProviderConfig};

    #[test]
    fn the_route_is_the_primary_with_the_sessions_model_then_each_fallback_with_its_own() {
        let config = Config {
            fallback: vec![ProviderConfig {
                base_url: "http://user:pw@backup:8080/v1".into(),
                model: "small".into(),
                ..ProviderConfig::default()
            }],
            ..Config::default()
        };
        let provider = Provider::configured(&config).unwrap();
        let labels: Vec<String> = provider.route("big").iter().map(Hop::label).collect();
        assert_eq!(
            labels,
            [
                "big at http://127.0.0.1:11434/v1",
                "small at http://backup:8080/v1"
            ]
        );
    }

    #[test]
    fn only_the_primarys_context_refusal_stays_with_the_primary() {
        let too_long = ProviderError::new(ErrorKind::ContextLength, "too long");
        let down = ProviderError::new(ErrorKind::Unreachable, "down");
        assert!(!may_fall_back(0, &too_long));
        assert!(may_fall_back(1, &too_long));
        assert!(may_fall_back(0, &down));
        let error = exhausted(vec![
            ("p at v".into(), down.clone()),
            ("m at u".into(), too_long),
        ]);
        assert_eq!(
            error.message,
            "down; the fallback provider m at u failed too (conversation too long for the model)"
        );
        assert_eq!(after_output(down.clone(), 0).message, "down");
        assert!(after_output(down, 1).message.contains("already streamed"));
    }
}

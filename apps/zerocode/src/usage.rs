//! The session's usage as the status line says it: how full the model's context window is
//! (`ctx 12% (3.1k/32k)`) and what the session has cost so far (`$0.0123`, when
//! `[provider.pricing]` gives a price). Filled from `session/usage` when a session is
//! entered, then from each `usage_update` of its turns (docs/protocol.md §9, §10).

use zeroclaw_client::protocol::methods::{SessionUsageResult, UsageReport};

/// What the status line shows of the session's usage.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gauge {
    /// The input tokens of the session's last model call: the conversation's size.
    pub context_used: u64,
    /// The model's context window; 0 when the daemon did not say.
    pub context_size: u64,
    /// The session's cost so far, in the currency of the configured prices.
    pub cost: Option<Money>,
}

/// A cost and its currency, as the daemon reports them (`cost` and `currency` beside it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Money {
    pub amount: f64,
    /// The ISO 4217 code (`USD`, `EUR`); the daemon validates it at start-up.
    currency: [u8; 3],
}

impl Money {
    /// `amount` in `currency`; a code that is not three ASCII letters (an older daemon
    /// sends none: its prices were in dollars by its docs) counts as `USD`.
    pub fn new(amount: f64, currency: Option<&str>) -> Self {
        let currency = match currency.map(str::as_bytes) {
            Some(&[a, b, c]) if [a, b, c].iter().all(u8::is_ascii_alphabetic) => {
                [a, b, c].map(|l| l.to_ascii_uppercase())
            }
            _ => *b"USD",
        };
        Self { amount, currency }
    }

    /// `amount` of a report whose costs are in `currency`; `None` without a price.
    pub fn of(amount: Option<f64>, currency: Option<&str>) -> Option<Self> {
        amount.map(|amount| Self::new(amount, currency))
    }
}

/// `$0.0123` in dollars, `0.0123 EUR` in any other currency: four decimals, so that a
/// single call's fraction of a cent shows; a cost too small for them is `<$0.0001`
/// (`<0.0001 EUR`), not a misleading zero. Budgets (`$0.0123 of $0.0100`) say it the same
/// way.
impl std::fmt::Display for Money {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let below = self.amount > 0.0 && self.amount < 0.000_05;
        let (less, amount) = if below {
            ("<", 0.0001)
        } else {
            ("", self.amount)
        };
        match &self.currency {
            b"USD" => write!(f, "{less}${amount:.4}"),
            code => write!(f, "{less}{amount:.4} {}", String::from_utf8_lossy(code)),
        }
    }
}

impl Gauge {
    /// After a model call of the session's own turn (a subagent's counts are its child's).
    pub fn from_report(report: &UsageReport) -> Self {
        Self {
            context_used: report.context_used,
            context_size: report.context_size,
            cost: Money::of(report.session.cost, report.currency.as_deref()),
        }
    }

    /// The session's totals, as `session/usage` answers them.
    pub fn from_session(usage: &SessionUsageResult) -> Self {
        Self {
            context_used: usage.context_used,
            context_size: usage.context_size,
            cost: Money::of(usage.totals.cost, usage.currency.as_deref()),
        }
    }

    /// `ctx 12% (3.1k/32k)`; `None` before the session's first model call (nothing is
    /// known of the conversation's size yet).
    pub fn context(&self) -> Option<String> {
        if self.context_used == 0 {
            return None;
        }
        let used = tokens(self.context_used);
        if self.context_size == 0 {
            return Some(format!("ctx {used}"));
        }
        let percent =
            (self.context_used.saturating_mul(100) + self.context_size / 2) / self.context_size;
        Some(format!(
            "ctx {percent}% ({used}/{})",
            tokens(self.context_size)
        ))
    }

    /// `$0.0123` (see [`Money`]); `None` without a price.
    pub fn cost(&self) -> Option<String> {
        self.cost.map(|cost| cost.to_string())
    }
}

/// The session's usage in a line, as `/status` shows it: `6400 in · 30 out tokens over 1
/// turn · ctx 10% (3.3k/32k) · $0.0131` (the gauge and cost when known; `estimated` when a
/// provider reported none and the daemon counted).
pub fn summary(usage: &SessionUsageResult) -> String {
    let totals = &usage.totals;
    let turns = match usage.turns {
        1 => "1 turn".to_owned(),
        n => format!("{n} turns"),
    };
    let mut parts = vec![format!(
        "{} in · {} out tokens over {turns}",
        totals.input_tokens, totals.output_tokens
    )];
    let gauge = Gauge::from_session(usage);
    parts.extend(gauge.context());
    parts.extend(gauge.cost());
    if totals.estimated {
        parts.push("estimated".into());
    }
    parts.join(" · ")
}

/// A token count in a few characters: `950`, `3.1k`, `32k`, `1.2M`.
pub fn tokens(n: u64) -> String {
    fn trimmed(value: f64, unit: &str) -> String {
        let text = format!("{value:.1}");
        format!("{}{unit}", text.strip_suffix(".0").unwrap_or(&text))
    }
    match n {
        0..1_000 => n.to_string(),
        1_000..9_950 => trimmed(n as f64 / 1_000.0, "k"),
        9_950..999_500 => format!("{}k", (n + 500) / 1_000),
        _ => trimmed(n as f64 / 1_000_000.0, "M"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_read_in_a_few_characters() {
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(1_000), "1k");
        assert_eq!(tokens(3_100), "3.1k");
        assert_eq!(tokens(9_960), "10k");
        assert_eq!(tokens(32_000), "32k");
        assert_eq!(tokens(128_000), "128k");
        assert_eq!(tokens(1_048_576), "1M");
        assert_eq!(tokens(1_250_000), "1.2M");
    }

    #[test]
    fn the_gauge_says_the_share_of_the_window_and_the_cost() {
        let gauge = Gauge {
            context_used: 3_100,
            context_size: 32_000,
            cost: Money::of(Some(0.012_34), Some("USD")),
        };
        assert_eq!(gauge.context().as_deref(), Some("ctx 10% (3.1k/32k)"));
        assert_eq!(gauge.cost().as_deref(), Some("$0.0123"));
        let unknown_window = Gauge {
            context_size: 0,
            cost: None,
            ..gauge
        };
        assert_eq!(unknown_window.context().as_deref(), Some("ctx 3.1k"));
        assert_eq!(unknown_window.cost(), None);
        // Before any model call: nothing to say about the context.
        assert_eq!(Gauge::default().context(), None);
        let money = |amount, currency| Money::new(amount, currency).to_string();
        assert_eq!(money(0.000_01, Some("USD")), "<$0.0001");
        assert_eq!(money(0.0, None), "$0.0000");
        assert_eq!(money(1.5, Some("USD")), "$1.5000");
        // Any other currency by its code, as the daemon's budget texts say it.
        assert_eq!(money(0.42, Some("EUR")), "0.4200 EUR");
        assert_eq!(money(0.000_01, Some("eur")), "<0.0001 EUR");
        assert_eq!(money(2.0, Some("dollars")), "$2.0000");
    }
}

//! `[[webhooks]]` and `[[schedules]]`: turns with no person attached (docs/unattended.md).
//! Everything that can be wrong with an entry is found here, at start-up, and named: an
//! unknown placeholder, a bad cron expression, a missing `cwd`. An unset `secret_env` is
//! not a config error (the hook is inactive and answers 503): see `runs/`.

use super::Policy;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use zeroclaw_agent::sandbox::UnattendedSandbox;

/// Runs one hook or schedule may have waiting, by default.
pub const DEFAULT_QUEUE: usize = 16;
/// The largest webhook body accepted, by default (GitHub's are rarely above 100 KiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// How long a signed body already seen is a repeat under the GitHub scheme, by default: 7
/// days, longer than GitHub's and most senders' redelivery periods.
pub const DEFAULT_REPLAY_WINDOW_SECS: u64 = 7 * 24 * 60 * 60;
/// The longest `replay_window_secs` accepted (a year): the hashes kept stay bounded.
pub const MAX_REPLAY_WINDOW_SECS: u64 = 366 * 24 * 60 * 60;

/// How a webhook delivery proves itself (docs/unattended.md, "What a signature covers").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Signature {
    /// `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`: the body only.
    #[default]
    Github,
    /// Standard Webhooks: `webhook-id`, `webhook-timestamp` and the body, signed together.
    Standard,
}

impl Signature {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Github => "github",
            Self::Standard => "standard",
        }
    }
}

/// Where a run's turn runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionMode {
    /// A new session per run, titled `<name> YYYY-MM-DD HH:MM`.
    #[default]
    New,
    /// One session per hook or schedule, created on first use.
    Shared,
}

/// One `[[webhooks]]` entry: `POST /hooks/<name>` on the gateway.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    pub name: String,
    /// The variable holding the HMAC key; the key itself is never stored.
    pub secret_env: String,
    pub cwd: PathBuf,
    pub prompt: String,
    /// Per tool `"allow"`, `"deny"` or `"ask"`; tools not named follow `[approvals]` with
    /// `"ask"` turned into `"deny"`.
    #[serde(default)]
    pub approve: BTreeMap<String, Policy>,
    /// The run's sandbox; absent: `workspace-write`, no network, required, whatever
    /// `[sandbox]` says.
    #[serde(default)]
    pub sandbox: UnattendedSandbox,
    #[serde(default)]
    pub session: SessionMode,
    /// Runs waiting at most; past it a delivery is answered 429.
    #[serde(default = "default_queue")]
    pub queue: usize,
    /// The largest body accepted; past it 413.
    #[serde(default = "default_max_body")]
    pub max_body_bytes: usize,
    /// The signature scheme senders use.
    #[serde(default)]
    pub signature: Signature,
    /// GitHub scheme only: for how long after its first delivery a signed body is a repeat,
    /// whatever its delivery id. `None`: [`DEFAULT_REPLAY_WINDOW_SECS`].
    #[serde(default)]
    pub replay_window_secs: Option<u64>,
    /// The most tokens (input plus output) one run's turn may use.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// The most one run's turn may cost (needs `[provider.pricing]`).
    #[serde(default)]
    pub max_cost: Option<f64>,
    /// The most model calls one run's turn may make (below `agent.max_steps` to matter).
    #[serde(default)]
    pub max_steps: Option<u32>,
}

/// One `[[schedules]]` entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleConfig {
    pub name: String,
    /// Five-field cron, in the daemon's local time zone.
    pub cron: String,
    pub cwd: PathBuf,
    pub prompt: String,
    #[serde(default)]
    pub approve: BTreeMap<String, Policy>,
    /// The run's sandbox; absent: `workspace-write`, no network, required, whatever
    /// `[sandbox]` says.
    #[serde(default)]
    pub sandbox: UnattendedSandbox,
    #[serde(default)]
    pub session: SessionMode,
    /// Runs waiting at most; past it a tick is skipped (and recorded `skipped`).
    #[serde(default = "default_queue")]
    pub queue: usize,
    /// After downtime, run the latest missed tick once.
    #[serde(default)]
    pub catch_up: bool,
    /// The most tokens (input plus output) one run's turn may use; [`DEFAULT_SCHEDULE_MAX_TOKENS`] if unset, so a schedule that
    /// loops cannot spend without limit.
    #[serde(default = "default_schedule_tokens")]
    pub max_tokens: Option<u64>,
    /// The most one run's turn may cost (needs `[provider.pricing]`).
    #[serde(default)]
    pub max_cost: Option<f64>,
    /// The most model calls one run's turn may make (below `agent.max_steps` to matter).
    #[serde(default)]
    pub max_steps: Option<u32>,
}

/// A schedule's `max_tokens` when its entry sets none: a schedule runs with nobody
/// watching, so it always has a budget.
pub const DEFAULT_SCHEDULE_MAX_TOKENS: u64 = 1_000_000;

fn default_schedule_tokens() -> Option<u64> {
    Some(DEFAULT_SCHEDULE_MAX_TOKENS)
}

/// What is wrong with an entry's budget, if anything; `priced`: `[provider.pricing]` is set.
fn budget_problem(
    max_tokens: Option<u64>,
    max_cost: Option<f64>,
    max_steps: Option<u32>,
    priced: bool,
) -> Option<String> {
    if max_tokens == Some(0) {
        return Some("`max_tokens` must be at least 1".into());
    }
    if max_steps == Some(0) {
        return Some("`max_steps` must be at least 1".into());
    }
    zeroclaw_agent::config::check_cost("`max_cost`", max_cost, priced).err()
}

fn default_queue() -> usize {
    DEFAULT_QUEUE
}

fn default_max_body() -> usize {
    DEFAULT_MAX_BODY_BYTES
}

/// One piece of a prompt template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    /// `{{body}}`: the raw body, capped.
    Body,
    /// `{{json /pointer}}`: RFC 6901 pointer into a JSON body.
    Json(String),
    /// `{{header Name}}`, case-insensitive.
    Header(String),
    /// `{{now}}`: RFC 3339, local time.
    Now,
    /// `{{name}}`: the hook's or schedule's name.
    Name,
}

/// A parsed `prompt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template(pub Vec<Piece>);

impl Template {
    /// Parses `{{...}}` placeholders; `request` says whether request placeholders (`body`,
    /// `json`, `header`) mean anything (a schedule has no request).
    pub fn parse(text: &str, request: bool) -> Result<Self, String> {
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find("{{") {
            if at > 0 {
                pieces.push(Piece::Text(rest[..at].to_owned()));
            }
            let after = &rest[at + 2..];
            let Some(end) = after.find("}}") else {
                return Err("`{{` without a closing `}}` in `prompt`".into());
            };
            let inner = after[..end].trim();
            let (word, arg) = match inner.split_once(char::is_whitespace) {
                Some((word, arg)) => (word, Some(arg.trim())),
                None => (inner, None),
            };
            let piece = match (word, arg) {
                ("body", None) => Piece::Body,
                ("now", None) => Piece::Now,
                ("name", None) => Piece::Name,
                ("json", Some(pointer)) if pointer.is_empty() || pointer.starts_with('/') => {
                    Piece::Json(pointer.to_owned())
                }
                ("json", _) => {
                    return Err(format!(
                        "`{{{{{inner}}}}}` in `prompt`: a JSON pointer starts with `/` (RFC 6901), e.g. {{{{json /ref}}}}"
                    ));
                }
                ("header", Some(name))
                    if !name.is_empty() && !name.contains(char::is_whitespace) =>
                {
                    Piece::Header(name.to_owned())
                }
                _ => {
                    return Err(format!(
                        "unknown placeholder `{{{{{inner}}}}}` in `prompt`; the placeholders are {{{{body}}}}, {{{{json /pointer}}}}, {{{{header Name}}}}, {{{{now}}}} and {{{{name}}}}"
                    ));
                }
            };
            if !request && matches!(piece, Piece::Body | Piece::Json(_) | Piece::Header(_)) {
                return Err(format!(
                    "`{{{{{inner}}}}}` in `prompt` means nothing in a schedule (there is no request); only {{{{now}}}} and {{{{name}}}} do"
                ));
            }
            pieces.push(piece);
            rest = &after[end + 2..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_owned()));
        }
        Ok(Self(pieces))
    }
}

/// Parses a standard five-field cron expression (minute hour day-of-month month
/// day-of-week).
pub fn parse_cron(expression: &str) -> Result<croner::Cron, String> {
    use croner::parser::{CronParser, Seconds, Year};
    let fields = expression.split_whitespace().count();
    if fields != 5 {
        return Err(format!(
            "`cron` {expression:?} has {fields} fields; it needs five: minute hour day-of-month month day-of-week"
        ));
    }
    CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .build()
        .parse(expression)
        .map_err(|e| format!("`cron` {expression:?} is not a valid cron expression: {e}"))
}

fn name_problem(name: &str) -> Option<String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    (!ok).then(|| "`name` must be 1 to 64 letters, digits, `-` or `_`".into())
}

fn common_problem(
    cwd: &std::path::Path,
    queue: usize,
    tools: &BTreeMap<String, Policy>,
) -> Option<String> {
    if !cwd.is_absolute() {
        return Some(format!(
            "`cwd` must be an absolute path, got {}",
            cwd.display()
        ));
    }
    if !cwd.is_dir() {
        return Some(format!(
            "`cwd` {} is not an existing directory",
            cwd.display()
        ));
    }
    if queue == 0 {
        return Some("`queue` must be at least 1".into());
    }
    tools
        .keys()
        .find(|t| t.is_empty())
        .map(|_| "`approve` has an empty tool name".into())
}

impl WebhookConfig {
    pub fn template(&self) -> Result<Template, String> {
        Template::parse(&self.prompt, true)
    }

    /// The replay window in milliseconds (validated at load: at most a year).
    pub fn replay_window_ms(&self) -> i64 {
        let secs = self
            .replay_window_secs
            .unwrap_or(DEFAULT_REPLAY_WINDOW_SECS)
            .min(MAX_REPLAY_WINDOW_SECS);
        i64::try_from(secs).unwrap_or(i64::MAX / 1000) * 1000
    }

    /// What is wrong with the entry, if anything (its name is added by the caller).
    pub fn problem(&self, priced: bool) -> Option<String> {
        if let Some(p) = name_problem(&self.name) {
            return Some(p);
        }
        if let Some(p) = budget_problem(self.max_tokens, self.max_cost, self.max_steps, priced) {
            return Some(p);
        }
        if self.secret_env.trim().is_empty() {
            return Some("`secret_env` must name an environment variable".into());
        }
        if self.max_body_bytes == 0 {
            return Some("`max_body_bytes` must be at least 1".into());
        }
        match (self.signature, self.replay_window_secs) {
            (Signature::Standard, Some(_)) => {
                return Some(
                    "`replay_window_secs` means nothing with `signature = \"standard\"`: there the signed timestamp (within 5 minutes) and the signed `webhook-id` stop replays; remove it".into(),
                );
            }
            (_, Some(secs)) if secs == 0 || secs > MAX_REPLAY_WINDOW_SECS => {
                return Some(format!(
                    "`replay_window_secs` must be from 1 to {MAX_REPLAY_WINDOW_SECS} (366 days), got {secs}"
                ));
            }
            _ => {}
        }
        common_problem(&self.cwd, self.queue, &self.approve).or_else(|| self.template().err())
    }
}

impl ScheduleConfig {
    pub fn template(&self) -> Result<Template, String> {
        Template::parse(&self.prompt, false)
    }

    pub fn problem(&self, priced: bool) -> Option<String> {
        if let Some(p) = name_problem(&self.name) {
            return Some(p);
        }
        if let Some(p) = budget_problem(self.max_tokens, self.max_cost, self.max_steps, priced) {
            return Some(p);
        }
        if let Err(e) = parse_cron(&self.cron) {
            return Some(e);
        }
        common_problem(&self.cwd, self.queue, &self.approve).or_else(|| self.template().err())
    }
}

/// Checks every entry, naming the one at fault: `webhooks[0] ("ci"): ...`. `priced`:
/// `[provider.pricing]` is set, so a `max_cost` can be counted.
pub fn validate(
    webhooks: &[WebhookConfig],
    schedules: &[ScheduleConfig],
    priced: bool,
) -> Result<(), String> {
    let mut names = std::collections::HashSet::new();
    for (i, hook) in webhooks.iter().enumerate() {
        let label = format!("webhooks[{i}] ({:?})", hook.name);
        if let Some(problem) = hook.problem(priced) {
            return Err(format!("{label}: {problem}"));
        }
        if !names.insert(hook.name.as_str()) {
            return Err(format!("{label}: another webhook has that name"));
        }
    }
    let mut names = std::collections::HashSet::new();
    for (i, schedule) in schedules.iter().enumerate() {
        let label = format!("schedules[{i}] ({:?})", schedule.name);
        if let Some(problem) = schedule.problem(priced) {
            return Err(format!("{label}: {problem}"));
        }
        if !names.insert(schedule.name.as_str()) {
            return Err(format!("{label}: another schedule has that name"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_reads_every_placeholder_and_refuses_unknown_ones() {
        let t = Template::parse(
            "CI on {{ json /ref }} by {{header X-GitHub-Event}}: {{body}} at {{now}} ({{name}})",
            true,
        )
        .unwrap();
        assert_eq!(
            t.0,
            vec![
                Piece::Text("CI on ".into()),
                Piece::Json("/ref".into()),
                Piece::Text(" by ".into()),
                Piece::Header("X-GitHub-Event".into()),
                Piece::Text(": ".into()),
                Piece::Body,
                Piece::Text(" at ".into()),
                Piece::Now,
                Piece::Text(" (".into()),
                Piece::Name,
                Piece::Text(")".into()),
            ]
        );
        for (bad, want) in [
            ("{{bodyy}}", "unknown placeholder `{{bodyy}}`"),
            ("{{json ref}}", "starts with `/`"),
            ("{{header}}", "unknown placeholder `{{header}}`"),
            ("open {{body", "without a closing"),
        ] {
            let e = Template::parse(bad, true).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
        let e = Template::parse("{{body}}", false).unwrap_err();
        assert!(e.contains("means nothing in a schedule"), "{e}");
        assert_eq!(
            Template::parse("plain", false).unwrap().0,
            vec![Piece::Text("plain".into())]
        );
    }

    #[test]
    fn cron_takes_exactly_five_valid_fields() {
        assert!(parse_cron("0 8 * * 1-5").is_ok());
        assert!(parse_cron("*/15 * * * *").is_ok());
        assert!(
            parse_cron("0 0 8 * * 1-5")
                .unwrap_err()
                .contains("6 fields")
        );
        assert!(
            parse_cron("61 * * * *")
                .unwrap_err()
                .contains("not a valid cron")
        );
        assert!(parse_cron("").unwrap_err().contains("0 fields"));
    }
}

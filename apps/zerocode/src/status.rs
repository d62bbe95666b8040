//! The live status line of a running turn: spinner, phase, elapsed time, tokens so far, the
//! session's context gauge and cost, its sandbox and permission mode.
//!
//! It lives on the terminal's last line, below everything printed, and is only ever drawn
//! there with the cursor at column 0 of an empty line: `\r`, erase-line, the text (cut to
//! fit one line, so it never wraps). Before anything else is printed it is erased the same
//! way, and drawn again after, so it never lands in the scrollback. [`crate::render::Screen`]
//! owns it and does all the writing.

use crate::usage::{Gauge, Money};
use std::time::{Duration, Instant};

/// What the turn is doing, as the status line says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for the model (before its first words, and after each tool result).
    Thinking,
    /// The model's answer is streaming.
    Answering,
    /// A tool is running: "running bash".
    Running(String),
    /// An approval question is waiting for the user.
    WaitingForApproval,
    /// Ctrl-C was pressed; the daemon is winding the turn down.
    Cancelling,
}

impl Phase {
    pub fn label(&self) -> String {
        match self {
            Phase::Thinking => "thinking".into(),
            Phase::Answering => "answering".into(),
            // A tool's name comes from the daemon (an MCP server may choose it): sanitized.
            Phase::Running(tool) => format!("running {}", crate::term::sanitize(tool)),
            Phase::WaitingForApproval => "waiting for approval".into(),
            Phase::Cancelling => "cancelling".into(),
        }
    }
}

const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/// How long each spinner frame shows.
pub const FRAME: Duration = Duration::from_millis(100);

/// The state of a running turn's status line.
#[derive(Debug)]
pub struct Status {
    started: Instant,
    phase: Phase,
    /// Characters of streamed model output (answer, thoughts, tool arguments).
    streamed_chars: usize,
    /// The session's sandbox, as [`sandbox_label`] says it; `None` from an older daemon.
    sandbox: Option<String>,
    /// The session's permission mode (`mode plan`); `None` before one is known.
    mode: Option<String>,
    /// What the user has typed during the turn (`app/typing.rs`), shown instead of the rest.
    typed: String,
    /// What the running subagents do (`subagents.rs`), said instead of `running task`.
    subagents: Option<String>,
    /// The session's context gauge and cost (`usage.rs`).
    gauge: Gauge,
    /// The turn's cost so far, from its last `usage_update`; `None` without a price.
    turn_cost: Option<Money>,
}

/// A session's sandbox in a few words: `sandbox workspace-write`, `… +network`, or
/// `no sandbox` for `full`.
pub fn sandbox_label(sandbox: &zeroclaw_client::SessionSandbox) -> String {
    use zeroclaw_client::SandboxMode;
    match sandbox.mode {
        SandboxMode::Full => "no sandbox".into(),
        mode => format!(
            "sandbox {}{}",
            mode.as_str(),
            if sandbox.network { " +network" } else { "" }
        ),
    }
}

impl Status {
    pub fn new(now: Instant) -> Self {
        Self {
            started: now,
            phase: Phase::Thinking,
            streamed_chars: 0,
            sandbox: None,
            mode: None,
            typed: String::new(),
            subagents: None,
            gauge: Gauge::default(),
            turn_cost: None,
        }
    }

    /// Shows the session's context gauge and cost (`ctx 12% (3.1k/32k) · $0.0123`).
    pub fn with_gauge(mut self, gauge: Gauge) -> Self {
        self.gauge = gauge;
        self
    }

    /// After a model call of the turn: the session's gauge, and the turn's cost so far.
    pub fn set_usage(&mut self, gauge: Gauge, turn_cost: Option<Money>) {
        self.gauge = gauge;
        self.turn_cost = turn_cost;
    }

    /// The turn's cost so far, for the line that ends it.
    pub fn turn_cost(&self) -> Option<Money> {
        self.turn_cost
    }

    /// Shows the session's sandbox (see [`sandbox_label`]).
    pub fn with_sandbox(mut self, label: Option<String>) -> Self {
        self.sandbox = label;
        self
    }

    /// Shows the session's permission mode (`mode accept-edits`).
    pub fn with_mode(mut self, label: Option<String>) -> Self {
        self.mode = label;
        self
    }

    pub fn set_mode(&mut self, label: Option<String>) {
        self.mode = label;
    }

    /// What has been typed during the turn; empty: the usual line.
    pub fn set_typed(&mut self, typed: &str) {
        crate::term::sanitize(typed).clone_into(&mut self.typed);
    }

    /// What the running subagents do (`subagents::Subagents::live`); `None`: none runs.
    pub fn set_subagents(&mut self, live: Option<String>) {
        self.subagents = live;
    }

    pub fn set_phase(&mut self, phase: Phase) {
        self.phase = phase;
    }

    /// Counts streamed model output toward the token estimate.
    pub fn streamed(&mut self, text: &str) {
        self.streamed_chars += text.chars().count();
    }

    pub fn elapsed(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.started)
    }

    /// The line's text at `now`, at most `width - 1` columns (the last column is left
    /// free: writing it makes some terminals wrap).
    pub fn text(&self, now: Instant, width: usize) -> String {
        let elapsed = self.elapsed(now);
        let max = width.saturating_sub(1).max(10);
        if !self.typed.is_empty() {
            // The end of what is typed, where the cursor would be.
            let hint = " · Enter steers · Alt-Enter queues";
            let room = max.saturating_sub(hint.chars().count() + 2).max(1);
            let count = self.typed.chars().count();
            let tail: String = self
                .typed
                .chars()
                .skip(count.saturating_sub(room))
                .collect();
            return format!("› {tail}{hint}").chars().take(max).collect();
        }
        let frame = (elapsed.as_millis() / FRAME.as_millis()) as usize % SPINNER.len();
        // While tools run, a running subagent says what it does.
        let phase = match (&self.phase, &self.subagents) {
            (Phase::Running(_), Some(live)) => live.clone(),
            (phase, _) => phase.label(),
        };
        let head = format!("{} {phase} · {}", SPINNER[frame], elapsed_text(elapsed));
        // The rest in the order shown, each with how long it is kept when the line is too
        // wide for all of it: the lowest goes first (the sandbox, which does not change in
        // a session, before the gauge, which says what the turn costs).
        let mut parts: Vec<(u8, String)> = Vec::new();
        let tokens = estimate_tokens(self.streamed_chars);
        if tokens > 0 {
            parts.push((3, format!("~{tokens} tokens")));
        }
        if let Some(context) = self.gauge.context() {
            parts.push((5, context));
        }
        if let Some(cost) = self.gauge.cost() {
            parts.push((4, cost));
        }
        if let Some(sandbox) = &self.sandbox {
            parts.push((0, sandbox.clone()));
        }
        if let Some(mode) = &self.mode {
            parts.push((1, mode.clone()));
        }
        parts.push((2, "Ctrl-C cancels".into()));
        loop {
            let text = std::iter::once(head.as_str())
                .chain(parts.iter().map(|(_, part)| part.as_str()))
                .collect::<Vec<_>>()
                .join(" · ");
            let lowest = parts
                .iter()
                .enumerate()
                .min_by_key(|(_, (keep, _))| *keep)
                .map(|(i, _)| i);
            match lowest {
                Some(i) if text.chars().count() > max => {
                    parts.remove(i);
                }
                // Still too wide with nothing left to leave out: cut.
                _ => return text.chars().take(max).collect(),
            }
        }
    }
}

/// Roughly four characters to a token: labelled `~` wherever it is shown.
pub fn estimate_tokens(chars: usize) -> usize {
    chars.div_ceil(4)
}

/// `340ms`, `4.2s`, `1m 05s`, `1h 02m`.
pub fn elapsed_text(elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    if secs < 1 {
        format!("{}ms", elapsed.as_millis())
    } else if secs < 60 {
        format!("{:.1}s", elapsed.as_secs_f64())
    } else if secs < 3600 {
        format!("{}m {:02}s", secs / 60, secs % 60)
    } else {
        format!("{}h {:02}m", secs / 3600, (secs % 3600) / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_says_phase_time_and_estimated_tokens() {
        let start = Instant::now();
        let mut status = Status::new(start);
        assert_eq!(status.text(start, 100), "⠋ thinking · 0ms · Ctrl-C cancels");
        status.streamed("twelve chars");
        status.set_phase(Phase::Running("bash".into()));
        let later = start + Duration::from_millis(1250);
        assert_eq!(
            status.text(later, 100),
            "⠹ running bash · 1.2s · ~3 tokens · Ctrl-C cancels"
        );
        // Never wider than the terminal less one column.
        assert_eq!(status.text(later, 12).chars().count(), 11);
    }

    #[test]
    fn a_running_subagent_says_what_it_does_instead_of_the_task_call() {
        let start = Instant::now();
        let mut status = Status::new(start);
        status.set_phase(Phase::Running("task".into()));
        status.set_subagents(Some("subagent Run · 1 tool call · bash `ls`".into()));
        assert_eq!(
            status.text(start, 100),
            "⠋ subagent Run · 1 tool call · bash `ls` · 0ms · Ctrl-C cancels"
        );
        status.set_phase(Phase::Cancelling);
        assert_eq!(
            status.text(start, 100),
            "⠋ cancelling · 0ms · Ctrl-C cancels"
        );
    }

    #[test]
    fn the_status_names_the_sessions_sandbox() {
        use zeroclaw_client::{SandboxMode, SessionSandbox};
        let start = Instant::now();
        let label = |mode, network| sandbox_label(&SessionSandbox { mode, network });
        let status = Status::new(start).with_sandbox(Some(label(SandboxMode::ReadOnly, false)));
        assert_eq!(
            status.text(start, 100),
            "⠋ thinking · 0ms · sandbox read-only · Ctrl-C cancels"
        );
        assert_eq!(
            label(SandboxMode::WorkspaceWrite, true),
            "sandbox workspace-write +network"
        );
        assert_eq!(label(SandboxMode::Full, true), "no sandbox");
        let status = status.with_mode(Some("mode plan".into()));
        assert_eq!(
            status.text(start, 100),
            "⠋ thinking · 0ms · sandbox read-only · mode plan · Ctrl-C cancels"
        );
    }

    #[test]
    fn the_status_shows_the_sessions_gauge_and_leaves_out_the_least_useful_when_narrow() {
        let start = Instant::now();
        let gauge = Gauge {
            context_used: 3_100,
            context_size: 32_000,
            cost: Money::of(Some(0.0123), None),
        };
        let status = Status::new(start)
            .with_sandbox(Some("sandbox workspace-write".into()))
            .with_mode(Some("mode default".into()))
            .with_gauge(gauge);
        assert_eq!(
            status.text(start, 200),
            "⠋ thinking · 0ms · ctx 10% (3.1k/32k) · $0.0123 · sandbox workspace-write · mode default · Ctrl-C cancels"
        );
        // Too narrow for all of it: the sandbox goes first, then the mode, then the hint.
        assert_eq!(
            status.text(start, 80),
            "⠋ thinking · 0ms · ctx 10% (3.1k/32k) · $0.0123 · mode default · Ctrl-C cancels"
        );
        assert_eq!(
            status.text(start, 60),
            "⠋ thinking · 0ms · ctx 10% (3.1k/32k) · $0.0123"
        );
        assert_eq!(
            status.text(start, 40),
            "⠋ thinking · 0ms · ctx 10% (3.1k/32k)"
        );
        // After a model call: the new gauge, and the turn's cost for its last line.
        let mut status = status;
        status.set_usage(
            Gauge {
                cost: None,
                ..gauge
            },
            Money::of(Some(0.002), Some("EUR")),
        );
        assert_eq!(
            status.turn_cost().map(|cost| cost.to_string()).as_deref(),
            Some("0.0020 EUR")
        );
        assert!(!status.text(start, 200).contains('$'));
    }

    #[test]
    fn elapsed_time_reads_naturally() {
        assert_eq!(elapsed_text(Duration::from_millis(340)), "340ms");
        assert_eq!(elapsed_text(Duration::from_millis(4200)), "4.2s");
        assert_eq!(elapsed_text(Duration::from_secs(65)), "1m 05s");
        assert_eq!(elapsed_text(Duration::from_secs(3720)), "1h 02m");
    }
}

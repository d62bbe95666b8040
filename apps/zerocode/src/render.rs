//! What a turn looks like in the scrollback: answer text as it streams, thoughts dimmed on
//! lines of their own, one line per tool call, tool results folded, a status line.

use crate::markdown::Markdown;
use crate::status::{Phase, Status, elapsed_text};
use crate::subagents::{self, Subagents};
pub use crate::summary::{one_line, summarize, truncate};
use crate::term::{self, dim, red, sanitize};
use crate::usage::{self, Gauge};
use serde_json::Value;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};
use zeroclaw_client::protocol::methods::BudgetStop;
use zeroclaw_client::{StopReason, Subagent, Update, Usage};

/// Lines of a tool result shown before the rest is folded away.
pub const RESULT_LINES: usize = 6;

/// The output side of the terminal. Shared (behind a mutex) by the turn loop and the
/// elicitation form, so a question never starts in the middle of an answer; every write
/// goes through it, so the live status line is erased before anything else is printed.
///
/// The cursor is always left at column 0: answers are printed a completed (rendered) line
/// at a time by [`Markdown`], thoughts a line at a time, and what is still held is printed
/// by [`Screen::end_line`], which every other kind of output calls first.
pub struct Screen {
    /// The answer being rendered, while one streams.
    answer: Option<Markdown>,
    /// The open line of the thought being received, while one streams.
    thought: Option<String>,
    /// Whether the current thought's first line (with its `✻`) was printed.
    thought_started: bool,
    /// The running turn's status line, while a turn runs.
    status: Option<Status>,
    /// The status line is not drawn while something else reads on the terminal.
    status_suspended: bool,
    /// Whether the status line is on the screen now.
    status_drawn: bool,
    /// Status lines are drawn at all: stdout is a terminal.
    live: bool,
    /// The current session's sandbox, shown on each turn's status line.
    sandbox: Option<String>,
    /// The current session's permission mode, shown on each turn's status line.
    mode: Option<String>,
    /// The turn's subagents still running: nested under their `task` call, collapsed.
    subagents: Subagents,
    /// The current session's context gauge and cost, shown on each turn's status line.
    gauge: Gauge,
}

impl Default for Screen {
    fn default() -> Self {
        if term::styled() {
            // The highlighter's assets take a moment to load: not in the middle of an answer.
            std::thread::spawn(crate::markdown::preload);
        }
        Self {
            answer: None,
            thought: None,
            thought_started: false,
            status: None,
            status_suspended: false,
            status_drawn: false,
            live: std::io::stdout().is_terminal(),
            sandbox: None,
            mode: None,
            subagents: Subagents::default(),
            gauge: Gauge::default(),
        }
    }
}

/// Erases the terminal's current line (where the status line is drawn).
const ERASE_LINE: &str = "\r\x1b[K";

impl Screen {
    /// Writes `text` (whole lines), erasing the status line first and drawing it again
    /// after, in one write so that nothing flickers.
    fn write(&mut self, text: &str) {
        let mut buffer = String::new();
        if self.status_drawn {
            buffer.push_str(ERASE_LINE);
            self.status_drawn = false;
        }
        buffer.push_str(text);
        self.status_into(&mut buffer);
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(buffer.as_bytes());
        let _ = out.flush();
    }

    /// Appends the live line to `buffer` when it is wanted: what the answer holds, as it
    /// arrived, while it holds something (a paragraph being received), else the status.
    fn status_into(&mut self, buffer: &mut String) {
        if !self.live || self.status_suspended {
            return;
        }
        let width = term::width().saturating_sub(1).max(1);
        if let Some(preview) = self.answer.as_ref().and_then(|a| a.pending_tail(width)) {
            buffer.push_str(ERASE_LINE);
            buffer.push_str(&preview);
            self.status_drawn = true;
            return;
        }
        if let Some(status) = &self.status {
            let text = status.text(Instant::now(), term::width());
            buffer.push_str(ERASE_LINE);
            buffer.push_str(&dim(&text));
            self.status_drawn = true;
        }
    }

    /// Prints what the answer or thought still holds, so the next output starts on a line
    /// of its own.
    pub fn end_line(&mut self) {
        let mut out = String::new();
        if let Some(mut answer) = self.answer.take() {
            out.push_str(&answer.finish());
        }
        if let Some(rest) = self.thought.take() {
            if !rest.is_empty() {
                out.push_str(&self.thought_line(&rest));
            }
            self.thought_started = false;
        }
        if !out.is_empty() {
            self.write(&out);
        }
    }

    /// A whole line of zerocode's own (already styled as wanted).
    pub fn line(&mut self, text: &str) {
        self.end_line();
        self.write(&format!("{text}\n"));
    }

    /// A chunk of the agent's answer, rendered as Markdown a completed line at a time.
    pub fn answer(&mut self, text: &str) {
        if self.thought.is_some() {
            self.end_line();
        }
        if let Some(status) = &mut self.status {
            status.streamed(text);
            status.set_phase(Phase::Answering);
        }
        let answer = self
            .answer
            .get_or_insert_with(|| Markdown::new(term::width(), term::styled()));
        let out = answer.push(text);
        // Also with nothing complete to print: the live line shows what arrived.
        if !out.is_empty() || self.live {
            self.write(&out);
        }
    }

    /// One line of a thought, dimmed; the first after a `✻`.
    fn thought_line(&mut self, line: &str) -> String {
        let lead = if self.thought_started { "  " } else { "✻ " };
        self.thought_started = true;
        format!("{}\n", dim(&format!("{lead}{line}")))
    }

    /// A chunk of the model's thinking, dimmed, printed a completed line at a time.
    pub fn thought(&mut self, text: &str) {
        if let Some(status) = &mut self.status {
            status.streamed(text);
            status.set_phase(Phase::Thinking);
        }
        let text = sanitize(text);
        if text.is_empty() {
            return;
        }
        if self.thought.is_none() {
            self.end_line();
        }
        let open = self.thought.get_or_insert_with(String::new);
        open.push_str(&text);
        let mut out = String::new();
        while let Some(i) = self.thought.as_deref().and_then(|t| t.find('\n')) {
            let Some(open) = self.thought.as_mut() else {
                break;
            };
            let line: String = open.drain(..=i).collect();
            out.push_str(&self.thought_line(line.trim_end_matches('\n')));
        }
        if !out.is_empty() {
            self.write(&out);
        }
    }

    /// A turn starts: the status line appears (on a terminal) and is redrawn by
    /// [`Screen::status_tick`].
    pub fn status_start(&mut self) {
        self.status = Some(
            Status::new(Instant::now())
                .with_sandbox(self.sandbox.clone())
                .with_mode(self.mode.clone())
                .with_gauge(self.gauge),
        );
        // A followed turn's subagents counted while its session loaded.
        if let Some(status) = &mut self.status {
            status.set_subagents(self.subagents.live());
        }
        self.status_suspended = false;
        self.write("");
    }

    /// The session's permission mode, on the status line from now on (the running turn's
    /// too: a mode changes while a turn runs).
    pub fn set_mode(&mut self, label: Option<String>) {
        if let Some(status) = &mut self.status {
            status.set_mode(label.clone());
        }
        self.mode = label;
    }

    /// The session's sandbox, for the next turns' status lines (`status::sandbox_label`).
    pub fn set_sandbox(&mut self, label: Option<String>) {
        self.sandbox = label;
    }

    /// The session's context gauge and cost (from `session/usage`), for the next turns'
    /// status lines.
    pub fn set_gauge(&mut self, gauge: Gauge) {
        self.gauge = gauge;
    }

    /// A `usage_update` of the session's own turn: the gauge on the status line from now
    /// on, and the turn's cost for its last line.
    pub fn usage(&mut self, report: &zeroclaw_client::protocol::methods::UsageReport) {
        self.gauge = Gauge::from_report(report);
        if let Some(status) = &mut self.status {
            status.set_usage(
                self.gauge,
                usage::Money::of(report.turn.cost, report.currency.as_deref()),
            );
            self.write("");
        }
    }

    /// The running turn's cost so far; `None` without a price.
    pub fn status_turn_cost(&self) -> Option<usage::Money> {
        self.status.as_ref().and_then(Status::turn_cost)
    }

    /// The turn is over: the status line is erased for good. Returns how long it ran.
    pub fn status_stop(&mut self) -> Option<Duration> {
        self.end_line();
        // Any still counted belong to a turn no longer shown (one that was followed).
        self.subagents.clear();
        let status = self.status.take()?;
        self.write("");
        Some(status.elapsed(Instant::now()))
    }

    /// How long the running turn has taken so far.
    pub fn status_elapsed(&self) -> Option<Duration> {
        self.status.as_ref().map(|s| s.elapsed(Instant::now()))
    }

    /// Says what the turn is doing now (e.g. [`Phase::WaitingForApproval`] while an
    /// approval question waits, [`Phase::Running`] while a tool runs).
    pub fn status_phase(&mut self, phase: Phase) {
        if let Some(status) = &mut self.status {
            status.set_phase(phase);
            self.write("");
        }
    }

    /// Shows what has been typed during the turn on the status line (`app/typing.rs`).
    pub fn status_typed(&mut self, typed: &str) {
        if let Some(status) = &mut self.status {
            status.set_typed(typed);
            self.write("");
        }
    }

    /// While `true`, the status line is erased and not drawn: call it before anything
    /// other than this screen writes to the terminal or reads a line there (a line editor,
    /// a form), and with `false` after.
    pub fn status_suspend(&mut self, suspended: bool) {
        self.end_line();
        self.status_suspended = suspended;
        self.write("");
    }

    /// Redraws the status line (its spinner and clock): called by the turn loop's ticker.
    pub fn status_tick(&mut self) {
        if self.status_drawn || (self.status.is_some() && !self.status_suspended) {
            self.write("");
        }
    }

    /// A tool call of the turn; a `task` call starts following its subagent.
    pub fn tool_call(&mut self, id: &str, name: &str, input: &Value) {
        if let Some(status) = &mut self.status {
            status.streamed(&input.to_string());
            status.set_phase(Phase::Running(name.to_owned()));
        }
        if name == "task" {
            self.subagents.started(id, input);
            self.subagents_live();
        }
        self.tool_line(name, input);
    }

    /// `⏺ bash  ls -la`.
    fn tool_line(&mut self, name: &str, input: &Value) {
        let width = term::width()
            .saturating_sub(name.chars().count() + 4)
            .max(20);
        self.line(&format!(
            "⏺ {}  {}",
            term::bold(name),
            summarize(name, input, width)
        ));
    }

    /// An event of a subagent's child: counted under its `task` call and shown on the live
    /// line, not printed (`subagents.rs`).
    pub fn subagent(&mut self, subagent: &Subagent, update: &Update) {
        self.subagents.event(subagent, update);
        self.subagents_live();
    }

    /// A subagent's approval question is about to be asked: counted, and the line that
    /// says whose it is (`subagent Run asks:`).
    pub fn subagent_asks(&mut self, subagent: &Subagent, tool: &str) -> String {
        self.subagents.asked(subagent, tool);
        self.subagents_live();
        self.subagents.asks(subagent)
    }

    /// The live line says what the running subagents do.
    fn subagents_live(&mut self) {
        if let Some(status) = &mut self.status {
            status.set_subagents(self.subagents.live());
            self.write("");
        }
    }

    /// A tool's result, folded after [`RESULT_LINES`] lines, in red when it failed; bash's
    /// closing `[exit code N]` on a line of its own, red when not 0. A `task` call's is its
    /// subagent's summary line.
    pub fn tool_result(&mut self, id: &str, name: &str, output: &Value, is_error: bool) {
        if let Some(status) = &mut self.status {
            status.set_phase(Phase::Thinking);
        }
        if name == "task" {
            let line = self.subagents.finished(id, &output_text(output), is_error);
            self.subagents_live();
            let paint: fn(&str) -> String = if is_error { red } else { dim };
            self.line(&format!("  {}", paint(&line)));
            return;
        }
        let text = sanitize(&output_text(output));
        let (body, exit) = if name == "bash" {
            split_exit(&text)
        } else {
            (text.as_str(), None)
        };
        let (shown, folded) = fold(body, RESULT_LINES);
        let width = term::width().saturating_sub(6).max(20);
        let (mark, paint): (&str, fn(&str) -> String) =
            if is_error { ("✗", red) } else { ("⎿", dim) };
        if shown.is_empty() {
            self.line(&format!("  {}", paint(&format!("{mark}  (no output)"))));
        }
        for (i, line) in shown.iter().enumerate() {
            let lead = if i == 0 { mark } else { " " };
            self.line(&format!(
                "  {}",
                paint(&format!("{lead}  {}", truncate(line, width)))
            ));
        }
        if folded > 0 {
            self.line(&format!("     {}", dim(&format!("… {folded} more lines"))));
        }
        if let Some(exit) = exit {
            let shown = if exit == "exit code 0" {
                dim(exit)
            } else {
                term::bold(&red(exit))
            };
            self.line(&format!("     {shown}"));
        }
    }

    /// One event of a replayed history, compactly: user lines, answers and tool lines;
    /// thoughts are left out and each tool result is one line.
    pub fn replay(&mut self, update: &Update) {
        match update {
            Update::UserMessageChunk { text, images } => {
                self.end_line();
                self.write("\n");
                for line in sanitize(text).lines() {
                    self.line(&term::bold(&format!("> {line}")));
                }
                for image in images {
                    // Sized as the line under the prompt said it when it was sent.
                    self.line(&term::dim(&format!(
                        "> [image: {}, {}]",
                        image.mime_type,
                        crate::units::image_size(image.size)
                    )));
                }
            }
            Update::AgentMessageChunk { text } => {
                self.answer(text);
                self.end_line();
            }
            // A replay has no subagent events (the child session stores them): a `task`
            // call is its line and its answer's.
            Update::ToolCall {
                name, raw_input, ..
            } => self.tool_line(name, raw_input),
            Update::ToolResult {
                tool_call_id,
                name,
                raw_output,
                is_error,
            } if name == "task" => {
                // Unless live events of a running one were counted (a turn followed).
                let line = if self.subagents.is_running(tool_call_id) {
                    self.subagents
                        .finished(tool_call_id, &output_text(raw_output), *is_error)
                } else {
                    subagents::replayed(&output_text(raw_output), *is_error)
                };
                self.line(&format!("  {}", dim(&line)));
            }
            Update::ToolResult {
                raw_output,
                is_error,
                ..
            } => {
                let text = sanitize(&output_text(raw_output));
                let lines = text.trim_end().lines().count();
                let width = term::width().saturating_sub(20).max(20);
                let mut shown = one_line(&text, width);
                if shown.is_empty() {
                    shown = "(no output)".into();
                }
                if lines > 1 {
                    shown = format!("{shown}  (+{} lines)", lines - 1);
                }
                let mark = if *is_error { "✗" } else { "⎿" };
                self.line(&format!("  {}", dim(&format!("{mark}  {shown}"))));
            }
            Update::ContextCompacted {
                messages_folded, ..
            } => {
                self.end_line();
                self.line(&dim(&compacted(*messages_folded)));
            }
            Update::HookResult(hook) => {
                self.end_line();
                self.line(&dim(&hook_line(hook)));
            }
            Update::Plan { entries } => {
                self.end_line();
                for line in crate::plan::checklist(entries) {
                    self.line(&line);
                }
            }
            // A failed turn's stored error: the session says why that prompt has no answer.
            Update::TurnComplete {
                error: Some(error), ..
            } => {
                self.end_line();
                self.line(&term::red(&format!("the turn failed: {}", sanitize(error))));
            }
            _ => {}
        }
    }
}

/// A hook's run in one line: `⚙ PreToolUse hook ./guard.sh: block (exit 2, 12 ms): no rm`.
pub fn hook_line(hook: &zeroclaw_client::protocol::events::HookResult) -> String {
    let exit = match (hook.exit_code, hook.timed_out) {
        (_, true) => "timed out".to_owned(),
        (Some(code), _) => format!("exit {code}"),
        (None, _) => "no exit code".to_owned(),
    };
    let said = hook
        .message
        .as_deref()
        .or(hook.context.as_deref())
        .map(|m| format!(": {}", one_line(&sanitize(m), 120)))
        .unwrap_or_default();
    format!(
        "⚙ {} hook {}: {} ({exit}, {} ms){said}",
        hook.event,
        one_line(&sanitize(&hook.command), 60),
        hook.outcome,
        hook.duration_ms
    )
}

/// The line saying a session was compacted.
pub fn compacted(messages_folded: u64) -> String {
    format!(
        "context compacted: the model now reads a summary in place of {messages_folded} older messages (all still stored)"
    )
}

/// bash's output without its closing status line (`[exit code 3]`, `[killed by signal 9]`),
/// and that status without its brackets.
pub fn split_exit(text: &str) -> (&str, Option<&str>) {
    let text = text.trim_end();
    let (body, last) = match text.rfind('\n') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => ("", text),
    };
    let status = last.strip_prefix('[').and_then(|l| l.strip_suffix(']'));
    match status {
        Some(s)
            if s.starts_with("exit code ")
                || s.starts_with("killed by signal ")
                || s == "exit status unknown" =>
        {
            (body, Some(s))
        }
        _ => (text, None),
    }
}

/// The first `keep` lines of `text` and how many more there are.
pub fn fold(text: &str, keep: usize) -> (Vec<&str>, usize) {
    let all: Vec<&str> = text.trim_end().lines().collect();
    if all.len() <= keep {
        (all, 0)
    } else {
        let rest = all.len() - keep;
        (all[..keep].to_vec(), rest)
    }
}

fn output_text(output: &Value) -> String {
    match output {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The line for a `session/steer` message as the turn took it.
pub fn steered(text: &str) -> String {
    format!("› {} (steered into the turn)", crate::term::sanitize(text))
}

/// The line for an approval question settled elsewhere, which is then withdrawn.
pub fn resolved_elsewhere(
    decision: zeroclaw_client::Decision,
    by: zeroclaw_client::protocol::events::ResolvedBy,
) -> String {
    use zeroclaw_client::protocol::events::ResolvedBy;
    match by {
        ResolvedBy::Client => format!("answered in another client: {}", decision.as_str()),
        ResolvedBy::Timeout => "not answered in time: refused".into(),
        ResolvedBy::Cancelled => "the turn was cancelled: refused".into(),
    }
}

/// A `provider_retry` as a line: `retrying in 1.0 s (HTTP 429 Too Many Requests), attempt 1`.
pub fn retry_line(attempt: u32, delay_ms: u64, reason: &str) -> String {
    format!(
        "retrying in {:.1} s ({}), attempt {attempt}",
        delay_ms as f64 / 1000.0,
        sanitize(reason)
    )
}

/// A `provider_fallback` as a line: `provider gpt at https://… failed (HTTP 500 …); using
/// llama at http://…`.
pub fn fallback_line(from: &str, to: &str, reason: &str) -> String {
    format!(
        "provider {} failed ({}); using {}",
        sanitize(from),
        sanitize(reason),
        sanitize(to)
    )
}

/// The line after a turn: `[end_turn]  12 in · 3 out tokens · $0.0012 · 4.2s` (the cost
/// when a price is configured). A turn stopped at a budget names the limit and what it
/// used, when the answer says (a followed turn's `turn_complete` does not).
pub fn status_line(
    stop: StopReason,
    usage: Option<Usage>,
    cost: Option<usage::Money>,
    elapsed: Option<Duration>,
    budget: Option<&BudgetStop>,
) -> String {
    let mut line = format!("[{}]", stop.as_str());
    let mut facts = Vec::new();
    if let Some(u) = usage {
        facts.push(format!(
            "{} in · {} out tokens",
            u.input_tokens, u.output_tokens
        ));
    }
    if let Some(cost) = cost {
        facts.push(cost.to_string());
    }
    if let Some(elapsed) = elapsed {
        facts.push(elapsed_text(elapsed));
    }
    if !facts.is_empty() {
        line.push_str("  ");
        line.push_str(&facts.join(" · "));
    }
    match (stop, budget) {
        (StopReason::MaxTurns, _) => {
            line.push_str("  (the agent stopped at agent.max_steps; send another prompt to go on)")
        }
        (StopReason::Budget, Some(budget)) => line.push_str(&format!(
            "  (budget {} reached: {}; send another prompt to go on)",
            sanitize(&budget.limit),
            sanitize(&budget.used)
        )),
        (StopReason::Budget, None) => line.push_str(
            "  (the agent stopped at its budget, [limits]; send another prompt to go on)",
        ),
        _ => {}
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_are_summarised_by_tool() {
        assert_eq!(
            summarize("bash", &json!({"command": "ls -la"}), 80),
            "ls -la"
        );
        assert_eq!(
            summarize(
                "read_file",
                &json!({"path": "src/main.rs", "offset": 3}),
                80
            ),
            "src/main.rs"
        );
        assert_eq!(
            summarize("grep", &json!({"pattern": "x", "n": 1}), 80),
            r#"{"pattern":"x","n":1}"#
        );
        assert_eq!(summarize("bash", &json!({}), 80), "");
        assert_eq!(summarize("bash", &json!({"command": "a\nb"}), 80), "a …");
        assert_eq!(
            summarize("bash", &json!({"command": "abcdefghij"}), 5),
            "abcd…"
        );
        // Escape sequences in arguments never reach the terminal.
        assert_eq!(
            summarize("bash", &json!({"command": "\x1b[31mx"}), 80),
            "[31mx"
        );
    }

    #[test]
    fn results_fold_after_six_lines() {
        let text = (1..=10)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        let (shown, rest) = fold(&text, RESULT_LINES);
        assert_eq!(shown, ["1", "2", "3", "4", "5", "6"]);
        assert_eq!(rest, 4);
        assert_eq!(fold("a\nb\n", RESULT_LINES), (vec!["a", "b"], 0));
    }

    #[test]
    fn bash_exit_codes_are_split_from_the_output() {
        assert_eq!(
            split_exit("out\n[exit code 0]\n"),
            ("out", Some("exit code 0"))
        );
        assert_eq!(split_exit("[exit code 3]"), ("", Some("exit code 3")));
        assert_eq!(
            split_exit("a\nb\n[killed by signal 9]"),
            ("a\nb", Some("killed by signal 9"))
        );
        assert_eq!(
            split_exit("no status\n[other]"),
            ("no status\n[other]", None)
        );
    }

    #[test]
    fn the_status_line_names_the_stop_reason_and_tokens() {
        assert_eq!(
            status_line(StopReason::Cancelled, None, None, None, None),
            "[cancelled]"
        );
        assert_eq!(
            status_line(
                StopReason::Cancelled,
                None,
                None,
                Some(Duration::from_millis(1500)),
                None
            ),
            "[cancelled]  1.5s"
        );
        let usage = Usage {
            input_tokens: 10,
            output_tokens: 2,
        };
        assert_eq!(
            status_line(
                StopReason::EndTurn,
                Some(usage),
                None,
                Some(Duration::from_secs(65)),
                None
            ),
            "[end_turn]  10 in · 2 out tokens · 1m 05s"
        );
        // Priced: the turn's cost after its tokens.
        assert_eq!(
            status_line(
                StopReason::EndTurn,
                Some(usage),
                usage::Money::of(Some(0.0012), Some("USD")),
                Some(Duration::from_secs(2)),
                None
            ),
            "[end_turn]  10 in · 2 out tokens · $0.0012 · 2.0s"
        );
        // A budget stop names the limit and what the turn used against it.
        let budget = BudgetStop {
            limit: "limits.max_tokens_per_turn".into(),
            used: "360 tokens of 250".into(),
        };
        assert_eq!(
            status_line(StopReason::Budget, Some(usage), None, None, Some(&budget)),
            "[budget]  10 in · 2 out tokens  (budget limits.max_tokens_per_turn reached: 360 tokens of 250; send another prompt to go on)"
        );
    }

    #[test]
    fn retries_and_fallbacks_read_as_lines() {
        assert_eq!(
            retry_line(1, 1000, "HTTP 429 Too Many Requests"),
            "retrying in 1.0 s (HTTP 429 Too Many Requests), attempt 1"
        );
        assert_eq!(
            retry_line(2, 500, "cannot connect"),
            "retrying in 0.5 s (cannot connect), attempt 2"
        );
        // What the daemon says is shown, never obeyed: no escape reaches the terminal.
        assert_eq!(
            fallback_line("a at http://x", "b at http://y", "timed out\x1b[2J"),
            "provider a at http://x failed (timed out[2J); using b at http://y"
        );
    }
}

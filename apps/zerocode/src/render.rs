//! What a turn looks like in the scrollback: answer text as it streams, thoughts dimmed on
//! lines of their own, one line per tool call, tool results folded, a status line.

use crate::term::{self, dim, red, sanitize};
use serde_json::Value;
use std::io::Write;
use zeroclaw_client::{StopReason, Update, Usage};

/// Lines of a tool result shown before the rest is folded away.
pub const RESULT_LINES: usize = 6;

/// Which kind of text the cursor sits after, when its line is still open.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Open {
    #[default]
    Nothing,
    Answer,
    Thought,
}

/// The output side of the terminal. Shared (behind a mutex) by the turn loop and the
/// elicitation form, so a question never starts in the middle of an answer line.
#[derive(Debug, Default)]
pub struct Screen {
    open: Open,
}

fn write(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

impl Screen {
    /// Ends the open line, if any, so the next output starts at column 0.
    pub fn end_line(&mut self) {
        if self.open != Open::Nothing {
            write("\n");
            self.open = Open::Nothing;
        }
    }

    /// A whole line of zerocode's own (already styled as wanted).
    pub fn line(&mut self, text: &str) {
        self.end_line();
        write(&format!("{text}\n"));
    }

    pub fn answer(&mut self, text: &str) {
        if self.open == Open::Thought {
            self.end_line();
        }
        let text = sanitize(text);
        if text.is_empty() {
            return;
        }
        write(&text);
        self.open = if text.ends_with('\n') {
            Open::Nothing
        } else {
            Open::Answer
        };
    }

    pub fn thought(&mut self, text: &str) {
        let text = sanitize(text);
        if text.is_empty() {
            return;
        }
        if self.open != Open::Thought {
            self.end_line();
            write(&dim("✻ "));
        }
        write(&dim(&text));
        self.open = if text.ends_with('\n') {
            Open::Nothing
        } else {
            Open::Thought
        };
    }

    pub fn tool_call(&mut self, name: &str, input: &Value) {
        let width = term::width()
            .saturating_sub(name.chars().count() + 4)
            .max(20);
        self.line(&format!(
            "⏺ {}  {}",
            term::bold(name),
            summarize(name, input, width)
        ));
    }

    pub fn tool_result(&mut self, output: &Value, is_error: bool) {
        let text = sanitize(&output_text(output));
        let (shown, folded) = fold(&text, RESULT_LINES);
        let width = term::width().saturating_sub(6).max(20);
        let (mark, paint): (&str, fn(&str) -> String) =
            if is_error { ("✗", red) } else { ("⎿", dim) };
        if shown.is_empty() {
            self.line(&format!("  {}", paint(&format!("{mark}  (no output)"))));
            return;
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
    }

    /// One event of a replayed history, compactly: user lines, answers and tool lines;
    /// thoughts are left out and each tool result is one line.
    pub fn replay(&mut self, update: &Update) {
        match update {
            Update::UserMessageChunk { text } => {
                self.end_line();
                write("\n");
                for line in sanitize(text).lines() {
                    self.line(&term::bold(&format!("> {line}")));
                }
            }
            Update::AgentMessageChunk { text } => {
                self.answer(text);
                self.end_line();
            }
            Update::ToolCall {
                name, raw_input, ..
            } => self.tool_call(name, raw_input),
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
            _ => {}
        }
    }
}

/// The line saying a session was compacted.
pub fn compacted(messages_folded: u64) -> String {
    format!(
        "context compacted: the model now reads a summary in place of {messages_folded} older messages (all still stored)"
    )
}

/// A tool call's arguments in a few words: `command` for bash, `path` for the file tools,
/// `question` for ask_user, else compact JSON; one line, at most `max` characters.
pub fn summarize(name: &str, input: &Value, max: usize) -> String {
    let key = match name {
        "bash" => Some("command"),
        "read_file" | "write_file" | "edit_file" | "list_dir" => Some("path"),
        "ask_user" => Some("question"),
        _ => None,
    };
    let text = key
        .and_then(|k| input.get(k))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| match input {
            Value::Null => String::new(),
            Value::Object(map) if map.is_empty() => String::new(),
            other => other.to_string(),
        });
    one_line(&sanitize(&text), max)
}

/// The first line of `text`, cut to `max` characters; `…` marks anything left out.
pub fn one_line(text: &str, max: usize) -> String {
    let mut lines = text.trim().lines();
    let first = lines.next().unwrap_or_default();
    let mut out = truncate(first, max);
    if lines.next().is_some() && !out.ends_with('…') {
        out.push_str(" …");
    }
    out
}

/// `text` cut to `max` characters, the last one replaced by `…` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
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

/// The line after a turn: `[end_turn]  12 in · 3 out tokens`.
pub fn status_line(stop: StopReason, usage: Option<Usage>) -> String {
    let mut line = format!("[{}]", stop.as_str());
    if let Some(u) = usage {
        line.push_str(&format!(
            "  {} in · {} out tokens",
            u.input_tokens, u.output_tokens
        ));
    }
    if stop == StopReason::MaxTurns {
        line.push_str("  (the agent stopped at agent.max_steps; send another prompt to go on)");
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
    fn the_status_line_names_the_stop_reason_and_tokens() {
        assert_eq!(status_line(StopReason::Cancelled, None), "[cancelled]");
        let usage = Usage {
            input_tokens: 10,
            output_tokens: 2,
        };
        assert_eq!(
            status_line(StopReason::EndTurn, Some(usage)),
            "[end_turn]  10 in · 2 out tokens"
        );
    }
}

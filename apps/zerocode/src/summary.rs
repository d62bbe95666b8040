//! Tool calls and texts in one line, as the transcript, the approvals and the subagents'
//! lines show them (no dependency on how any of them is drawn).

use crate::term::sanitize;
use serde_json::Value;

/// The longest description or agent name a `task` call's header shows.
const TASK_LABEL: usize = 80;

/// A tool call's arguments in a few words: `command` for bash, `path` for the file tools,
/// `question` for ask_user, `description (agent)` for task, else compact JSON; one line, at most `max` characters.
pub fn summarize(name: &str, input: &Value, max: usize) -> String {
    if name == "task" {
        return truncate(&task_header(input), max);
    }
    let key = match name {
        "bash" => Some("command"),
        "read_file" | "write_file" | "edit_file" | "list_dir" => Some("path"),
        "ask_user" => Some("question"),
        "glob" => Some("pattern"),
        "web_fetch" => Some("url"),
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

/// `Read the notes (reader)`: the `task` call's arguments in a few words.
pub fn task_header(input: &Value) -> String {
    let text = |key: &str| {
        input
            .get(key)
            .and_then(Value::as_str)
            .map(|s| one_line(&sanitize(s), TASK_LABEL))
            .filter(|s| !s.is_empty())
    };
    let description = text("description").unwrap_or_else(|| "(no description)".into());
    match text("agent") {
        Some(agent) => format!("{description} ({agent})"),
        None => description,
    }
}

//! `zeroclaw sessions [show ID | rename ID TITLE | delete ID]`.

use super::{connect, describe_call_error, print_json, resolve_session};
use crate::terminal::dim;
use zeroclaw_client::protocol::ListParams;
use zeroclaw_client::{Message, MessageKind};
use zeroclaw_ipc::Paths;

/// Messages fetched per `session/messages` call (the daemon's maximum).
const PAGE: usize = 1000;

pub async fn list(paths: &Paths, json: bool, search: Option<String>) -> Result<(), String> {
    let client = connect(paths).await?;
    // Every page, following `nextCursor`.
    let mut sessions = Vec::new();
    let mut cursor = None;
    loop {
        let params = ListParams {
            cursor,
            search: search.clone(),
            ..Default::default()
        };
        let page = client
            .session_list_page(params)
            .await
            .map_err(|e| describe_call_error(&e))?;
        sessions.extend(page.sessions);
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    if json {
        return print_json(serde_json::to_value(&sessions));
    }
    if sessions.is_empty() {
        match search {
            Some(search) => println!("no session's title or cwd contains {search:?}"),
            None => {
                println!("no sessions yet; start one with `zeroclaw prompt \"...\"` or `zerocode`")
            }
        }
        return Ok(());
    }
    println!(
        "{:<36}  {:<24}  {:>8}  {:<20}  CWD",
        "ID", "TITLE", "MESSAGES", "UPDATED"
    );
    for s in sessions {
        let mut title = s.title.unwrap_or_else(|| "-".into());
        if title.chars().count() > 24 {
            title = title.chars().take(23).collect::<String>() + "…";
        }
        let updated: String = s
            .updated_at
            .chars()
            .take(19)
            .collect::<String>()
            .replace('T', " ");
        let running = if s.running { "  (running)" } else { "" };
        println!(
            "{:<36}  {:<24}  {:>8}  {:<20}  {}{running}",
            s.session_id, title, s.message_count, updated, s.cwd
        );
    }
    Ok(())
}

pub async fn show(paths: &Paths, id: &str, json: bool) -> Result<(), String> {
    let client = connect(paths).await?;
    let id = &resolve_session(&client, id).await?;
    let mut messages: Vec<Message> = Vec::new();
    let mut before = None;
    // Pages come newest first; collect them all, then print oldest first.
    loop {
        let mut page = client
            .session_messages(id, Some(PAGE), before)
            .await
            .map_err(|e| describe_call_error(&e))?;
        // A page cut at its byte budget (`byteLimited`) is short but not the last.
        let done = page.messages.len() < PAGE && !page.byte_limited;
        before = page.messages.first().map(|m| m.id);
        page.messages.append(&mut messages);
        messages = page.messages;
        if done || before.is_none() {
            break;
        }
    }
    if json {
        return print_json(serde_json::to_value(&messages));
    }
    for m in &messages {
        print!("{}", render(m));
    }
    Ok(())
}

/// A hook's run in one line: `⚙ PreToolUse ./guard.sh: block (exit 2, 12 ms) no rm`.
fn hook_line(m: &Message) -> String {
    let data = m.raw_output.clone().unwrap_or_default();
    let field = |k: &str| {
        data.get(k)
            .and_then(|v| v.as_str())
            .unwrap_or("?")
            .to_owned()
    };
    let exit = match data.get("exitCode").and_then(|v| v.as_i64()) {
        Some(code) => format!("exit {code}"),
        None => "no exit code".into(),
    };
    let ms = data.get("durationMs").and_then(|v| v.as_u64()).unwrap_or(0);
    let text = m
        .text
        .as_deref()
        .map(|t| format!(" {t}"))
        .unwrap_or_default();
    format!(
        "⚙ {} {}: {} ({exit}, {ms} ms){text}",
        field("event"),
        field("command"),
        field("outcome")
    )
}

/// A stored plan (`todo_write`'s checklist), one line per step.
fn plan_lines(m: &Message) -> String {
    let entries = m
        .raw_output
        .as_ref()
        .and_then(|v| v.get("entries"))
        .and_then(serde_json::Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out = String::from("plan:");
    for entry in entries {
        let mark = match entry.get("status").and_then(serde_json::Value::as_str) {
            Some("completed") => "[x]",
            Some("in_progress") => "[~]",
            _ => "[ ]",
        };
        let content = entry.get("content").and_then(serde_json::Value::as_str);
        out.push_str(&format!("\n  {mark} {}", content.unwrap_or_default()));
    }
    out
}

fn render(m: &Message) -> String {
    let text = m.text.clone().unwrap_or_default();
    let cancelled = if m.cancelled {
        dim(" [cancelled]")
    } else {
        String::new()
    };
    match m.kind {
        MessageKind::User => format!("\n> {}\n", text.replace('\n', "\n> ")),
        MessageKind::Assistant => format!("{text}{cancelled}\n"),
        MessageKind::Thought => format!("{}\n", dim(&format!("(thinking) {text}"))),
        MessageKind::Summary => format!(
            "{}\n",
            dim(&format!(
                "── compacted: the model is sent this summary instead of the messages above ──\n{text}"
            ))
        ),
        MessageKind::Error => format!("{}\n", dim(&format!("✗ the turn failed: {text}"))),
        MessageKind::Hook => format!("{}\n", dim(&hook_line(m))),
        MessageKind::Plan => format!("{}\n", dim(&plan_lines(m))),
        MessageKind::ToolCall => format!(
            "{}\n",
            dim(&format!(
                "→ {} {}",
                m.name.as_deref().unwrap_or("?"),
                m.raw_input
                    .as_ref()
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            ))
        ),
        MessageKind::ToolResult => {
            let output = match &m.raw_output {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => String::new(),
            };
            let mark = if m.is_error == Some(true) {
                "✗"
            } else {
                "←"
            };
            format!(
                "{}{cancelled}\n",
                dim(&format!("{mark} {}", fold(&output, 12)))
            )
        }
    }
}

/// The first `lines` lines of `text`, and a count of the rest.
pub fn fold(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    if all.len() <= lines {
        return text.trim_end().to_owned();
    }
    format!(
        "{}\n… {} more lines",
        all[..lines].join("\n"),
        all.len() - lines
    )
}

pub async fn rename(paths: &Paths, id: &str, title: &str) -> Result<(), String> {
    let client = connect(paths).await?;
    let id = &resolve_session(&client, id).await?;
    let title = Some(title).filter(|t| !t.trim().is_empty());
    client
        .session_rename(id, title)
        .await
        .map_err(|e| describe_call_error(&e))?;
    match title {
        Some(title) => println!("renamed session {id} to {:?}", title.trim()),
        None => println!("cleared the title of session {id}"),
    }
    Ok(())
}

pub async fn delete(paths: &Paths, id: &str) -> Result<(), String> {
    let client = connect(paths).await?;
    let id = &resolve_session(&client, id).await?;
    let deleted = client
        .session_delete(id)
        .await
        .map_err(|e| describe_call_error(&e))?;
    if deleted {
        println!("deleted session {id}");
        Ok(())
    } else {
        Err(format!("no session {id}"))
    }
}

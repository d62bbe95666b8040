//! `zeroclaw sessions [show ID | rename ID TITLE | delete ID]`.

use super::{connect, describe_call_error, pretty};
use crate::terminal::dim;
use zeroclaw_client::{Message, MessageKind};
use zeroclaw_ipc::Paths;

/// Messages fetched per `session/messages` call (the daemon's maximum).
const PAGE: usize = 1000;

pub async fn list(paths: &Paths, json: bool, search: Option<String>) -> Result<(), String> {
    let client = connect(paths).await?;
    if json {
        // Every page, as the daemon sent them.
        let mut all = Vec::new();
        let mut params = serde_json::json!({});
        if let Some(search) = &search {
            params["search"] = search.as_str().into();
        }
        loop {
            let mut page = client
                .call("session/list", params.clone())
                .await
                .map_err(|e| describe_call_error(&e))?;
            if let Some(sessions) = page["sessions"].as_array_mut() {
                all.append(sessions);
            }
            match page.get("nextCursor") {
                Some(next) if next.is_string() => params["cursor"] = next.clone(),
                _ => break,
            }
        }
        println!("{}", pretty(&serde_json::Value::Array(all)));
        return Ok(());
    }
    let mut sessions = Vec::new();
    let mut cursor = None;
    loop {
        let params = zeroclaw_client::protocol::methods::ListParams {
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
    let mut messages: Vec<Message> = Vec::new();
    let mut raw: Vec<serde_json::Value> = Vec::new();
    let mut before = None;
    // Pages come newest first; collect them all, then print oldest first.
    loop {
        let mut params = serde_json::json!({"sessionId": id, "limit": PAGE});
        if let Some(before) = before {
            params["before"] = serde_json::json!(before);
        }
        let page = client
            .call("session/messages", params)
            .await
            .map_err(|e| describe_call_error(&e))?;
        let mut page_raw: Vec<serde_json::Value> =
            page["messages"].as_array().cloned().unwrap_or_default();
        let mut page_typed: Vec<Message> =
            serde_json::from_value(serde_json::Value::Array(page_raw.clone()))
                .map_err(|e| format!("unexpected session/messages result: {e}"))?;
        // A page cut at its byte budget (`byteLimited`) is short but not the last.
        let done = page_typed.len() < PAGE && page["byteLimited"] != serde_json::json!(true);
        before = page_typed.first().map(|m| m.id);
        page_typed.append(&mut messages);
        messages = page_typed;
        page_raw.append(&mut raw);
        raw = page_raw;
        if done || before.is_none() {
            break;
        }
    }
    if json {
        println!("{}", pretty(&serde_json::Value::Array(raw)));
        return Ok(());
    }
    for m in &messages {
        print!("{}", render(m));
    }
    Ok(())
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

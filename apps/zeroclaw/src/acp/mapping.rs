//! zeroclaw's vocabulary in ACP's words, and back: pure functions, no I/O. The table they
//! implement is in `docs/acp.md` ("The mapping").

use agent_client_protocol::Error as AcpError;
use agent_client_protocol::v1::schema::{
    CompactionStatus, CompactionUpdate, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, Usage,
};
use agent_client_protocol::v1::schema::{
    Content, ContentBlock, ContentChunk, EmbeddedResourceResource, PermissionOption,
    PermissionOptionKind, SessionUpdate, StopReason, TextContent, ToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use zeroclaw_client::protocol::ContentBlock as Ours;
use zeroclaw_client::{Decision, Update};
use zeroclaw_rpc::CallError;

/// The ACP kind of one of our tools: what an editor draws it as.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "bash" => ToolKind::Execute,
        "read_file" | "list_dir" => ToolKind::Read,
        "write_file" | "edit_file" => ToolKind::Edit,
        // Issue 33's tools.
        "glob" => ToolKind::Search,
        "web_fetch" => ToolKind::Fetch,
        "apply_patch" => ToolKind::Edit,
        "todo_write" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// The tool call's title: its name and main argument (``bash: `cargo test` ``,
/// `read_file src/main.rs`), or its name alone.
pub fn tool_title(name: &str, input: &Value) -> String {
    let arg = |key: &str| input.get(key).and_then(Value::as_str);
    match name {
        "bash" => match arg("command") {
            Some(command) => format!("bash: `{}`", one_line(command)),
            None => name.to_owned(),
        },
        "ask_user" => match arg("question") {
            Some(question) => format!("ask_user: {}", one_line(question)),
            None => name.to_owned(),
        },
        "grep" => match arg("pattern") {
            Some(pattern) => format!("grep {}", one_line(pattern)),
            None => name.to_owned(),
        },
        _ => match arg("path") {
            Some(path) => format!("{name} {path}"),
            None => name.to_owned(),
        },
    }
}

/// A title stays one line, and short: an editor shows it in a list.
fn one_line(text: &str) -> String {
    const MAX: usize = 120;
    let first = text.lines().next().unwrap_or_default();
    let mut out: String = first.chars().take(MAX).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// The file a call names (its `path` argument), absolute against the session's cwd.
pub fn tool_locations(input: &Value, cwd: &Path) -> Vec<ToolCallLocation> {
    input
        .get("path")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty())
        .map(|p| vec![ToolCallLocation::new(absolute(cwd, p))])
        .unwrap_or_default()
}

/// `path` against `cwd` unless it is absolute (ACP's paths are always absolute).
pub fn absolute(cwd: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// Our `tool_call`, as ACP's: status `pending`, its kind, title, input and location.
pub fn tool_call(id: &str, name: &str, input: &Value, cwd: &Path) -> ToolCall {
    ToolCall::new(id.to_owned(), tool_title(name, input))
        .kind(tool_kind(name))
        .status(ToolCallStatus::Pending)
        .raw_input(input.clone())
        .locations(tool_locations(input, cwd))
}

/// The same call as an update's fields: what `session/request_permission` shows.
pub fn tool_call_fields(id: &str, name: &str, input: &Value, cwd: &Path) -> ToolCallUpdate {
    ToolCallUpdate::new(
        id.to_owned(),
        ToolCallUpdateFields::new()
            .title(tool_title(name, input))
            .kind(tool_kind(name))
            .status(ToolCallStatus::Pending)
            .raw_input(input.clone())
            .locations(tool_locations(input, cwd)),
    )
}

/// Our `tool_result`, as ACP's `tool_call_update`: completed or failed, the output as text
/// content and as `rawOutput`.
pub fn tool_result(id: &str, output: &Value, is_error: bool) -> ToolCallUpdate {
    let text = match output {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let status = if is_error {
        ToolCallStatus::Failed
    } else {
        ToolCallStatus::Completed
    };
    ToolCallUpdate::new(
        id.to_owned(),
        ToolCallUpdateFields::new()
            .status(status)
            .content(vec![ToolCallContent::Content(Content::new(
                ContentBlock::Text(TextContent::new(text)),
            ))])
            .raw_output(output.clone()),
    )
}

fn text_chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text.to_owned())))
}

/// One of our events as the ACP `session/update` an editor shows; `None` for those ACP
/// has no update for (`approval_request` becomes a request of its own, `turn_complete`
/// the prompt's answer, `context_compacted` a `compaction_update` only for an editor that
/// declared them (the pump's, [`compaction`]), `session_rewound`, `session_forked` and
/// `hook_result` are ours alone: docs/checkpoints.md says how an editor reaches checkpoints).
pub fn update(update: &Update, cwd: &Path) -> Option<SessionUpdate> {
    Some(match update {
        Update::AgentMessageChunk { text } => SessionUpdate::AgentMessageChunk(text_chunk(text)),
        Update::AgentThoughtChunk { text } => SessionUpdate::AgentThoughtChunk(text_chunk(text)),
        // A replayed prompt's images are named in its text: ACP's user chunk is one block,
        // and the bytes are the daemon's (`session/attachment`).
        Update::UserMessageChunk { text, images } if !images.is_empty() => {
            let mut text = text.to_string();
            for image in images {
                text.push_str(&format!(
                    "\n[image: {}, {} bytes]",
                    image.mime_type, image.size
                ));
            }
            SessionUpdate::UserMessageChunk(text_chunk(&text))
        }
        Update::UserMessageChunk { text, .. } => SessionUpdate::UserMessageChunk(text_chunk(text)),
        // A `session/steer` message (another client's): shown as the user's words.
        Update::UserMessage { text } => SessionUpdate::UserMessageChunk(text_chunk(text)),
        Update::ToolCall {
            tool_call_id,
            name,
            raw_input,
        } => SessionUpdate::ToolCall(tool_call(tool_call_id, name, raw_input, cwd)),
        Update::ToolResult {
            tool_call_id,
            raw_output,
            is_error,
            ..
        } => SessionUpdate::ToolCallUpdate(tool_result(tool_call_id, raw_output, *is_error)),
        Update::Plan { entries } => SessionUpdate::Plan(plan(entries)),
        // A mode's ACP id is its name on our wire (`modes.rs`).
        Update::ModeChanged { mode, .. } => SessionUpdate::CurrentModeUpdate(
            agent_client_protocol::v1::schema::CurrentModeUpdate::new(mode.as_str()),
        ),
        Update::ApprovalRequest { .. }
        | Update::TurnComplete { .. }
        | Update::ContextCompacted { .. }
        | Update::SessionRewound { .. }
        | Update::SessionForked { .. }
        | Update::HookResult(_)
        | Update::Unknown => return None,
        // ACP has no update for a provider's retries or fallbacks: the prompt just takes longer.
        Update::ProviderRetry { .. } | Update::ProviderFallback { .. } => return None,
        // Cancels the pending `session/request_permission` instead (`acp/mod.rs`).
        Update::ApprovalResolved { .. } => return None,
        // ACP's gauge: the context used and its size, and the session's cost so far in the
        // prices' currency (both present once `[provider.pricing]` is set).
        Update::UsageUpdate(report) => {
            let usage = agent_client_protocol::v1::schema::UsageUpdate::new(
                report.context_used,
                report.context_size,
            );
            let usage = match (report.session.cost, &report.currency) {
                (Some(amount), Some(currency)) => usage.cost(
                    agent_client_protocol::v1::schema::Cost::new(amount, currency.clone()),
                ),
                _ => usage,
            };
            SessionUpdate::UsageUpdate(usage)
        }
    })
}

/// Our `context_compacted` as ACP's `compaction_update`: done (ours is sent once the
/// summary is written), the summary as its text, and how many messages it folded in
/// `_meta.zeroclaw.messagesFolded`.
pub fn compaction(id: String, summary: &str, messages_folded: u64) -> SessionUpdate {
    let mut ours = serde_json::Map::new();
    ours.insert("messagesFolded".into(), serde_json::json!(messages_folded));
    let mut meta = serde_json::Map::new();
    meta.insert("zeroclaw".into(), Value::Object(ours));
    SessionUpdate::CompactionUpdate(
        CompactionUpdate::new(id, CompactionStatus::Completed)
            .summary(vec![ContentBlock::Text(TextContent::new(
                summary.to_owned(),
            ))])
            .meta(meta),
    )
}

/// A compaction's id, unique in the session: the turn that compacted (none for
/// `session/compact`) and its rank among those the editor was sent since it opened the
/// session here.
pub fn compaction_id(turn_id: Option<&str>, n: u64) -> String {
    match turn_id {
        Some(turn) => format!("{turn}/compaction-{n}"),
        None => format!("compaction-{n}"),
    }
}

/// A turn's usage (our prompt result's) as ACP's (unstable) `usage` of a prompt's answer.
pub fn turn_usage(usage: zeroclaw_client::protocol::methods::Usage) -> Usage {
    Usage::new(
        usage.input_tokens.saturating_add(usage.output_tokens),
        usage.input_tokens,
        usage.output_tokens,
    )
}

/// A subagent's event (one tagged `parentToolCallId`: the parent's `task` call runs it) as
/// the editor sees it. ACP has no nesting, so only the child's tool calls and their results
/// are shown, as tool calls of their own: their ids made unique under the task call's
/// (`child_call_id`), their titles saying they are the subagent's, and `_meta.zeroclaw`
/// naming the task call and the child session for an editor that wants to nest them. The
/// child's text and thoughts are not the parent's answer (the task call's result carries the
/// child's answer), its plan is not the parent's plan, and its user message is the task's
/// prompt, already in the call's input: none of them is forwarded.
pub fn child_update(child: &ChildTag<'_>, update: &Update, cwd: &Path) -> Option<SessionUpdate> {
    match update {
        Update::ToolCall {
            tool_call_id,
            name,
            raw_input,
        } => {
            let mut call = tool_call(&child.call_id(tool_call_id), name, raw_input, cwd);
            call.title = child.title(name, raw_input);
            Some(SessionUpdate::ToolCall(call.meta(child.meta())))
        }
        Update::ToolResult {
            tool_call_id,
            raw_output,
            is_error,
            ..
        } => Some(SessionUpdate::ToolCallUpdate(
            tool_result(&child.call_id(tool_call_id), raw_output, *is_error).meta(child.meta()),
        )),
        _ => None,
    }
}

/// What tags a subagent's event: the parent's `task` call and the child session.
pub struct ChildTag<'a> {
    pub parent_tool_call_id: &'a str,
    pub child_session_id: Option<&'a str>,
}

impl ChildTag<'_> {
    /// A child's call id as the editor knows it: unique within the parent session even
    /// when the child's model reuses an id the parent's used (`call_1` in both).
    pub fn call_id(&self, id: &str) -> String {
        format!("{}/{id}", self.parent_tool_call_id)
    }

    /// `subagent · bash: `ls``: the call's usual title, marked as the subagent's.
    pub fn title(&self, name: &str, input: &Value) -> String {
        format!("subagent · {}", tool_title(name, input))
    }

    /// `_meta: {"zeroclaw": {"parentToolCallId", "childSessionId"}}`.
    pub fn meta(&self) -> agent_client_protocol::v1::schema::Meta {
        let mut tag = serde_json::Map::new();
        tag.insert(
            "parentToolCallId".into(),
            Value::String(self.parent_tool_call_id.to_owned()),
        );
        if let Some(child) = self.child_session_id {
            tag.insert("childSessionId".into(), Value::String(child.to_owned()));
        }
        let mut meta = serde_json::Map::new();
        meta.insert("zeroclaw".into(), Value::Object(tag));
        meta
    }

    /// The permission request's tool call for a child's approval request.
    pub fn call_fields(&self, id: &str, name: &str, input: &Value, cwd: &Path) -> ToolCallUpdate {
        let mut fields = tool_call_fields(&self.call_id(id), name, input, cwd);
        fields.fields.title = Some(self.title(name, input));
        fields.meta(self.meta())
    }
}

/// The agent's plan as ACP's, entry for entry; a step with no priority is `medium` (ACP
/// requires one).
pub fn plan(entries: &[zeroclaw_client::protocol::events::PlanEntry]) -> Plan {
    use zeroclaw_client::protocol::events::{PlanPriority as P, PlanStatus as S};
    Plan::new(
        entries
            .iter()
            .map(|entry| {
                let priority = match entry.priority {
                    Some(P::High) => PlanEntryPriority::High,
                    Some(P::Low) => PlanEntryPriority::Low,
                    Some(P::Medium) | None => PlanEntryPriority::Medium,
                };
                let status = match entry.status {
                    S::Pending => PlanEntryStatus::Pending,
                    S::InProgress => PlanEntryStatus::InProgress,
                    S::Completed => PlanEntryStatus::Completed,
                };
                PlanEntry::new(entry.content.clone(), priority, status)
            })
            .collect(),
    )
}

/// Our stop reason as ACP's. `error` never reaches a prompt's answer (the call fails
/// instead); should it, the turn did end.
pub fn stop_reason(reason: zeroclaw_client::StopReason) -> StopReason {
    match reason {
        zeroclaw_client::StopReason::EndTurn | zeroclaw_client::StopReason::Error => {
            StopReason::EndTurn
        }
        zeroclaw_client::StopReason::Cancelled => StopReason::Cancelled,
        // ACP has no budget reason: a turn stopped at one stopped at a limit on its
        // requests (docs/acp.md).
        zeroclaw_client::StopReason::MaxTurns | zeroclaw_client::StopReason::Budget => {
            StopReason::MaxTurnRequests
        }
    }
}

/// The permission options for the decisions the daemon offers: `optionId` is the kind.
pub fn permission_options(offered: &[Decision]) -> Vec<PermissionOption> {
    offered
        .iter()
        .map(|decision| match decision {
            Decision::AllowOnce => {
                PermissionOption::new("allow_once", "Allow", PermissionOptionKind::AllowOnce)
            }
            Decision::AllowAlways => PermissionOption::new(
                "allow_always",
                "Always allow in this session",
                PermissionOptionKind::AllowAlways,
            ),
            Decision::Reject => {
                PermissionOption::new("reject_once", "Reject", PermissionOptionKind::RejectOnce)
            }
        })
        .collect()
}

/// The decision an option the editor chose stands for; an option we did not offer is a
/// refusal.
pub fn decision(option_id: &str) -> Decision {
    match option_id {
        "allow_once" => Decision::AllowOnce,
        "allow_always" => Decision::AllowAlways,
        _ => Decision::Reject,
    }
}

/// A prompt's content blocks as our `session/prompt` takes them: text blocks as they are,
/// embedded text resources and links folded into the text as quoted context, images (and
/// image blobs) as our `content`, where the daemon checks them. Audio is refused
/// (`initialize` says so); a blob that is not an image is named, not sent.
pub fn prompt_parts(blocks: &[ContentBlock]) -> Result<(String, Vec<Ours>), AcpError> {
    let mut parts = Vec::with_capacity(blocks.len());
    let mut images = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(text) => parts.push(text.text.clone()),
            ContentBlock::Image(image) => images.push(Ours::Image {
                mime_type: image.mime_type.clone(),
                data: image.data.clone(),
                uri: image.uri.clone(),
            }),
            ContentBlock::Resource(resource) => match &resource.resource {
                EmbeddedResourceResource::TextResourceContents(contents) => parts.push(format!(
                    "Context from {}:\n```\n{}\n```",
                    contents.uri,
                    contents.text.trim_end_matches('\n')
                )),
                EmbeddedResourceResource::BlobResourceContents(contents)
                    if contents
                        .mime_type
                        .as_deref()
                        .is_some_and(|mime| mime.starts_with("image/")) =>
                {
                    images.push(Ours::Image {
                        mime_type: contents.mime_type.clone().unwrap_or_default(),
                        data: contents.blob.clone(),
                        uri: Some(contents.uri.clone()),
                    });
                }
                EmbeddedResourceResource::BlobResourceContents(contents) => {
                    parts.push(format!("[binary resource {} not included]", contents.uri));
                }
                _ => parts.push("[a resource of an unknown kind, not included]".into()),
            },
            ContentBlock::ResourceLink(link) => {
                parts.push(format!("[referenced: {} ({})]", link.name, link.uri));
            }
            ContentBlock::Audio(_) => {
                return Err(AcpError::invalid_params().data(Value::String(
                    "zeroclaw takes text, images, resources and resource links; audio is not supported (promptCapabilities)".into(),
                )));
            }
            _ => {
                return Err(AcpError::invalid_params().data(Value::String(
                    "a content block of a kind zeroclaw does not know".into(),
                )));
            }
        }
    }
    let text = parts.join("\n\n");
    if text.trim().is_empty() && images.is_empty() {
        return Err(AcpError::invalid_params().data(Value::String("the prompt is empty".into())));
    }
    Ok((text, images))
}

/// A failed call to the daemon as the error the editor gets: our code and message as
/// they are; a lost connection says the daemon went away.
pub fn call_error(e: &CallError) -> AcpError {
    match e {
        CallError::Rpc(e) => {
            let code = i32::try_from(e.code).unwrap_or(-32603);
            let error = AcpError::new(code, e.message.clone());
            match &e.data {
                Some(data) => error.data(data.clone()),
                None => error,
            }
        }
        CallError::Closed => AcpError::new(-32603, DAEMON_GONE),
        other => AcpError::new(-32603, format!("zeroclaw daemon: {other}")),
    }
}

/// What the editor is told when the daemon's connection is lost.
pub const DAEMON_GONE: &str =
    "the zeroclaw daemon went away (it stopped or crashed); restart the agent to reconnect";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn tools_get_the_kinds_and_titles_of_the_design() {
        assert_eq!(tool_kind("bash"), ToolKind::Execute);
        assert_eq!(tool_kind("read_file"), ToolKind::Read);
        assert_eq!(tool_kind("list_dir"), ToolKind::Read);
        assert_eq!(tool_kind("write_file"), ToolKind::Edit);
        assert_eq!(tool_kind("edit_file"), ToolKind::Edit);
        assert_eq!(tool_kind("github__search"), ToolKind::Other);
        assert_eq!(
            tool_title("bash", &json!({"command": "cargo test"})),
            "bash: `cargo test`"
        );
        assert_eq!(
            tool_title("read_file", &json!({"path": "src/main.rs"})),
            "read_file src/main.rs"
        );
        assert_eq!(tool_title("mystery", &json!({})), "mystery");
    }

    #[test]
    fn a_relative_path_becomes_an_absolute_location() {
        let cwd = if cfg!(windows) { "C:\\w" } else { "/w" };
        let locations = tool_locations(&json!({"path": "a/b.rs"}), Path::new(cwd));
        assert_eq!(locations.len(), 1);
        assert_eq!(locations[0].path, Path::new(cwd).join("a/b.rs"));
        assert!(tool_locations(&json!({"command": "ls"}), Path::new(cwd)).is_empty());
    }

    #[test]
    fn stop_reasons_and_decisions_map_both_ways() {
        use zeroclaw_client::StopReason as Ours;
        assert_eq!(stop_reason(Ours::EndTurn), StopReason::EndTurn);
        assert_eq!(stop_reason(Ours::Cancelled), StopReason::Cancelled);
        assert_eq!(stop_reason(Ours::MaxTurns), StopReason::MaxTurnRequests);
        for option in permission_options(&Decision::ALL) {
            let id = option.option_id.0.to_string();
            let kind = serde_json::to_value(option.kind).unwrap();
            assert_eq!(json!(id), kind, "optionId equals its kind");
        }
        assert_eq!(decision("allow_once"), Decision::AllowOnce);
        assert_eq!(decision("allow_always"), Decision::AllowAlways);
        assert_eq!(decision("reject_once"), Decision::Reject);
        assert_eq!(decision("something else"), Decision::Reject);
    }

    #[test]
    fn prompt_blocks_join_with_resources_quoted() {
        let blocks: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "text", "text": "Explain this:"},
            {"type": "resource", "resource": {"uri": "file:///w/a.rs", "text": "fn main() {}\n"}},
            {"type": "resource_link", "name": "b.rs", "uri": "file:///w/b.rs"}
        ]))
        .unwrap();
        assert_eq!(
            prompt_parts(&blocks).unwrap(),
            (
                "Explain this:\n\nContext from file:///w/a.rs:\n```\nfn main() {}\n```\n\n[referenced: b.rs (file:///w/b.rs)]"
                    .to_owned(),
                vec![]
            )
        );
        let images: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///w/c.gif", "mimeType": "image/gif", "blob": "AQ=="}},
            {"type": "resource", "resource": {"uri": "file:///w/d.bin", "blob": "Ag=="}}
        ]))
        .unwrap();
        let (text, content) = prompt_parts(&images).unwrap();
        assert_eq!(text, "[binary resource file:///w/d.bin not included]");
        assert_eq!(
            content,
            [
                Ours::Image {
                    mime_type: "image/png".into(),
                    data: "AA==".into(),
                    uri: None
                },
                Ours::Image {
                    mime_type: "image/gif".into(),
                    data: "AQ==".into(),
                    uri: Some("file:///w/c.gif".into())
                }
            ]
        );
        let audio: Vec<ContentBlock> = serde_json::from_value(
            json!([{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}]),
        )
        .unwrap();
        assert!(prompt_parts(&audio).is_err());
        assert!(prompt_parts(&[]).is_err());
    }
}

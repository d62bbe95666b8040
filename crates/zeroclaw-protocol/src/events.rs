//! `session/update`: the events a daemon sends to every connection attached to a session.

use crate::methods::{Decision, StopReason};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;

/// The notification's method name.
pub const SESSION_UPDATE: &str = "session/update";

/// The `type`s of [`Update`] a daemon sends, in the order `initialize` advertises them.
/// The test below keeps it equal to the enum's variants.
pub const EVENTS: &[&str] = &[
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_result",
    "approval_request",
    "user_message_chunk",
    "turn_complete",
    "context_compacted",
    "session_rewound",
    "session_forked",
    "hook_result",
    "plan",
    "mode_changed",
    "user_message",
    "approval_resolved",
    "usage_update",
    "provider_retry",
    "provider_fallback",
];

/// The params of one `session/update`: `{sessionId, turnId?, type, ...}`.
///
/// Text is borrowed where the daemon has it (`Cow`), so the hottest event, a streamed
/// chunk, is serialised straight from the provider's buffer; clients get owned data
/// (`SessionUpdate<'static>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionUpdate<'a> {
    pub session_id: Cow<'a, str>,
    /// Absent only on events that belong to no turn (none so far).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<Cow<'a, str>>,
    /// Present on a subagent's event as its parent session's clients get it: the id of
    /// the parent's `task` call that runs the subagent (then `sessionId` and `turnId` are
    /// the parent's, and `childSessionId` names the child session). Clients nest such
    /// events under that call; a client that does not know the member shows them as the
    /// parent's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_tool_call_id: Option<Cow<'a, str>>,
    /// With `parentToolCallId`: the child session the event happened in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_session_id: Option<Cow<'a, str>>,
    #[serde(flatten)]
    pub update: Update<'a>,
}

/// What happened, tagged by `type`. A type this build does not know reads as
/// [`Update::Unknown`], so a newer daemon's events do not break an older client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Update<'a> {
    /// A piece of the agent's answer as it streams.
    AgentMessageChunk { text: Cow<'a, str> },
    /// A piece of the model's reasoning as it streams.
    AgentThoughtChunk { text: Cow<'a, str> },
    /// The user's prompt (sent in a history replay), with the images it carried (their
    /// bytes: `session/attachment`), on its first chunk only.
    UserMessageChunk {
        text: Cow<'a, str>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<crate::methods::ImageRef>,
    },
    /// The model called a tool; `rawInput` is its arguments as the model wrote them.
    #[serde(rename_all = "camelCase")]
    ToolCall {
        tool_call_id: String,
        name: String,
        #[serde(default)]
        raw_input: Value,
    },
    /// A tool call's output (or the reason it did not run).
    #[serde(rename_all = "camelCase")]
    ToolResult {
        tool_call_id: String,
        name: String,
        #[serde(default)]
        raw_output: Value,
        #[serde(default)]
        is_error: bool,
    },
    /// A tool call waits for `session/approve`.
    #[serde(rename_all = "camelCase")]
    ApprovalRequest {
        request_id: String,
        tool_call_id: String,
        name: String,
        #[serde(default)]
        raw_input: Value,
        #[serde(default)]
        options: Vec<Decision>,
        /// The path the call will touch, resolved; absent for a tool that names none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<ApprovalTarget>,
        /// Why this call is asked about although its policy would let it run (it reaches
        /// the daemon's own files); absent when the policy is simply `ask`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// What the call would do, computed by the daemon (which can read the file): a
        /// diff for `write_file` and `edit_file`, the command and its cwd for `bash`;
        /// absent for other tools (and from older daemons).
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "lenient_preview"
        )]
        /// Boxed: the largest member, which would otherwise grow every `Update`.
        preview: Option<Box<ApprovalPreview>>,
        /// Present when the call asks to run **outside the sandbox** (`bash` with
        /// `sandbox: "escape"`): why, in the model's words. Such a request is sent whatever
        /// the policy or `allow_always` say, offers only `allow_once` and `reject`, and is
        /// never made in an unattended run (docs/sandbox.md).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        escape: Option<crate::methods::SandboxEscape>,
    },
    /// The turn has ended; sent before the `session/prompt` answer.
    #[serde(rename_all = "camelCase")]
    TurnComplete {
        stop_reason: StopReason,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// Older messages were folded into a summary, which the model is sent from now on in
    /// their place; the messages stay stored (`session/messages`).
    #[serde(rename_all = "camelCase")]
    ContextCompacted {
        summary: Cow<'a, str>,
        messages_folded: u64,
    },
    /// `session/rewind` (or `session/unrewind`, with `undone`) changed the session: its
    /// files and/or the conversation the model sees. Clients redraw (`session/messages`).
    #[serde(rename_all = "camelCase")]
    SessionRewound {
        /// The checkpoint rewound to; absent for an unrewind.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        checkpoint_id: Option<String>,
        undo_id: String,
        /// Paths restored.
        files_restored: u64,
        /// Messages hidden (a rewind) or shown again (an unrewind).
        messages: u64,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        undone: bool,
    },
    /// `session/fork` made a new session from this one (which is untouched).
    #[serde(rename_all = "camelCase")]
    SessionForked {
        new_session_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        checkpoint_id: Option<String>,
        title: String,
    },
    /// A hook ran (docs/project.md): a user's command configured for one of the agent's
    /// events, its exit code and what it decided. Stored in the history and replayed.
    /// Boxed: a large member that would otherwise grow every `Update`.
    HookResult(Box<HookResult>),
    /// The agent's plan changed (its `todo_write` tool): the whole checklist, in order,
    /// each time. Stored in the history and replayed, so a client joining later (or
    /// reloading) shows the latest one. ACP's `plan` session update, entry for entry.
    Plan { entries: Vec<PlanEntry> },
    /// The session's permission mode changed (`session/set_mode`, or an approved
    /// `exit_plan`); sent to every attached client, never stored (the mode is in
    /// `SessionInfo`/`SessionSummary`).
    ModeChanged {
        mode: crate::methods::PermissionMode,
        previous: crate::methods::PermissionMode,
    },
    /// A `session/steer` message, as the running turn takes it (stored, then sent, before
    /// the model request that carries it).
    UserMessage { text: Cow<'a, str> },
    /// An `approval_request` was settled: answered by a client, timed out, or dropped by the
    /// turn's cancellation. Sent before the call's `tool_result`; clients remove the prompt.
    #[serde(rename_all = "camelCase")]
    ApprovalResolved {
        request_id: String,
        /// What was decided; a time-out or a cancellation is `reject`.
        decision: Decision,
        /// Who settled it: `client`, `timeout` or `cancelled`.
        by: ResolvedBy,
    },
    /// After each model call: its tokens, the turn's and the session's totals, how full the
    /// context window is, and the cost when `[provider.pricing]` is set. Live only: not
    /// stored nor replayed (`session/usage` answers the totals). Boxed: large.
    UsageUpdate(Box<crate::methods::UsageReport>),
    /// A model call failed in a way worth another try (429, 5xx, a failed connect before
    /// the response head) and will be sent again after `delayMs` (`Retry-After` when the
    /// provider named one). Live only: never stored or replayed (an unattended run's
    /// record counts them).
    #[serde(rename_all = "camelCase")]
    ProviderRetry {
        /// 1 for the first retry of this call to this provider.
        attempt: u32,
        delay_ms: u64,
        /// What failed: `HTTP 429 Too Many Requests`, `cannot connect`, `timed out`...;
        /// never a response body, a URL's credentials or a key.
        reason: String,
        /// The provider retried, as `<model> at <base URL>` (the primary or a fallback).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
    /// The model call's provider failed before any output (its retries spent), and the
    /// call goes to the next `[[fallback]]` provider. Live only, like `provider_retry`;
    /// the next model call starts from the configured provider again.
    ProviderFallback {
        /// The provider that failed, as `<model> at <base URL>`.
        from: String,
        /// The one tried now, likewise.
        to: String,
        /// Why `from` failed, as in `provider_retry`.
        reason: String,
    },
    /// An event type this build does not know.
    #[serde(other)]
    Unknown,
}

/// One step of the agent's plan (a `plan` event's entry): ACP's `PlanEntry`, its
/// `priority` optional (the `todo_write` tool sets none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanEntry {
    /// What the step is, in the agent's words.
    pub content: String,
    pub status: PlanStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<PlanPriority>,
}

/// Where a plan's step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    Pending,
    InProgress,
    Completed,
}

/// How much a plan's step matters (ACP's three levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanPriority {
    High,
    Medium,
    Low,
}

/// Who settled an approval request (`approval_resolved`'s `by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolvedBy {
    /// A client's `session/approve` (any attached client).
    Client,
    /// Nobody answered within `approvals.timeout_secs`.
    Timeout,
    /// The turn was cancelled (or its session deleted, the daemon stopped) first.
    Cancelled,
}

/// One hook's run: which event, which command, how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookResult {
    /// `SessionStart`, `UserPromptSubmit`, `PreToolUse`, `PostToolUse`, `Stop` or
    /// `PreCompact`.
    pub event: String,
    /// The command as configured.
    pub command: String,
    /// Where it was configured: `user` (config.toml) or `project` (`.zeroclaw/hooks.toml`).
    pub source: String,
    /// Its exit code; absent when it was killed (a time-out, a signal) or could not start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// The tool call it was about (`PreToolUse`, `PostToolUse`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// What the agent did with it: `continue`, `block` (exit 2 or `decision: "block"`),
    /// `allow`, `deny` or `ask` (a `PreToolUse` `permissionDecision`), or `error` (another
    /// exit code, a time-out, a command that could not start: shown, never blocking).
    pub outcome: String,
    /// Killed at its `timeout_secs`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// The reason given to the model or the user (stderr on exit 2, `reason`,
    /// `permissionDecisionReason`), or why it failed; cut to 4 KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What its stdout added to the model's context (`SessionStart`, `UserPromptSubmit`);
    /// cut to the capture's limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

/// What an `approval_request`'s call would do, for the person deciding, tagged by `kind`.
/// A kind this build does not know reads as [`ApprovalPreview::Unknown`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalPreview {
    /// The change to a file as a unified diff: hunks only (`@@ -a,b +c,d @@` then lines
    /// starting with ` `, `-` or `+`, and `\ No newline at end of file`), 3 lines of
    /// context, no `---`/`+++` header (`path` says which file).
    #[serde(rename_all = "camelCase")]
    Diff {
        /// Absolute, resolved as the tool will write it.
        path: String,
        /// The file does not exist yet: every line is added.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        created: bool,
        diff: String,
        /// Diff lines left out at the end to keep the preview bounded; absent when none.
        #[serde(default, skip_serializing_if = "is_zero")]
        omitted_lines: u64,
    },
    /// The call cannot be shown as a diff, and why, in a sentence: the edit would fail
    /// (its `old_text` is not in the file…), the file is binary, unreadable or too large.
    #[serde(rename_all = "camelCase")]
    Unavailable { path: String, reason: String },
    /// A command line and the directory it runs in.
    #[serde(rename_all = "camelCase")]
    Command { command: String, cwd: String },
    /// A kind this build does not know.
    #[serde(other)]
    Unknown,
}

/// A preview this build cannot read (a newer daemon's shape) is [`ApprovalPreview::Unknown`]
/// rather than an error, which would lose the whole `approval_request`.
fn lenient_preview<'de, D>(de: D) -> Result<Option<Box<ApprovalPreview>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let value = Option::<Value>::deserialize(de)?;
    Ok(
        value
            .map(|v| Box::new(ApprovalPreview::deserialize(v).unwrap_or(ApprovalPreview::Unknown))),
    )
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What an `approval_request`'s call will really touch, as opposed to what the model wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalTarget {
    /// Absolute, resolved through the symbolic links of its existing parts.
    pub path: String,
    /// Not inside the session's working directory (a link leading out counts).
    pub outside_cwd: bool,
}

impl<'a> Update<'a> {
    /// A streamed chunk: of the reasoning if `thought`, else of the answer.
    pub fn chunk(thought: bool, text: impl Into<Cow<'a, str>>) -> Self {
        let text = text.into();
        if thought {
            Update::AgentThoughtChunk { text }
        } else {
            Update::AgentMessageChunk { text }
        }
    }

    /// The event's `type`, as on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            Update::AgentMessageChunk { .. } => "agent_message_chunk",
            Update::AgentThoughtChunk { .. } => "agent_thought_chunk",
            Update::UserMessageChunk { .. } => "user_message_chunk",
            Update::ToolCall { .. } => "tool_call",
            Update::ToolResult { .. } => "tool_result",
            Update::ApprovalRequest { .. } => "approval_request",
            Update::TurnComplete { .. } => "turn_complete",
            Update::ContextCompacted { .. } => "context_compacted",
            Update::SessionRewound { .. } => "session_rewound",
            Update::SessionForked { .. } => "session_forked",
            Update::HookResult(_) => "hook_result",
            Update::Plan { .. } => "plan",
            Update::ModeChanged { .. } => "mode_changed",
            Update::UserMessage { .. } => "user_message",
            Update::ApprovalResolved { .. } => "approval_resolved",
            Update::UsageUpdate(_) => "usage_update",
            Update::ProviderRetry { .. } => "provider_retry",
            Update::ProviderFallback { .. } => "provider_fallback",
            Update::Unknown => "unknown",
        }
    }
}

impl SessionUpdate<'static> {
    /// Reads a `session/update`'s params; `None` if they carry no session id. An event of
    /// an unknown type (or a known type with unreadable members) is [`Update::Unknown`].
    pub fn parse(params: &Value) -> Option<Self> {
        let session_id = params.get("sessionId")?.as_str()?.to_owned();
        let turn_id = params
            .get("turnId")
            .and_then(Value::as_str)
            .map(|t| Cow::Owned(t.to_owned()));
        let member = |name: &str| {
            params
                .get(name)
                .and_then(Value::as_str)
                .map(|t| Cow::Owned(t.to_owned()))
        };
        let update = Update::deserialize(params).unwrap_or(Update::Unknown);
        Some(Self {
            session_id: Cow::Owned(session_id),
            turn_id,
            parent_tool_call_id: member("parentToolCallId"),
            child_session_id: member("childSessionId"),
            update,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn one_of_each() -> Vec<Update<'static>> {
        vec![
            Update::AgentMessageChunk { text: "a".into() },
            Update::AgentThoughtChunk { text: "b".into() },
            Update::ToolCall {
                tool_call_id: "c".into(),
                name: "bash".into(),
                raw_input: json!({"command": "ls"}),
            },
            Update::ToolResult {
                tool_call_id: "c".into(),
                name: "bash".into(),
                raw_output: json!("out"),
                is_error: false,
            },
            Update::ApprovalRequest {
                request_id: "r".into(),
                tool_call_id: "c".into(),
                name: "bash".into(),
                raw_input: json!({}),
                options: Decision::ALL.to_vec(),
                target: Some(ApprovalTarget {
                    path: "/w/x".into(),
                    outside_cwd: true,
                }),
                reason: None,
                preview: Some(Box::new(ApprovalPreview::Command {
                    command: "ls".into(),
                    cwd: "/w".into(),
                })),
                escape: Some(crate::methods::SandboxEscape {
                    justification: "needs ~/.cache".into(),
                }),
            },
            Update::UserMessageChunk {
                text: "u".into(),
                images: Vec::new(),
            },
            Update::TurnComplete {
                stop_reason: StopReason::EndTurn,
                error: None,
            },
            Update::ContextCompacted {
                summary: "s".into(),
                messages_folded: 3,
            },
            Update::SessionRewound {
                checkpoint_id: Some("c".into()),
                undo_id: "u".into(),
                files_restored: 2,
                messages: 4,
                undone: false,
            },
            Update::SessionForked {
                new_session_id: "n".into(),
                checkpoint_id: None,
                title: "fork of t".into(),
            },
            Update::HookResult(Box::new(HookResult {
                event: "PreToolUse".into(),
                command: "./guard.sh".into(),
                source: "project".into(),
                exit_code: Some(2),
                duration_ms: 12,
                tool_call_id: Some("c".into()),
                tool_name: Some("bash".into()),
                outcome: "block".into(),
                timed_out: false,
                message: Some("no rm".into()),
                context: None,
            })),
            Update::Plan {
                entries: vec![PlanEntry {
                    content: "read the code".into(),
                    status: PlanStatus::InProgress,
                    priority: None,
                }],
            },
            Update::ModeChanged {
                mode: crate::methods::PermissionMode::Default,
                previous: crate::methods::PermissionMode::Plan,
            },
            Update::UserMessage {
                text: "also this".into(),
            },
            Update::ApprovalResolved {
                request_id: "r".into(),
                decision: Decision::Reject,
                by: ResolvedBy::Timeout,
            },
            Update::UsageUpdate(Box::new(crate::methods::UsageReport {
                input_tokens: 10,
                output_tokens: 2,
                cached_input_tokens: 4,
                cost: Some(0.25),
                currency: Some("USD".into()),
                estimated: false,
                turn: crate::methods::UsageTotals {
                    input_tokens: 10,
                    output_tokens: 2,
                    cached_input_tokens: 4,
                    cost: Some(0.25),
                    estimated: false,
                },
                session: crate::methods::UsageTotals::default(),
                context_used: 10,
                context_size: 8192,
            })),
            Update::ProviderRetry {
                attempt: 1,
                delay_ms: 1000,
                reason: "HTTP 429 Too Many Requests".into(),
                provider: Some("m at http://h/v1".into()),
            },
            Update::ProviderFallback {
                from: "m at http://h/v1".into(),
                to: "n at http://g/v1".into(),
                reason: "HTTP 503 Service Unavailable".into(),
            },
        ]
    }

    #[test]
    fn the_advertised_events_are_exactly_the_variants_in_order() {
        let kinds: Vec<&str> = one_of_each().iter().map(Update::kind).collect();
        assert_eq!(kinds, EVENTS);
        for update in one_of_each() {
            let wire = serde_json::to_value(&update).unwrap();
            assert_eq!(wire["type"], update.kind());
            assert_eq!(Update::deserialize(&wire).unwrap(), update, "round trip");
        }
    }

    #[test]
    fn an_update_serialises_flat_with_its_session_and_turn() {
        let update = SessionUpdate {
            session_id: "s".into(),
            turn_id: Some("t".into()),
            parent_tool_call_id: None,
            child_session_id: None,
            update: Update::AgentMessageChunk { text: "hi".into() },
        };
        assert_eq!(
            serde_json::to_string(&update).unwrap(),
            r#"{"sessionId":"s","turnId":"t","type":"agent_message_chunk","text":"hi"}"#
        );
    }

    #[test]
    fn updates_parse_by_type_and_unknown_types_are_kept_as_unknown() {
        let u = SessionUpdate::parse(&json!({"sessionId":"s","turnId":"t","type":"tool_call","toolCallId":"c","name":"bash","rawInput":{"command":"ls"}})).unwrap();
        assert_eq!(u.turn_id.as_deref(), Some("t"));
        assert_eq!(
            u.update,
            Update::ToolCall {
                tool_call_id: "c".into(),
                name: "bash".into(),
                raw_input: json!({"command":"ls"})
            }
        );
        let u =
            SessionUpdate::parse(&json!({"sessionId":"s","type":"future_thing","x":1})).unwrap();
        assert_eq!(u.update, Update::Unknown);
        assert!(SessionUpdate::parse(&json!({"type":"turn_complete"})).is_none());
    }

    #[test]
    fn an_approval_previews_shape_is_tagged_camel_case_and_a_strange_one_keeps_the_request() {
        let diff = ApprovalPreview::Diff {
            path: "/w/a".into(),
            created: true,
            diff: "@@ -0,0 +1 @@\n+x\n".into(),
            omitted_lines: 0,
        };
        assert_eq!(
            serde_json::to_value(&diff).unwrap(),
            json!({"kind": "diff", "path": "/w/a", "created": true, "diff": "@@ -0,0 +1 @@\n+x\n"})
        );
        let request = |preview: Value| {
            let mut wire = json!({"sessionId": "s", "type": "approval_request", "requestId": "r",
                "toolCallId": "c", "name": "bash", "rawInput": {}, "options": []});
            if !preview.is_null() {
                wire["preview"] = preview;
            }
            match SessionUpdate::parse(&wire).unwrap().update {
                Update::ApprovalRequest { preview, .. } => preview,
                other => panic!("not an approval request: {other:?}"),
            }
        };
        assert_eq!(request(Value::Null), None);
        assert_eq!(
            request(json!({"kind": "command", "command": "ls", "cwd": "/w"})),
            Some(Box::new(ApprovalPreview::Command {
                command: "ls".into(),
                cwd: "/w".into()
            }))
        );
        assert_eq!(
            request(json!({"kind": "picture", "png": "…"})),
            Some(Box::new(ApprovalPreview::Unknown))
        );
        assert_eq!(
            request(json!({"kind": "diff"})),
            Some(Box::new(ApprovalPreview::Unknown))
        );
    }
}

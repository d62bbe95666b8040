//! What the agent knows of a session's project (docs/project.md): `session/context` (the
//! instruction files, skills and custom commands it loaded, and why some were skipped),
//! `commands/list` and `commands/expand` (a custom command's prompt, its arguments filled in).

use super::session::{InstructionFile, SessionIdParams};
use serde::{Deserialize, Serialize};

method!(
    /// What the session's turns load from its project and the config dir.
    SessionContext, "session/context", SessionIdParams, ProjectContext
);
method!(
    /// The custom commands of the session's project and of the config dir.
    CommandsList, "commands/list", SessionIdParams, CommandsListResult
);
method!(
    /// A custom command's prompt with its arguments filled in, for the client to send.
    CommandsExpand, "commands/expand", ExpandParams, ExpandResult
);

/// `session/context`'s result: read from disk when asked, as the next turn will read it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProjectContext {
    /// The nearest directory at or above the session's cwd holding `.git`, else the cwd.
    pub project_root: String,
    /// The instruction files in the order the system prompt has them.
    pub instructions: Vec<InstructionFile>,
    pub skills: Vec<SkillInfo>,
    pub commands: Vec<CommandInfo>,
    /// What was skipped and why (malformed front matter, a name taken, the total cap).
    pub warnings: Vec<String>,
    /// The hooks configured for the session: the user's (config.toml), then the project's
    /// (`.zeroclaw/hooks.toml`), those of an untrusted project marked `skipped`.
    #[serde(default)]
    pub hooks: Vec<HookInfo>,
    /// Whether the user trusts the project (`zeroclaw trust`): its hooks run only then.
    #[serde(default)]
    pub project_trusted: bool,
    /// The agent profiles the `task` tool can run (the built-in `explore` first).
    #[serde(default)]
    pub agents: Vec<AgentInfo>,
}

/// An agent profile (`.zeroclaw/agents/NAME.md`, `<config dir>/agents/NAME.md`, or built in).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AgentInfo {
    pub name: String,
    pub description: String,
    /// The tools it may use; absent: all of the parent's but `task`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Its model; absent: the parent session's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The file it was read from; absent for a built-in profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// One configured hook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct HookInfo {
    /// `SessionStart`, `UserPromptSubmit`, `PreToolUse`, `PostToolUse`, `Stop`, `PreCompact`.
    pub event: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    pub command: String,
    pub timeout_secs: u64,
    /// `user` or `project`.
    pub source: String,
    /// Why it does not run (its project is not trusted); absent when it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// A skill whose name and description the system prompt lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SkillInfo {
    pub name: String,
    pub description: String,
    /// Its `SKILL.md`.
    pub path: String,
}

/// A custom command: `/NAME ARGS` in a client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CommandInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// What to type after the name, as its author hints it (`[issue number]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
    /// Its file.
    pub path: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CommandsListResult {
    pub commands: Vec<CommandInfo>,
}

/// `commands/expand` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExpandParams {
    pub session_id: String,
    /// The command's name, without the `/`.
    pub name: String,
    /// What followed the name, as typed: `$ARGUMENTS` whole, `$1`, `$2`… split as a shell
    /// would (docs/project.md).
    #[serde(default)]
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ExpandResult {
    /// The prompt to send.
    pub prompt: String,
}

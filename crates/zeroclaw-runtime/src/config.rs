//! `<config dir>/config.toml`. Every key has a default, so no file at all is a valid
//! configuration; an unknown key is an error (a typo should not be silently ignored).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod unattended;
pub use unattended::{
    DEFAULT_MAX_BODY_BYTES, DEFAULT_QUEUE, DEFAULT_REPLAY_WINDOW_SECS, Piece, ScheduleConfig,
    SessionMode, Signature, Template, WebhookConfig, parse_cron,
};

/// The smallest frame cap accepted: room for the handshake and ordinary requests.
pub const MIN_FRAME_BYTES: usize = 1024;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub daemon: DaemonConfig,
    pub provider: ProviderConfig,
    pub agent: AgentConfig,
    pub approvals: ApprovalsConfig,
    pub tools: ToolsConfig,
    /// `[[mcp_servers]]`: MCP servers whose tools the agent gets (`mcp/`).
    pub mcp_servers: Vec<McpServerConfig>,
    /// `[gateway]`: HTTP/WebSocket (see docs/gateway.md).
    pub gateway: zeroclaw_gateway::GatewayConfig,
    /// `[[webhooks]]`: unattended turns started by a signed HTTP request (docs/unattended.md).
    pub webhooks: Vec<WebhookConfig>,
    /// `[[schedules]]`: unattended turns started by a cron expression (docs/unattended.md).
    pub schedules: Vec<ScheduleConfig>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Any OpenAI-compatible Chat Completions server (OpenAI, Ollama, llama.cpp, vLLM, OpenRouter).
    Openai,
    /// Anthropic's Messages API.
    Anthropic,
}

/// `[provider]`. The default is a local Ollama, so a user running one needs no set-up.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    pub base_url: String,
    pub model: String,
    /// The environment variable holding the API key. The key itself is never stored.
    pub api_key_env: Option<String>,
    pub connect_timeout_secs: u64,
    /// Longest silence tolerated inside a streaming answer.
    pub idle_timeout_secs: u64,
    /// Retries on 429/5xx or a failed connect before the first token.
    pub max_retries: u32,
    /// `max_tokens` per model call (required by Anthropic, optional for OpenAI).
    pub max_tokens: Option<u32>,
    /// The model's context window in tokens; unset: known for well-known model names,
    /// else a conservative 8192 (`provider/window.rs`).
    pub context_window: Option<u64>,
}

impl Default for ProviderConfig {
    fn default() -> Self {
        Self {
            kind: ProviderKind::Openai,
            base_url: "http://127.0.0.1:11434/v1".into(),
            model: "llama3.2".into(),
            api_key_env: None,
            connect_timeout_secs: 10,
            idle_timeout_secs: 120,
            max_retries: 3,
            max_tokens: None,
            context_window: None,
        }
    }
}

/// `[agent]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// Model calls per turn before it stops with `max_turns`.
    pub max_steps: u32,
    /// Turns running at once across all sessions; one more prompt is answered `-32001`.
    pub max_running_turns: usize,
    /// How long `ask_user` waits for the client's answer.
    pub ask_user_timeout_secs: u64,
    pub system_prompt: Option<String>,
    /// Tool calls run per model call; each further call of that step gets an error result.
    pub max_tool_calls_per_step: usize,
    /// A turn compacts the session before a model call whose request would pass this share
    /// of the context window, in percent (10 to 95).
    pub compact_at_percent: u8,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_steps: 25,
            max_running_turns: 64,
            ask_user_timeout_secs: 300,
            system_prompt: None,
            max_tool_calls_per_step: 64,
            compact_at_percent: 80,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    Ask,
    Allow,
    Deny,
}

/// `[approvals]`: `<tool> = "ask" | "allow" | "deny"`, plus the answer timeout.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApprovalsConfig {
    pub timeout_secs: u64,
    pub bash: Policy,
    pub write_file: Policy,
    pub edit_file: Policy,
    pub read_file: Policy,
    pub list_dir: Policy,
    pub grep: Policy,
    pub ask_user: Policy,
}

impl Default for ApprovalsConfig {
    fn default() -> Self {
        Self {
            timeout_secs: 120,
            bash: Policy::Ask,
            write_file: Policy::Ask,
            edit_file: Policy::Ask,
            read_file: Policy::Allow,
            list_dir: Policy::Allow,
            grep: Policy::Allow,
            ask_user: Policy::Allow,
        }
    }
}

impl ApprovalsConfig {
    pub fn policy(&self, tool: &str) -> Policy {
        match tool {
            "bash" => self.bash,
            "write_file" => self.write_file,
            "edit_file" => self.edit_file,
            "read_file" => self.read_file,
            "list_dir" => self.list_dir,
            "grep" => self.grep,
            "ask_user" => self.ask_user,
            // A tool this table does not know changes nothing it can vouch for.
            _ => Policy::Ask,
        }
    }
}

/// `[tools]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsConfig {
    pub bash_timeout_secs: u64,
    pub output_limit_bytes: usize,
    /// The most of one bash command's output saved to a file when it is longer than
    /// `output_limit_bytes` (`tools/spill.rs`); 0 saves nothing.
    pub saved_output_limit_bytes: u64,
    /// Variables (`*` matches any run of characters, ASCII case ignored) the processes
    /// tools start do not inherit, besides `provider.api_key_env`.
    pub scrub_env: Vec<String>,
    /// Tools that write a path (`write_file`, `edit_file`) refuse a path outside the
    /// session's cwd without asking.
    pub confine_to_cwd: bool,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        Self {
            bash_timeout_secs: 120,
            output_limit_bytes: 32 * 1024,
            saved_output_limit_bytes: 256 * 1024 * 1024,
            scrub_env: vec!["*_API_KEY".into()],
            confine_to_cwd: true,
        }
    }
}

/// One `[[mcp_servers]]` entry: a stdio server (`command`) or a streamable HTTP one (`url`).
/// `${VAR}` in `env` and `headers` values is taken from the daemon's environment when the
/// server starts (`mcp/vars.rs`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// `^[a-zA-Z0-9-]{1,32}$`: its tools are offered as `<name>__<tool>`.
    pub name: String,
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The child's working directory; default: the daemon's (a session's own servers: the
    /// session's cwd).
    pub cwd: Option<PathBuf>,
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub approve: Approve,
    /// A call's time limit, and the start's (spawn, `initialize`, `tools/list`).
    #[serde(default = "default_mcp_timeout")]
    pub timeout_secs: u64,
    #[serde(default = "default_true")]
    pub enabled: bool,
}

fn default_mcp_timeout() -> u64 {
    120
}

fn default_true() -> bool {
    true
}

/// `approve`: one policy for every tool of a server, or one per tool name (the server's own
/// name, without the `<server>__` prefix) with `"*"` for the others.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Approve {
    All(Policy),
    PerTool(BTreeMap<String, Policy>),
}

impl Default for Approve {
    fn default() -> Self {
        Approve::All(Policy::Ask)
    }
}

impl Approve {
    /// The policy for the server's tool `tool`: its own entry, else `"*"`, else ask.
    pub fn policy(&self, tool: &str) -> Policy {
        match self {
            Approve::All(policy) => *policy,
            Approve::PerTool(table) => table
                .get(tool)
                .or_else(|| table.get("*"))
                .copied()
                .unwrap_or(Policy::Ask),
        }
    }
}

impl McpServerConfig {
    /// A stdio server called `name` running `command` (for sessions' own servers).
    pub fn stdio(name: &str, command: &str) -> Self {
        Self {
            name: name.to_owned(),
            command: Some(command.to_owned()),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            approve: Approve::default(),
            timeout_secs: default_mcp_timeout(),
            enabled: true,
        }
    }

    /// What is wrong with the entry, if anything (its name is added by the caller).
    pub fn problem(&self) -> Option<String> {
        let name = &self.name;
        let name_ok = !name.is_empty()
            && name.len() <= 32
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !name_ok {
            return Some(
                "`name` must be 1 to 32 letters, digits or `-` (no `_`: tools are named <name>__<tool>)"
                    .into(),
            );
        }
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => {
                return Some("give `command` (stdio) or `url` (HTTP), not both".into());
            }
            (None, None) => return Some("give `command` (stdio) or `url` (HTTP)".into()),
            (Some(command), None) => {
                if command.trim().is_empty() {
                    return Some("`command` must not be empty".into());
                }
                if !self.headers.is_empty() {
                    return Some("`headers` is for HTTP servers (`url`), not stdio ones".into());
                }
            }
            (None, Some(url)) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Some(format!(
                        "`url` must start with http:// or https://, got {url:?}"
                    ));
                }
                if !self.args.is_empty() || !self.env.is_empty() || self.cwd.is_some() {
                    return Some(
                        "`args`, `env` and `cwd` are for stdio servers (`command`), not HTTP ones"
                            .into(),
                    );
                }
            }
        }
        if self.timeout_secs == 0 {
            return Some("`timeout_secs` must be at least 1".into());
        }
        for (key, value) in self.env.iter().chain(&self.headers) {
            if let Err(e) = check_vars(value) {
                return Some(format!("{key:?}: {e}"));
            }
        }
        None
    }
}

/// Checks `${VAR}` references in `value`: each `${` closed by `}` around a non-empty name of
/// letters, digits and `_`.
pub fn check_vars(value: &str) -> Result<(), String> {
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err("`${` without a closing `}`".into());
        };
        let name = &after[..end];
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(format!("`${{{name}}}` is not a variable name"));
        }
        rest = &after[end + 1..];
    }
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DaemonConfig {
    /// Longest NDJSON line accepted, in bytes (the newline not counted).
    pub max_frame_bytes: usize,
    /// Connections served at once; one more is answered `-32001` and closed, unless a
    /// connection that has not initialized gives up its slot (the oldest such one).
    pub max_connections: usize,
    /// How long a connection may take to complete `initialize` before it is closed.
    pub handshake_timeout_secs: u64,
    /// Requests one connection may have being handled at once; one more is answered `-32001`.
    pub max_requests_in_flight: usize,
    /// Frames queued for one connection before its senders wait.
    pub outbound_queue: usize,
    /// How often the daemon checks that its socket file still exists (and re-creates a
    /// deleted one); 0: never. Unix only.
    pub socket_check_secs: u64,
}

impl Default for DaemonConfig {
    fn default() -> Self {
        Self {
            max_frame_bytes: zeroclaw_rpc::DEFAULT_MAX_FRAME_BYTES,
            max_connections: 16_384,
            handshake_timeout_secs: 10,
            max_requests_in_flight: 256,
            outbound_queue: 4096,
            socket_check_secs: 5,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not valid: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
}

impl Config {
    /// Loads the file if it exists; defaults if it does not.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let config: Config = toml::from_str(&text).map_err(|e| ConfigError::Invalid {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        config.validate().map_err(|message| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), String> {
        let d = &self.daemon;
        for (name, value) in [
            ("daemon.max_frame_bytes", d.max_frame_bytes),
            ("daemon.max_connections", d.max_connections),
            ("daemon.max_requests_in_flight", d.max_requests_in_flight),
            ("daemon.outbound_queue", d.outbound_queue),
            (
                "daemon.handshake_timeout_secs",
                usize::try_from(d.handshake_timeout_secs).unwrap_or(usize::MAX),
            ),
            ("agent.max_steps", self.agent.max_steps as usize),
            ("agent.max_running_turns", self.agent.max_running_turns),
            (
                "agent.max_tool_calls_per_step",
                self.agent.max_tool_calls_per_step,
            ),
            ("tools.output_limit_bytes", self.tools.output_limit_bytes),
        ] {
            if value == 0 {
                return Err(format!("{name} must be at least 1"));
            }
        }
        if d.max_frame_bytes < MIN_FRAME_BYTES {
            // Below this even the handshake and its answer may not fit.
            return Err(format!(
                "daemon.max_frame_bytes must be at least {MIN_FRAME_BYTES}"
            ));
        }
        let url = &self.provider.base_url;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!(
                "provider.base_url must start with http:// or https://, got {url:?}"
            ));
        }
        if self.provider.model.trim().is_empty() {
            return Err("provider.model must not be empty".into());
        }
        if !(10..=95).contains(&self.agent.compact_at_percent) {
            return Err(format!(
                "agent.compact_at_percent must be between 10 and 95, got {}",
                self.agent.compact_at_percent
            ));
        }
        if self.provider.context_window.is_some_and(|w| w < 1024) {
            return Err("provider.context_window must be at least 1024 tokens".into());
        }
        let mut names = std::collections::HashSet::new();
        for (i, server) in self.mcp_servers.iter().enumerate() {
            let label = format!("mcp_servers[{i}] ({:?})", server.name);
            if let Some(problem) = server.problem() {
                return Err(format!("{label}: {problem}"));
            }
            if !names.insert(server.name.as_str()) {
                return Err(format!("{label}: another server has that name"));
            }
        }
        // Every `[gateway]` value, whether or not the gateway is served this run.
        self.gateway.validate().map_err(|e| e.0)?;
        unattended::validate(&self.webhooks, &self.schedules)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_means_defaults() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            Config::load(&dir.path().join("config.toml")).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn keys_override_defaults_and_typos_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[daemon]\nmax_frame_bytes = 1024\n").unwrap();
        let config = Config::load(&path).unwrap();
        assert_eq!(config.daemon.max_frame_bytes, 1024);
        assert_eq!(
            config.daemon.max_connections,
            DaemonConfig::default().max_connections
        );

        std::fs::write(&path, "[daemon]\nmax_frame_byte = 1024\n").unwrap();
        let err = Config::load(&path).unwrap_err().to_string();
        assert!(err.contains("max_frame_byte"), "{err}");

        std::fs::write(&path, "[daemon]\nmax_connections = 0\n").unwrap();
        let err = Config::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("daemon.max_connections must be at least 1"),
            "{err}"
        );

        std::fs::write(&path, "[daemon\n").unwrap();
        assert!(Config::load(&path).is_err());
    }

    #[test]
    fn gateway_values_are_checked_at_load_even_with_the_gateway_off() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[gateway]\nenabled = false\nallowed_origins = [\"*\"]\n",
        )
        .unwrap();
        let err = Config::load(&path).unwrap_err().to_string();
        assert!(err.contains("gateway.allowed_origins[0]"), "{err}");
        std::fs::write(&path, "[gateway]\nallowed_hosts = [\"box.lan\"]\n").unwrap();
        assert_eq!(
            Config::load(&path).unwrap().gateway.allowed_hosts,
            ["box.lan"]
        );
    }

    #[test]
    fn the_documented_provider_keys_parse_and_default_to_local_ollama() {
        let defaults = Config::default().provider;
        assert_eq!(defaults.kind, ProviderKind::Openai);
        assert_eq!(defaults.base_url, "http://127.0.0.1:11434/v1");
        assert_eq!(defaults.model, "llama3.2");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[provider]\nkind = \"anthropic\"\nbase_url = \"https://api.anthropic.com/v1\"\nmodel = \"claude\"\napi_key_env = \"ANTHROPIC_API_KEY\"\n\n[approvals]\nbash = \"allow\"\n",
        )
        .unwrap();
        let config = Config::load(&path).unwrap();
        assert_eq!(config.provider.kind, ProviderKind::Anthropic);
        assert_eq!(
            config.provider.api_key_env.as_deref(),
            Some("ANTHROPIC_API_KEY")
        );
        assert_eq!(config.approvals.policy("bash"), Policy::Allow);
        assert_eq!(config.approvals.policy("write_file"), Policy::Ask);
        assert_eq!(config.approvals.policy("read_file"), Policy::Allow);
        assert_eq!(config.approvals.policy("grep"), Policy::Allow);
        std::fs::write(&path, "[provider]\nkind = \"gemini\"\n").unwrap();
        assert!(
            Config::load(&path)
                .unwrap_err()
                .to_string()
                .contains("gemini")
        );
    }

    #[test]
    fn mcp_servers_parse_and_a_malformed_entry_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[[mcp_servers]]\nname = \"gh\"\ncommand = \"gh-mcp\"\nargs = [\"stdio\"]\nenv = { T = \"${GH_TOKEN}\" }\n\n\
             [[mcp_servers]]\nname = \"docs\"\nurl = \"https://example.com/mcp\"\nheaders = { A = \"Bearer ${D}\" }\n\
             approve = { search = \"allow\", \"*\" = \"deny\" }\ntimeout_secs = 5\n",
        )
        .unwrap();
        let config = Config::load(&path).unwrap();
        let [gh, docs] = &config.mcp_servers[..] else {
            panic!("{:?}", config.mcp_servers)
        };
        assert_eq!(gh.approve.policy("anything"), Policy::Ask);
        assert_eq!(gh.timeout_secs, 120);
        assert!(gh.enabled);
        assert_eq!(docs.approve.policy("search"), Policy::Allow);
        assert_eq!(docs.approve.policy("other"), Policy::Deny);
        for (entry, want) in [
            (
                "name = \"a_b\"\ncommand = \"x\"",
                "mcp_servers[0] (\"a_b\"): `name`",
            ),
            (
                "name = \"a\"\ncommand = \"x\"\nurl = \"http://h\"",
                "not both",
            ),
            ("name = \"a\"", "give `command`"),
            ("name = \"a\"\nurl = \"ftp://h\"", "http://"),
            (
                "name = \"a\"\nurl = \"http://h\"\nargs = [\"x\"]",
                "stdio servers",
            ),
            (
                "name = \"a\"\ncommand = \"x\"\nenv = { K = \"${OPEN\" }",
                "without a closing",
            ),
            (
                "name = \"a\"\ncommand = \"x\"\ntimeout_secs = 0",
                "at least 1",
            ),
            ("name = \"a\"\ncommand = \"x\"\ncolour = 1", "colour"),
        ] {
            std::fs::write(&path, format!("[[mcp_servers]]\n{entry}\n")).unwrap();
            let err = Config::load(&path).unwrap_err().to_string();
            assert!(err.contains(want), "{entry}: {err}");
        }
        std::fs::write(
            &path,
            "[[mcp_servers]]\nname = \"a\"\ncommand = \"x\"\n[[mcp_servers]]\nname = \"a\"\ncommand = \"y\"\n",
        )
        .unwrap();
        let err = Config::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("mcp_servers[1] (\"a\"): another server"),
            "{err}"
        );
    }

    #[test]
    fn webhooks_and_schedules_parse_and_a_bad_entry_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().display().to_string();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            format!(
                "[[webhooks]]\nname = \"ci-failed\"\nsecret_env = \"S\"\ncwd = {cwd:?}\nprompt = \"CI {{{{json /ref}}}}\"\napprove = {{ read_file = \"allow\", bash = \"deny\" }}\n\n\
                 [[schedules]]\nname = \"morning\"\ncron = \"0 8 * * 1-5\"\ncwd = {cwd:?}\nprompt = \"Summarise {{{{now}}}}\"\nsession = \"shared\"\ncatch_up = true\n"
            ),
        )
        .unwrap();
        let config = Config::load(&path).unwrap();
        assert_eq!(config.webhooks[0].queue, DEFAULT_QUEUE);
        assert_eq!(config.webhooks[0].session, SessionMode::New);
        assert_eq!(config.webhooks[0].approve.get("bash"), Some(&Policy::Deny));
        assert_eq!(config.webhooks[0].signature, Signature::Github);
        assert_eq!(
            config.webhooks[0].replay_window_ms(),
            i64::try_from(DEFAULT_REPLAY_WINDOW_SECS).unwrap() * 1000
        );
        assert_eq!(config.schedules[0].session, SessionMode::Shared);
        assert!(config.schedules[0].catch_up);
        let hook = |extra: &str, cwd: &str| {
            format!(
                "[[webhooks]]\nname = \"h\"\nsecret_env = \"S\"\ncwd = {cwd:?}\nprompt = \"p\"\n{extra}\n"
            )
        };
        let schedule = |cron: &str, prompt: &str| {
            format!(
                "[[schedules]]\nname = \"s\"\ncron = {cron:?}\ncwd = {cwd:?}\nprompt = {prompt:?}\n"
            )
        };
        let missing = dir.path().join("nope").display().to_string();
        for (text, want) in [
            (hook("", &missing), "webhooks[0] (\"h\"): `cwd`"),
            (
                hook("queue = 0", &cwd),
                "webhooks[0] (\"h\"): `queue` must be at least 1",
            ),
            (
                hook("", &cwd).replace("prompt = \"p\"", "prompt = \"{{bogus}}\""),
                "webhooks[0] (\"h\"): unknown placeholder `{{bogus}}`",
            ),
            (schedule("0 8 * *", "p"), "schedules[0] (\"s\"): `cron`"),
            (schedule("0 25 * * *", "p"), "schedules[0] (\"s\"): `cron`"),
            (
                schedule("0 8 * * *", "{{body}}"),
                "schedules[0] (\"s\"): `{{body}}`",
            ),
            (
                format!("{}{}", hook("", &cwd), hook("", &cwd)),
                "webhooks[1] (\"h\"): another webhook",
            ),
            (
                hook("replay_window_secs = 0", &cwd),
                "webhooks[0] (\"h\"): `replay_window_secs` must be from 1 to",
            ),
            (
                hook("replay_window_secs = 99999999", &cwd),
                "`replay_window_secs` must be from 1 to 31622400 (366 days), got 99999999",
            ),
            (
                hook("signature = \"standard\"\nreplay_window_secs = 60", &cwd),
                "webhooks[0] (\"h\"): `replay_window_secs` means nothing with `signature = \"standard\"`",
            ),
            (hook("signature = \"svix\"", &cwd), "unknown variant `svix`"),
        ] {
            std::fs::write(&path, &text).unwrap();
            let err = Config::load(&path).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}

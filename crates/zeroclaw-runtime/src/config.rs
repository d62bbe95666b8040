//! `<config dir>/config.toml`. Every key has a default, so no file at all is a valid
//! configuration; an unknown key is an error (a typo should not be silently ignored).

use serde::Deserialize;
use std::path::{Path, PathBuf};

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
    /// `[gateway]`: HTTP/WebSocket (see docs/gateway.md).
    pub gateway: zeroclaw_gateway::GatewayConfig,
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
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_steps: 25,
            max_running_turns: 64,
            ask_user_timeout_secs: 300,
            system_prompt: None,
            max_tool_calls_per_step: 64,
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
            scrub_env: vec!["*_API_KEY".into()],
            confine_to_cwd: true,
        }
    }
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
        Ok(())
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
}

//! `<config dir>/config.toml`, the whole file: the agent's part (`[provider]`, `[[fallback]]`, `[agent]`,
//! `[approvals]`, `[tools]`, `[[mcp_servers]]`, `[sandbox]`, `[hooks]`: `zeroclaw_agent::config`) and the daemon's
//! (`[daemon]`, `[gateway]`, `[[webhooks]]`, `[[schedules]]`). Every key has a default, so
//! no file at all is a valid configuration; an unknown key is an error (a typo should not be
//! silently ignored).

use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod unattended;
pub use unattended::{
    DEFAULT_MAX_BODY_BYTES, DEFAULT_QUEUE, DEFAULT_REPLAY_WINDOW_SECS, Piece, ScheduleConfig,
    SessionMode, Signature, Template, WebhookConfig, parse_cron,
};

pub use zeroclaw_agent::sandbox::SandboxConfig;

pub use zeroclaw_agent::config::{
    AgentConfig, ApprovalsConfig, Approve, Config as AgentSettings, McpServerConfig, Policy,
    ProviderConfig, ProviderKind, ToolsConfig,
};

/// The smallest frame cap accepted: room for the handshake and ordinary requests, the
/// `initialize` answer (every method and event named, over 1 KiB since images) with room to
/// grow as methods are added (`tests/wire.rs` runs a daemon at this cap).
pub const MIN_FRAME_BYTES: usize = 4096;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// The agent's part, shared with it.
    pub agent: Arc<AgentSettings>,
    pub daemon: DaemonConfig,
    /// `[gateway]`: HTTP/WebSocket (see docs/gateway.md).
    pub gateway: zeroclaw_gateway::GatewayConfig,
    /// `[[webhooks]]`: unattended turns started by a signed HTTP request (docs/unattended.md).
    pub webhooks: Vec<WebhookConfig>,
    /// `[[schedules]]`: unattended turns started by a cron expression (docs/unattended.md).
    pub schedules: Vec<ScheduleConfig>,
}

/// The file as written: every section at the top level.
#[derive(Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct File {
    daemon: DaemonConfig,
    provider: ProviderConfig,
    fallback: Vec<ProviderConfig>,
    agent: AgentConfig,
    approvals: ApprovalsConfig,
    tools: ToolsConfig,
    mcp_servers: Vec<McpServerConfig>,
    sandbox: SandboxConfig,
    hooks: zeroclaw_agent::project::hooks::HooksConfig,
    agents: zeroclaw_agent::config::SubagentsConfig,
    limits: zeroclaw_agent::config::LimitsConfig,
    gateway: zeroclaw_gateway::GatewayConfig,
    webhooks: Vec<WebhookConfig>,
    schedules: Vec<ScheduleConfig>,
}

impl From<File> for Config {
    fn from(file: File) -> Self {
        Self {
            agent: Arc::new(AgentSettings {
                provider: file.provider,
                fallback: file.fallback,
                agent: file.agent,
                approvals: file.approvals,
                tools: file.tools,
                mcp_servers: file.mcp_servers,
                sandbox: file.sandbox,
                hooks: file.hooks,
                agents: file.agents,
                limits: file.limits,
            }),
            daemon: file.daemon,
            gateway: file.gateway,
            webhooks: file.webhooks,
            schedules: file.schedules,
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
        let file: File = toml::from_str(&text).map_err(|e| ConfigError::Invalid {
            path: path.to_path_buf(),
            message: crate::toml_errors::describe(&text, &e),
        })?;
        let config = Config::from(file);
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
        // `[approvals]` may name the built-in tools only.
        self.agent.validate(zeroclaw_agent::tools::BUILTIN_NAMES)?;
        // Every `[gateway]` value, whether or not the gateway is served this run.
        self.gateway.validate().map_err(|e| e.0)?;
        unattended::validate(
            &self.webhooks,
            &self.schedules,
            self.agent.provider.pricing.is_some(),
        )
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
    fn budgets_are_checked_at_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let cwd = dir.path().display();
        let load = |text: &str| {
            std::fs::write(&path, text).unwrap();
            Config::load(&path).map_err(|e| e.to_string())
        };
        let err = load("[limits]\nmax_cost_per_turn = 1.0\n").unwrap_err();
        assert!(
            err.contains("limits.max_cost_per_turn needs a price")
                && err.contains("[provider.pricing]"),
            "{err}"
        );
        let err = load("[limits]\nmax_tokens_per_turn = 0\n").unwrap_err();
        assert!(
            err.contains("limits.max_tokens_per_turn must be at least 1"),
            "{err}"
        );
        let priced = "[provider.pricing]\ninput = 1.0\noutput = 2.0\n";
        let config = load(&format!("{priced}[limits]\nmax_cost_per_turn = 0.5\n")).unwrap();
        assert_eq!(config.agent.limits.max_cost_per_turn, Some(0.5));
        let err = load(&format!("{priced}[limits]\nmax_cost_per_turn = -1.0\n")).unwrap_err();
        assert!(err.contains("must be a positive number"), "{err}");

        // A schedule always has a token budget; a webhook has the ones it sets. (`cwd` is a
        // literal string: a Windows path's backslashes are no escapes there.)
        let schedule = format!(
            "[[schedules]]\nname = \"s\"\ncron = \"0 0 * * *\"\ncwd = '{cwd}'\nprompt = \"p\"\n"
        );
        let config = load(&schedule).unwrap();
        assert_eq!(
            config.schedules[0].max_tokens,
            Some(unattended::DEFAULT_SCHEDULE_MAX_TOKENS)
        );
        assert_eq!(config.schedules[0].max_steps, None);
        let err = load(&format!("{schedule}max_cost = 2.0\n")).unwrap_err();
        assert!(
            err.contains("schedules[0] (\"s\"): `max_cost` needs a price"),
            "{err}"
        );
        let err = load(&format!("{schedule}max_steps = 0\n")).unwrap_err();
        assert!(err.contains("`max_steps` must be at least 1"), "{err}");
        let config = load(&format!(
            "{priced}{schedule}max_tokens = 5\nmax_cost = 2.0\n"
        ))
        .unwrap();
        assert_eq!(config.schedules[0].max_tokens, Some(5));
        assert_eq!(config.schedules[0].max_cost, Some(2.0));
    }

    #[test]
    fn keys_override_defaults_and_typos_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[daemon]\nmax_frame_bytes = 4096\n").unwrap();
        let config = Config::load(&path).unwrap();
        assert_eq!(config.daemon.max_frame_bytes, 4096);
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

        // `[approvals]` names built-in tools only; the refusal lists them.
        std::fs::write(&path, "[approvals]\nedit_file = \"allow\"\n").unwrap();
        assert!(Config::load(&path).is_ok());
        std::fs::write(&path, "[approvals]\nbsah = \"allow\"\n").unwrap();
        let err = Config::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("[approvals] bsah")
                && err.contains(&zeroclaw_agent::tools::BUILTIN_NAMES.join(", ")),
            "{err}"
        );
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

//! The agent's part of `<config dir>/config.toml`: `[provider]`, `[[fallback]]`, `[agent]`, `[approvals]`,
//! `[tools]`, `[[mcp_servers]]`, `[sandbox]`, `[hooks]`, `[agents]` and `[limits]`. The daemon reads the whole file (its `config.rs`) and
//! hands this part over. Every key has a default; an unknown key is an error (a typo should
//! not be silently ignored).

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub provider: ProviderConfig,
    /// `[[fallback]]`: providers tried in order when the primary fails before any output
    /// (`provider/chain.rs`, docs/protocol.md §14). Each takes `[provider]`'s keys, its own
    /// `model` included: the session's model applies to the primary only.
    pub fallback: Vec<ProviderConfig>,
    pub agent: AgentConfig,
    pub approvals: ApprovalsConfig,
    pub tools: ToolsConfig,
    /// `[[mcp_servers]]`: MCP servers whose tools the agent gets (`mcp/`).
    pub mcp_servers: Vec<McpServerConfig>,
    /// `[sandbox]`: what tools' commands can touch (`sandbox.rs`, docs/sandbox.md).
    pub sandbox: crate::sandbox::SandboxConfig,
    /// `[[hooks.EVENT]]`: the user's hooks, which always run (`project/hooks.rs`,
    /// docs/project.md).
    pub hooks: crate::project::hooks::HooksConfig,
    /// `[agents]`: subagents, the `task` tool (`turn/subagent.rs`, docs/project.md).
    pub agents: SubagentsConfig,
    /// `[limits]`: every turn's budgets (`turn/budget.rs`, docs/protocol.md §11).
    pub limits: LimitsConfig,
}

/// `[limits]`: budgets every turn has. A turn that reaches one stops before its next model
/// call with `stopReason: "budget"`. Unset: no such budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsConfig {
    /// Input plus output tokens over the turn's model calls.
    pub max_tokens_per_turn: Option<u64>,
    /// The turn's cost, in `[provider.pricing]`'s currency (which it needs).
    pub max_cost_per_turn: Option<f64>,
}

impl LimitsConfig {
    fn validate(&self, priced: bool) -> Result<(), String> {
        if self.max_tokens_per_turn == Some(0) {
            return Err("limits.max_tokens_per_turn must be at least 1".into());
        }
        check_cost("limits.max_cost_per_turn", self.max_cost_per_turn, priced)
    }
}

/// Checks a cost budget named `name`: a positive number, and a price to count it with.
pub fn check_cost(name: &str, max: Option<f64>, priced: bool) -> Result<(), String> {
    let Some(max) = max else { return Ok(()) };
    if !(max.is_finite() && max > 0.0) {
        return Err(format!("{name} must be a positive number, got {max}"));
    }
    if !priced {
        return Err(format!(
            "{name} needs a price to count cost with: set [provider.pricing] (input and output per million tokens)"
        ));
    }
    Ok(())
}

/// `[agents]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SubagentsConfig {
    /// Subagents running at once across the daemon; a `task` call beyond it waits for one
    /// to end (first come, first served; the wait ends with its turn's cancellation). 0:
    /// no `task` tool at all.
    pub max_concurrent: usize,
}

impl Default for SubagentsConfig {
    fn default() -> Self {
        Self { max_concurrent: 4 }
    }
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
    /// `[provider.pricing]`: what the model's tokens cost, for `usage_update`'s `cost`.
    pub pricing: Option<Pricing>,
    /// Whether the model takes images in prompts; unset: yes, unless its name is one known
    /// to be text-only (`provider/images.rs`).
    pub images: Option<bool>,
}

/// `[provider.pricing]`: prices per million tokens, in `currency` (costs are reported in
/// it, as plain numbers beside its code).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pricing {
    /// Per million input tokens not read from the prompt cache.
    pub input: f64,
    /// Per million output tokens.
    pub output: f64,
    /// Per million input tokens read from the prompt cache; `input` if unset.
    #[serde(default)]
    pub cached_input: Option<f64>,
    /// The prices' currency; `USD` if unset.
    #[serde(default)]
    pub currency: Currency,
}

/// An ISO 4217 currency code: three upper-case ASCII letters (`USD`, `EUR`). Held as bytes
/// so that [`Pricing`] stays `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct Currency([u8; 3]);

impl Default for Currency {
    fn default() -> Self {
        Self::USD
    }
}

impl TryFrom<String> for Currency {
    type Error = String;

    fn try_from(code: String) -> Result<Self, String> {
        match <[u8; 3]>::try_from(code.as_bytes()) {
            Ok(bytes) if bytes.iter().all(u8::is_ascii_uppercase) => Ok(Self(bytes)),
            _ => Err(format!(
                "a currency is an ISO 4217 code, three upper-case letters such as \"USD\" or \"EUR\"; got {code:?}"
            )),
        }
    }
}

impl Currency {
    pub const USD: Currency = Currency(*b"USD");

    pub fn as_str(&self) -> &str {
        // Three ASCII letters, checked when it was made.
        std::str::from_utf8(&self.0).unwrap_or("USD")
    }

    /// An amount in this currency for people to read, at four decimals so that a single
    /// call's fraction of a cent shows: `$0.4200` in US dollars (as budgets always said
    /// it), `0.4200 EUR` in any other currency.
    pub fn amount(&self, value: f64) -> String {
        match self.as_str() {
            "USD" => format!("${value:.4}"),
            code => format!("{value:.4} {code}"),
        }
    }
}

impl std::fmt::Display for Currency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Pricing {
    /// What a call of these tokens costs (`cached` of the `input` ones read from the cache).
    pub fn cost(&self, input: u64, cached: u64, output: u64) -> f64 {
        let cached = cached.min(input);
        let per_token = |price: f64| price / 1_000_000.0;
        (input - cached) as f64 * per_token(self.input)
            + cached as f64 * per_token(self.cached_input.unwrap_or(self.input))
            + output as f64 * per_token(self.output)
    }

    /// The first price that is no finite number at least 0, named as in the file.
    fn problem(&self, table: &str) -> Option<String> {
        [
            ("input", Some(self.input)),
            ("output", Some(self.output)),
            ("cached_input", self.cached_input),
        ]
        .into_iter()
        .find_map(|(key, price)| {
            let price = price?;
            (!price.is_finite() || price < 0.0).then(|| {
                format!("{table}.{key} must be a price per million tokens, 0 or more; got {price}")
            })
        })
    }
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
            pricing: None,
            images: None,
        }
    }
}

impl ProviderConfig {
    /// What is wrong with the values, each key named under `table` (`provider`,
    /// `fallback[0]`, ...); `Ok` if nothing is.
    pub fn validate(&self, table: &str) -> Result<(), String> {
        let url = &self.base_url;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            // Only the scheme is echoed: the rest may hold credentials (`user:pass@`).
            let got = match url.split_once("://") {
                Some((scheme, _)) => format!("a {scheme:?} URL"),
                None => "no scheme".to_owned(),
            };
            return Err(format!(
                "{table}.base_url must start with http:// or https://, got {got}"
            ));
        }
        if self.model.trim().is_empty() {
            return Err(format!("{table}.model must not be empty"));
        }
        if self.context_window.is_some_and(|w| w < 1024) {
            return Err(format!(
                "{table}.context_window must be at least 1024 tokens"
            ));
        }
        if self
            .api_key_env
            .as_deref()
            .is_some_and(|v| v.trim().is_empty())
        {
            return Err(format!(
                "{table}.api_key_env must name an environment variable (or be left out)"
            ));
        }
        if let Some(problem) = self
            .pricing
            .and_then(|p| p.problem(&format!("{table}.pricing")))
        {
            return Err(problem);
        }
        Ok(())
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
    /// Snapshot the session's cwd before and after every turn, so it can be rewound
    /// (docs/checkpoints.md). Needs `git`.
    pub checkpoints: bool,
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
            checkpoints: true,
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

/// `[approvals]`: `<tool> = "ask" | "allow" | "deny"`, plus the answer timeout. A built-in
/// tool the table does not name has its own default (`Tool::APPROVAL`); a name that is no
/// built-in tool is refused by [`Config::validate`] (MCP servers' tools have `approve`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct ApprovalsConfig {
    pub timeout_secs: u64,
    /// Lets a session take the permission mode `auto` (every call without asking) where the
    /// sandbox does not confine its tools (mode `full`, or unavailable on this machine).
    pub allow_auto_without_sandbox: bool,
    /// The tools the file names, by name.
    #[serde(flatten)]
    pub tools: BTreeMap<String, Policy>,
}

impl Default for ApprovalsConfig {
    fn default() -> Self {
        Self {
            timeout_secs: 120,
            allow_auto_without_sandbox: false,
            tools: BTreeMap::new(),
        }
    }
}

impl ApprovalsConfig {
    /// The policy for `tool`: the table's, else `default` (the tool's own).
    pub fn policy(&self, tool: &str, default: Policy) -> Policy {
        self.tools.get(tool).copied().unwrap_or(default)
    }

    /// A name in the table that is not one of `known` (the built-in tools), if any.
    fn problem(&self, known: &[&str]) -> Option<String> {
        let unknown = self
            .tools
            .keys()
            .find(|name| !known.contains(&name.as_str()))?;
        Some(format!(
            "[approvals] {unknown}: there is no built-in tool of that name (the tools: {}; \
             an MCP server's tools take their policy from its `approve`)",
            known.join(", ")
        ))
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

impl Config {
    /// Prices are all or nothing, in one currency: each model call is priced by the
    /// provider that answered it (`[provider]` or a `[[fallback]]`), and a turn's cost sums
    /// its calls, so a cost is known — and a cost budget enforced — only if every provider
    /// of the route has a price in the same currency.
    fn pricing_problem(&self) -> Option<String> {
        let primary = self.provider.pricing;
        self.fallback
            .iter()
            .enumerate()
            .find_map(|(i, fallback)| match (primary, fallback.pricing) {
                (Some(_), None) => Some(format!(
                    "fallback[{i}] has no `pricing`: with [provider.pricing] set, every [[fallback]] needs its own \
                     ([fallback.pricing] under it, or pricing = {{ input = 0, output = 0 }} for a free model), \
                     so that the cost of each call is known whichever provider answers it"
                )),
                (None, Some(_)) => Some(format!(
                    "fallback[{i}].pricing is set but [provider.pricing] is not: price the primary provider too \
                     (a turn's cost sums its calls, whichever provider answered them)"
                )),
                (Some(primary), Some(own)) if own.currency != primary.currency => Some(format!(
                    "fallback[{i}].pricing.currency is {} but provider.pricing.currency is {}: a turn's cost \
                     sums its calls, so every price must be in one currency",
                    own.currency, primary.currency
                )),
                _ => None,
            })
    }

    /// What is wrong with the values, named as in the file; `Ok` if nothing is.
    /// `tools`: the built-in tools' names, the only ones `[approvals]` may name.
    pub fn validate(&self, tools: &[&str]) -> Result<(), String> {
        if let Some(problem) = self.approvals.problem(tools) {
            return Err(problem);
        }
        if let Some(problem) = self.hooks.problem() {
            return Err(problem);
        }
        for (name, value) in [
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
        self.provider.validate("provider")?;
        for (i, fallback) in self.fallback.iter().enumerate() {
            fallback.validate(&format!("fallback[{i}]"))?;
        }
        if !(10..=95).contains(&self.agent.compact_at_percent) {
            return Err(format!(
                "agent.compact_at_percent must be between 10 and 95, got {}",
                self.agent.compact_at_percent
            ));
        }
        self.sandbox.validate()?;
        if let Some(problem) = self.pricing_problem() {
            return Err(problem);
        }
        self.limits.validate(self.provider.pricing.is_some())?;
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
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built-in tools' names (`tools::BUILTIN_NAMES`, which this lower layer cannot
    /// name).
    const TOOLS: &[&str] = &[
        "bash",
        "read_file",
        "write_file",
        "edit_file",
        "list_dir",
        "grep",
        "ask_user",
        "skill",
    ];

    /// `text` as the agent's part of a config file, read and checked.
    fn load(text: &str) -> Result<Config, String> {
        let config: Config = toml::from_str(text).map_err(|e| e.to_string())?;
        config.validate(TOOLS)?;
        Ok(config)
    }

    #[test]
    fn the_documented_provider_keys_parse_and_default_to_local_ollama() {
        let defaults = Config::default().provider;
        assert_eq!(defaults.kind, ProviderKind::Openai);
        assert_eq!(defaults.base_url, "http://127.0.0.1:11434/v1");
        assert_eq!(defaults.model, "llama3.2");
        let config = load(
            "[provider]\nkind = \"anthropic\"\nbase_url = \"https://api.anthropic.com/v1\"\nmodel = \"claude\"\napi_key_env = \"ANTHROPIC_API_KEY\"\n\n[approvals]\nbash = \"allow\"\n",
        )
        .unwrap();
        assert_eq!(config.provider.kind, ProviderKind::Anthropic);
        assert_eq!(
            config.provider.api_key_env.as_deref(),
            Some("ANTHROPIC_API_KEY")
        );
        // Named: the file's; not named: the tool's own default.
        assert_eq!(config.approvals.policy("bash", Policy::Ask), Policy::Allow);
        assert_eq!(
            config.approvals.policy("write_file", Policy::Ask),
            Policy::Ask
        );
        assert_eq!(
            config.approvals.policy("read_file", Policy::Allow),
            Policy::Allow
        );
        assert_eq!(config.approvals.timeout_secs, 120);
        let err = load("[approvals]\nbsah = \"allow\"\n").unwrap_err();
        assert!(
            err.contains("[approvals] bsah") && err.contains("bash, read_file, write_file"),
            "{err}"
        );
        assert!(
            load("[approvals]\nbash = \"maybe\"\n")
                .unwrap_err()
                .contains("maybe")
        );
        assert!(
            load("[provider]\nkind = \"gemini\"\n")
                .unwrap_err()
                .contains("gemini")
        );
    }

    #[test]
    fn pricing_parses_per_million_tokens_and_a_bad_price_is_named() {
        let config =
            load("[provider.pricing]\ninput = 3.0\noutput = 15\ncached_input = 0.3\n").unwrap();
        let pricing = config.provider.pricing.unwrap();
        // 1M uncached input, 1M cached, 1M output.
        let cost = pricing.cost(2_000_000, 1_000_000, 1_000_000);
        assert!((cost - 18.3).abs() < 1e-9, "{cost}");
        let plain = load("[provider.pricing]\ninput = 1\noutput = 2\n").unwrap();
        let cost = plain.provider.pricing.unwrap().cost(500_000, 500_000, 0);
        assert!(
            (cost - 0.5).abs() < 1e-9,
            "cached at the input price: {cost}"
        );
        for (text, want) in [
            ("input = -1\noutput = 1", "provider.pricing.input must be"),
            ("input = 1\noutput = nan", "provider.pricing.output must be"),
            (
                "input = 1\noutput = 1\ncached_input = inf",
                "provider.pricing.cached_input",
            ),
            ("input = 1", "output"),
            ("input = 1\noutput = 1\ncurrency = \"eur\"", "ISO 4217"),
            ("input = 1\noutput = 1\ncurrency = \"EURO\"", "\"EURO\""),
            ("input = 1\noutput = 1\ncolour = 1", "colour"),
        ] {
            let err = load(&format!("[provider.pricing]\n{text}\n")).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn a_currency_defaults_to_us_dollars_and_names_its_amounts() {
        let usd = load("[provider.pricing]\ninput = 1\noutput = 2\n").unwrap();
        let usd = usd.provider.pricing.unwrap().currency;
        assert_eq!(usd.as_str(), "USD");
        assert_eq!(usd.amount(0.42), "$0.4200");
        let eur = load("[provider.pricing]\ninput = 1\noutput = 2\ncurrency = \"EUR\"\n").unwrap();
        let eur = eur.provider.pricing.unwrap().currency;
        assert_eq!(eur.to_string(), "EUR");
        assert_eq!(eur.amount(0.42), "0.4200 EUR");
    }

    #[test]
    fn every_provider_of_the_route_is_priced_in_one_currency_or_none_is() {
        let priced = "[provider.pricing]\ninput = 1\noutput = 2\n";
        let fallback = "[[fallback]]\nmodel = \"b\"\n";
        let own = "[fallback.pricing]\ninput = 0\noutput = 0\n";
        let config = load(&format!("{priced}{fallback}{own}")).unwrap();
        assert_eq!(config.fallback[0].pricing.unwrap().input, 0.0);
        assert!(load(fallback).is_ok(), "no prices at all");
        for (text, want) in [
            (
                format!("{priced}{fallback}"),
                "fallback[0] has no `pricing`",
            ),
            (
                format!("{fallback}{own}"),
                "fallback[0].pricing is set but [provider.pricing] is not",
            ),
            (
                format!("{priced}{fallback}{own}currency = \"EUR\"\n"),
                "fallback[0].pricing.currency is EUR but provider.pricing.currency is USD",
            ),
        ] {
            let err = load(&text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn fallback_tables_take_the_provider_keys_and_a_bad_one_is_named() {
        let config = load(
            "[[fallback]]\nkind = \"anthropic\"\nbase_url = \"https://api.anthropic.com/v1\"\nmodel = \"claude\"\napi_key_env = \"ANTHROPIC_API_KEY\"\nmax_tokens = 1024\n\n\
             [[fallback]]\nmodel = \"local\"\n",
        )
        .unwrap();
        assert_eq!(config.fallback.len(), 2);
        assert_eq!(config.fallback[0].kind, ProviderKind::Anthropic);
        // Keys left out take `[provider]`'s defaults, not the primary's values.
        assert_eq!(config.fallback[1].base_url, "http://127.0.0.1:11434/v1");
        for (table, want) in [
            (
                "base_url = \"ftp://x\"",
                "fallback[0].base_url must start with http://",
            ),
            ("model = \" \"", "fallback[0].model must not be empty"),
            (
                "context_window = 10",
                "fallback[0].context_window must be at least 1024",
            ),
            ("colour = 1", "colour"),
        ] {
            let err = load(&format!("[[fallback]]\n{table}\n")).unwrap_err();
            assert!(err.contains(want), "{table}: {err}");
        }
        let err = load("[[fallback]]\nbase_url = \"ftp://user:secret@x\"\n").unwrap_err();
        assert!(!err.contains("secret"), "{err}");
    }

    #[test]
    fn mcp_servers_parse_and_a_malformed_entry_is_named() {
        let config = load(
            "[[mcp_servers]]\nname = \"gh\"\ncommand = \"gh-mcp\"\nargs = [\"stdio\"]\nenv = { T = \"${GH_TOKEN}\" }\n\n\
             [[mcp_servers]]\nname = \"docs\"\nurl = \"https://example.com/mcp\"\nheaders = { A = \"Bearer ${D}\" }\n\
             approve = { search = \"allow\", \"*\" = \"deny\" }\ntimeout_secs = 5\n",
        )
        .unwrap();
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
            let err = load(&format!("[[mcp_servers]]\n{entry}\n")).unwrap_err();
            assert!(err.contains(want), "{entry}: {err}");
        }
        let err = load(
            "[[mcp_servers]]\nname = \"a\"\ncommand = \"x\"\n[[mcp_servers]]\nname = \"a\"\ncommand = \"y\"\n",
        )
        .unwrap_err();
        assert!(
            err.contains("mcp_servers[1] (\"a\"): another server"),
            "{err}"
        );
    }
}

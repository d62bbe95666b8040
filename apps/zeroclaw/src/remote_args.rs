//! `--url`, `--token-env` and `--ca-cert`: the gateway a client command talks to instead of
//! the local socket. They are options of the commands that talk to a daemon (`status`,
//! `prompt`, `sessions`, `call`, …), so `zeroclaw daemon --help` does not list options the
//! daemon would ignore; written before the command (`zeroclaw --url URL status`, as the docs
//! have it) they are taken too, and refused with a command that does not use them.

use clap::Args;
use std::path::PathBuf;

/// The variable `--token-env` names when not given.
const DEFAULT_TOKEN_ENV: &str = "ZEROCLAW_TOKEN";

#[derive(Debug, Default, Clone, Args)]
pub struct RemoteArgs {
    /// Talk to a daemon's gateway (`wss://host:port`) instead of the local socket.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,

    /// The environment variable holding the gateway token for `--url` (default
    /// ZEROCLAW_TOKEN).
    #[arg(long, value_name = "VAR")]
    pub token_env: Option<String>,

    /// A PEM file of extra trusted certificates for `--url` (a self-signed gateway).
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
}

impl RemoteArgs {
    fn is_empty(&self) -> bool {
        self.url.is_none() && self.token_env.is_none() && self.ca_cert.is_none()
    }
}

/// The gateway to use, if any: the options given before the command, overridden by those
/// given after it. `command` is the command's name and its own options, `None` for a
/// command that talks to no daemon over a gateway (refused if any option was given).
pub fn choose(
    before: &RemoteArgs,
    command: (&str, Option<&RemoteArgs>),
) -> Result<Option<zeroclaw_client::Remote>, String> {
    let (name, own) = command;
    let Some(own) = own else {
        if before.is_empty() {
            return Ok(None);
        }
        return Err(format!(
            "`zeroclaw {name}` does not use --url, --token-env or --ca-cert (they are for the commands that talk to a daemon's gateway: status, prompt, sessions, call, mcp, runs, schedules, stop)"
        ));
    };
    let Some(url) = own.url.clone().or_else(|| before.url.clone()) else {
        if own.token_env.is_some() || own.ca_cert.is_some() || !before.is_empty() {
            return Err("--token-env and --ca-cert go with --url".into());
        }
        return Ok(None);
    };
    let token_env = own
        .token_env
        .as_deref()
        .or(before.token_env.as_deref())
        .unwrap_or(DEFAULT_TOKEN_ENV);
    let token = match std::env::var(token_env) {
        Ok(token) if !token.trim().is_empty() => token.trim().to_owned(),
        _ => {
            return Err(format!(
                "--url needs a token in ${token_env} (zeroclaw token create NAME, on the daemon's machine)"
            ));
        }
    };
    let ca_pem = match own.ca_cert.as_ref().or(before.ca_cert.as_ref()) {
        Some(path) => Some(
            std::fs::read(path)
                .map_err(|e| format!("cannot read --ca-cert {}: {e}", path.display()))?,
        ),
        None => None,
    };
    Ok(Some(zeroclaw_client::Remote { url, token, ca_pem }))
}

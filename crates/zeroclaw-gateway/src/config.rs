//! `[gateway]` in `config.toml`, and the start-up rules for a remote bind.

use serde::Deserialize;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

/// The default address: loopback only, a fixed port so `zeroclaw dashboard` links stay valid.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:42617";

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GatewayConfig {
    /// Serve the gateway at all (`zeroclaw daemon --ephemeral` never does unless `--gateway`).
    pub enabled: bool,
    /// `host:port`; port 0 picks a free one (`status` and the log say which).
    pub listen: String,
    /// A non-loopback `listen` is refused unless this is `true`.
    pub allow_remote: bool,
    /// A non-loopback `listen` without TLS is refused unless this is `true`.
    pub allow_plaintext: bool,
    /// PEM certificate chain and private key: with both, HTTPS and WSS.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// Browser origins allowed besides the gateway's own (CORS, WebSocket `Origin`, CSRF).
    /// No wildcard: each is `scheme://host[:port]`.
    pub allowed_origins: Vec<String>,
    /// `Host` names answered besides the loopback ones with the gateway's port (any other
    /// gets 421: DNS rebinding). On a non-loopback bind, the check is on only when set.
    pub allowed_hosts: Vec<String>,
    /// Larger request bodies are answered 413.
    pub max_body_bytes: usize,
    /// Open HTTP connections (WebSockets and streams included); past it the one idle
    /// longest is shed, or, when none is idle, the newcomer gets 503 and is closed.
    pub max_connections: usize,
    /// A request's headers must arrive within this (a slow sender is cut).
    pub header_timeout_secs: u64,
    /// A request's body must arrive within this.
    pub body_timeout_secs: u64,
    /// An open SSE stream sends a comment line this often, so proxies and clients can tell
    /// a quiet stream from a dead one (at least 1).
    pub sse_heartbeat_secs: u64,
    /// A dashboard session ends after this long without use (no request, and no WebSocket
    /// or stream of it open).
    pub dashboard_idle_timeout_secs: u64,
    /// A dashboard session ends this long after its login, however much it is used.
    pub dashboard_max_age_secs: u64,
    /// Serve `/metrics` without a token. Only on a loopback gateway: on any other
    /// address it is ignored (with a warning at start-up) and a token is asked for.
    pub metrics_public: bool,
}

/// The longest `dashboard_max_age_secs`: 400 days, the longest a browser keeps a cookie.
pub const MAX_DASHBOARD_AGE_SECS: u64 = 400 * 24 * 3600;

impl Default for GatewayConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            listen: DEFAULT_LISTEN.into(),
            allow_remote: false,
            allow_plaintext: false,
            tls_cert: None,
            tls_key: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_body_bytes: 1024 * 1024,
            max_connections: 1024,
            header_timeout_secs: 10,
            body_timeout_secs: 30,
            sse_heartbeat_secs: 15,
            dashboard_idle_timeout_secs: 12 * 3600,
            dashboard_max_age_secs: 7 * 24 * 3600,
            metrics_public: false,
        }
    }
}

/// Why the gateway's configuration cannot be served; the daemon refuses to start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// The most `max_connections` may be: beyond it the cap is no cap.
pub const MAX_CONNECTIONS: usize = 1_000_000;
/// The most `max_body_bytes` may be (1 GiB): a body is read whole into memory.
pub const MAX_BODY_BYTES: usize = 1 << 30;
/// The longest any of the `*_secs` keys may be (a day): a timeout or heartbeat longer than
/// that protects nothing, and far larger ones overflow the clock's arithmetic.
pub const MAX_SECS: u64 = 86_400;

/// What the configuration says to bind, once its rules are checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub addr: SocketAddr,
    pub tls: Option<(PathBuf, PathBuf)>,
}

impl GatewayConfig {
    /// Checks every value on its own (origins, host names, limits), as the configuration
    /// is loaded, whether or not the gateway will be served: a value that cannot work is a
    /// configuration error naming its key, never a panic later.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (i, origin) in self.allowed_origins.iter().enumerate() {
            crate::names::origin(origin).map_err(|why| {
                ConfigError(format!("gateway.allowed_origins[{i}] = {origin:?} {why}"))
            })?;
        }
        for (i, host) in self.allowed_hosts.iter().enumerate() {
            crate::names::allowed_host(host).map_err(|why| {
                ConfigError(format!("gateway.allowed_hosts[{i}] = {host:?} {why}"))
            })?;
        }
        let bounded = [
            (
                "max_connections",
                self.max_connections as u128,
                MAX_CONNECTIONS as u128,
            ),
            (
                "max_body_bytes",
                self.max_body_bytes as u128,
                MAX_BODY_BYTES as u128,
            ),
            (
                "header_timeout_secs",
                self.header_timeout_secs.into(),
                MAX_SECS.into(),
            ),
            (
                "body_timeout_secs",
                self.body_timeout_secs.into(),
                MAX_SECS.into(),
            ),
            (
                "sse_heartbeat_secs",
                self.sse_heartbeat_secs.into(),
                MAX_SECS.into(),
            ),
        ];
        for (key, value, max) in bounded {
            if !(1..=max).contains(&value) {
                return Err(ConfigError(format!(
                    "gateway.{key} must be between 1 and {max}, got {value}"
                )));
            }
        }
        self.check_dashboard_limits()
    }

    /// Checks the values ([`Self::validate`]), then the rules of binding, in order: a
    /// readable address; `allow_remote` for a non-loopback one; then TLS or
    /// `allow_plaintext` for it; both TLS files or neither.
    pub fn plan(&self) -> Result<Plan, ConfigError> {
        self.validate()?;
        let addr = parse_listen(&self.listen)?;
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some((cert.clone(), key.clone())),
            (None, None) => None,
            _ => {
                return Err(ConfigError(
                    "gateway.tls_cert and gateway.tls_key go together: set both (PEM files) or neither".into(),
                ));
            }
        };
        if !addr.ip().is_loopback() {
            if !self.allow_remote {
                return Err(ConfigError(format!(
                    "gateway.listen = {:?} is not a loopback address: other machines could reach it. Set gateway.allow_remote = true to allow that (with TLS), or listen on 127.0.0.1",
                    self.listen
                )));
            }
            if tls.is_none() && !self.allow_plaintext {
                return Err(ConfigError(format!(
                    "gateway.listen = {:?} serves other machines without TLS: tokens would cross the network in the clear. Set gateway.tls_cert and gateway.tls_key, or gateway.allow_plaintext = true",
                    self.listen
                )));
            }
        }
        Ok(Plan { addr, tls })
    }

    /// `allowed_origins`, each in the one spelling browsers send (valid once validated).
    pub fn origins(&self) -> Vec<String> {
        self.allowed_origins
            .iter()
            .filter_map(|o| crate::names::origin(o).ok())
            .collect()
    }

    /// `allowed_hosts`, each in the one spelling the `Host` check compares.
    pub fn hosts(&self) -> Vec<String> {
        self.allowed_hosts
            .iter()
            .filter_map(|h| crate::names::allowed_host(h).ok())
            .collect()
    }

    /// Both at least 1 s, the idle limit no longer than the absolute one, which is at most
    /// [`MAX_DASHBOARD_AGE_SECS`].
    fn check_dashboard_limits(&self) -> Result<(), ConfigError> {
        let (idle, max) = (
            self.dashboard_idle_timeout_secs,
            self.dashboard_max_age_secs,
        );
        if idle == 0 || max == 0 {
            return Err(ConfigError(
                "gateway.dashboard_idle_timeout_secs and gateway.dashboard_max_age_secs must be at least 1 (defaults: 43200, 12 hours, and 604800, 7 days)".into(),
            ));
        }
        if max > MAX_DASHBOARD_AGE_SECS {
            return Err(ConfigError(format!(
                "gateway.dashboard_max_age_secs = {max} is more than 400 days ({MAX_DASHBOARD_AGE_SECS}), longer than a browser keeps a cookie: choose a shorter one"
            )));
        }
        if idle > max {
            return Err(ConfigError(format!(
                "gateway.dashboard_idle_timeout_secs = {idle} is longer than gateway.dashboard_max_age_secs = {max}: a session ends at its max age anyway; lower the idle timeout or raise the max age"
            )));
        }
        Ok(())
    }
}

/// `ip:port`, `[v6]:port` or `localhost:port`.
fn parse_listen(listen: &str) -> Result<SocketAddr, ConfigError> {
    if let Ok(addr) = listen.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Some(port) = listen.strip_prefix("localhost:")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    Err(ConfigError(format!(
        "gateway.listen = {listen:?} is not an address: write host:port, e.g. \"127.0.0.1:42617\""
    )))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn with(listen: &str) -> GatewayConfig {
        GatewayConfig {
            listen: listen.into(),
            ..GatewayConfig::default()
        }
    }

    #[test]
    fn a_remote_bind_needs_allow_remote_first_then_tls_or_plaintext() {
        assert!(with("127.0.0.1:0").plan().is_ok());
        assert!(with("[::1]:0").plan().is_ok());
        let e = with("0.0.0.0:1").plan().unwrap_err();
        assert!(e.0.contains("gateway.allow_remote"), "{e}");
        let mut remote = with("0.0.0.0:1");
        remote.allow_remote = true;
        let e = remote.plan().unwrap_err();
        assert!(e.0.contains("gateway.tls_cert"), "{e}");
        remote.allow_plaintext = true;
        assert!(remote.plan().is_ok());
        remote.allow_plaintext = false;
        remote.tls_cert = Some("c.pem".into());
        assert!(remote.plan().unwrap_err().0.contains("go together"));
        remote.tls_key = Some("k.pem".into());
        assert!(remote.plan().unwrap().tls.is_some());
    }

    #[test]
    fn dashboard_session_limits_are_checked_and_named() {
        let mut config = with("127.0.0.1:0");
        assert!(config.plan().is_ok());
        config.dashboard_idle_timeout_secs = 0;
        assert!(
            config
                .plan()
                .unwrap_err()
                .0
                .contains("gateway.dashboard_idle_timeout_secs")
        );
        config.dashboard_idle_timeout_secs = 7 * 24 * 3600 + 1;
        assert!(config.plan().unwrap_err().0.contains("longer than"));
        config.dashboard_idle_timeout_secs = 60;
        config.dashboard_max_age_secs = MAX_DASHBOARD_AGE_SECS + 1;
        assert!(config.plan().unwrap_err().0.contains("400 days"));
        config.dashboard_max_age_secs = 60;
        assert!(config.plan().is_ok());
    }

    #[test]
    fn an_unreadable_address_names_the_key() {
        assert!(
            with("nowhere")
                .plan()
                .unwrap_err()
                .0
                .contains("gateway.listen")
        );
        assert_eq!(
            with("localhost:7").plan().unwrap().addr,
            "127.0.0.1:7".parse().unwrap()
        );
    }

    #[test]
    fn every_value_out_of_its_range_is_refused_naming_its_key() {
        let refused = |change: fn(&mut GatewayConfig)| {
            let mut config = with("127.0.0.1:0");
            change(&mut config);
            config.validate().unwrap_err().0
        };
        assert!(refused(|c| c.max_connections = 0).contains("gateway.max_connections"));
        assert!(refused(|c| c.max_connections = usize::MAX).contains("gateway.max_connections"));
        assert!(refused(|c| c.max_body_bytes = 0).contains("gateway.max_body_bytes"));
        assert!(
            refused(|c| c.header_timeout_secs = u64::MAX).contains("gateway.header_timeout_secs")
        );
        assert!(refused(|c| c.body_timeout_secs = 0).contains("gateway.body_timeout_secs"));
        assert!(refused(|c| c.sse_heartbeat_secs = 0).contains("gateway.sse_heartbeat_secs"));
        let e = refused(|c| c.allowed_origins = vec!["https://a.example".into(), "*".into()]);
        assert!(
            e.starts_with("gateway.allowed_origins[1] = \"*\" is a wildcard"),
            "{e}"
        );
        let e = refused(|c| c.allowed_hosts = vec!["*".into()]);
        assert!(e.starts_with("gateway.allowed_hosts[0]"), "{e}");
        // plan() checks the values too, so a config built in code cannot skip them.
        let mut config = with("127.0.0.1:0");
        config.allowed_origins = vec!["*".into()];
        assert!(config.plan().is_err());
        config.allowed_origins = vec!["HTTPS://App.Example:443/".into()];
        config.allowed_hosts = vec!["Box.LAN.".into(), "::1".into()];
        assert!(config.plan().is_ok());
        assert_eq!(config.origins(), ["https://app.example"]);
        assert_eq!(config.hosts(), ["box.lan", "[::1]"]);
    }
}

//! No `[gateway]` value panics the daemon: every key is fed its odd values (empty, `*`,
//! zero, negative, huge, malformed addresses, origins and hosts, missing TLS files, the
//! edge ports, IPv6), and a real daemon either starts (its gateway serving, or down with a
//! reason naming the key) or exits non-zero with a message naming the key, leaving no
//! socket behind. A panic anywhere (start-up, the first connection, shutdown) fails.

use crate::common::*;
use crate::harness::*;
use serde_json::json;

/// What a value must do.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    /// Refused at start-up: exit non-zero, the key named.
    Refused,
    /// The daemon starts (its gateway serving or down, saying why).
    Starts,
    /// Either, depending on the machine (a port that may be taken, IPv6 that may be off).
    Either,
}
use Expect::*;

/// `(key named in any refusal, the lines under [gateway], what must happen)`. `{dir}` is
/// the test's directory. Without a `listen` line the gateway listens on 127.0.0.1:0.
const CASES: &[(&str, &str, Expect)] = &[
    ("enabled", "enabled = false", Starts),
    ("enabled", "enabled = \"yes\"", Refused),
    ("listen", "listen = \"\"", Refused),
    ("listen", "listen = \"*\"", Refused),
    ("listen", "listen = \"localhost\"", Refused),
    ("listen", "listen = \"127.0.0.1\"", Refused),
    ("listen", "listen = \":0\"", Refused),
    ("listen", "listen = \"127.0.0.1:-1\"", Refused),
    ("listen", "listen = \"127.0.0.1:65536\"", Refused),
    ("listen", "listen = \"127.0.0.1:0 \"", Refused),
    ("listen", "listen = \"http://127.0.0.1:0\"", Refused),
    ("listen", "listen = \"256.0.0.1:80\"", Refused),
    ("listen", "listen = \"example.com:80\"", Refused),
    ("listen", "listen = \"[::1\"", Refused),
    ("listen", "listen = \"0.0.0.0:0\"", Refused),
    ("listen", "listen = \"[::]:0\"", Refused),
    ("listen", "listen = 42617", Refused),
    ("listen", "listen = \"localhost:0\"", Starts),
    ("listen", "listen = \"[::1]:0\"", Either),
    ("listen", "listen = \"127.0.0.1:65535\"", Either),
    (
        "allow_plaintext",
        "listen = \"0.0.0.0:0\"\nallow_remote = true\nallow_plaintext = true",
        Starts,
    ),
    ("allow_remote", "allow_remote = 1", Refused),
    ("tls_cert", "tls_cert = \"{dir}/missing.pem\"", Refused),
    (
        "tls_cert",
        "tls_cert = \"{dir}/missing.pem\"\ntls_key = \"{dir}/missing.key\"",
        Starts,
    ),
    ("tls_cert", "tls_cert = \"\"\ntls_key = \"\"", Starts),
    (
        "tls_cert",
        "tls_cert = \"{dir}/cfg/config.toml\"\ntls_key = \"{dir}/cfg/config.toml\"",
        Starts,
    ),
    ("allowed_origins", "allowed_origins = [\"*\"]", Refused),
    ("allowed_origins", "allowed_origins = \"*\"", Refused),
    ("allowed_origins", "allowed_origins = [\"\"]", Refused),
    ("allowed_origins", "allowed_origins = [\"null\"]", Refused),
    (
        "allowed_origins",
        "allowed_origins = [\"https://*.example.com\"]",
        Refused,
    ),
    (
        "allowed_origins",
        "allowed_origins = [\"app.example\"]",
        Refused,
    ),
    (
        "allowed_origins",
        "allowed_origins = [\"https://app.example/path\"]",
        Refused,
    ),
    (
        "allowed_origins",
        "allowed_origins = [\"https://app.example:99999\"]",
        Refused,
    ),
    (
        "allowed_origins",
        "allowed_origins = [\"https://user@app.example\"]",
        Refused,
    ),
    (
        "allowed_origins",
        "allowed_origins = [\"https://app.example\\n\"]",
        Refused,
    ),
    (
        "allowed_origins",
        "allowed_origins = [\"https://app.example\", \"HTTP://[::1]:8080/\"]",
        Starts,
    ),
    ("allowed_hosts", "allowed_hosts = [\"*\"]", Refused),
    ("allowed_hosts", "allowed_hosts = [\"\"]", Refused),
    (
        "allowed_hosts",
        "allowed_hosts = [\"*.example.com\"]",
        Refused,
    ),
    (
        "allowed_hosts",
        "allowed_hosts = [\"evil example\"]",
        Refused,
    ),
    (
        "allowed_hosts",
        "allowed_hosts = [\"box.lan:8080\"]",
        Refused,
    ),
    (
        "allowed_hosts",
        "allowed_hosts = [\"http://box.lan\"]",
        Refused,
    ),
    ("allowed_hosts", "allowed_hosts = [\"[::1\"]", Refused),
    ("allowed_hosts", "allowed_hosts = \"box.lan\"", Refused),
    (
        "allowed_hosts",
        "allowed_hosts = [\"Box.LAN\", \"::1\", \"[fd00::1]\", \"192.168.1.5\"]",
        Starts,
    ),
    ("max_body_bytes", "max_body_bytes = 0", Refused),
    ("max_body_bytes", "max_body_bytes = -1", Refused),
    (
        "max_body_bytes",
        "max_body_bytes = 9223372036854775807",
        Refused,
    ),
    ("max_body_bytes", "max_body_bytes = 1", Starts),
    ("max_connections", "max_connections = 0", Refused),
    ("max_connections", "max_connections = -1", Refused),
    (
        "max_connections",
        "max_connections = 9223372036854775807",
        Refused,
    ),
    ("max_connections", "max_connections = 1", Starts),
    ("header_timeout_secs", "header_timeout_secs = 0", Refused),
    ("header_timeout_secs", "header_timeout_secs = -1", Refused),
    (
        "header_timeout_secs",
        "header_timeout_secs = 9223372036854775807",
        Refused,
    ),
    ("body_timeout_secs", "body_timeout_secs = 0", Refused),
    (
        "body_timeout_secs",
        "body_timeout_secs = 9223372036854775807",
        Refused,
    ),
    ("sse_heartbeat_secs", "sse_heartbeat_secs = 0", Refused),
    (
        "sse_heartbeat_secs",
        "sse_heartbeat_secs = 9223372036854775807",
        Refused,
    ),
    (
        "dashboard_idle_timeout_secs",
        "dashboard_idle_timeout_secs = 0",
        Refused,
    ),
    (
        "dashboard_idle_timeout_secs",
        "dashboard_idle_timeout_secs = -1",
        Refused,
    ),
    (
        "dashboard_idle_timeout_secs",
        "dashboard_idle_timeout_secs = 9223372036854775807",
        Refused,
    ),
    (
        "dashboard_idle_timeout_secs",
        "dashboard_idle_timeout_secs = 61\ndashboard_max_age_secs = 60",
        Refused,
    ),
    (
        "dashboard_max_age_secs",
        "dashboard_max_age_secs = 0",
        Refused,
    ),
    (
        "dashboard_max_age_secs",
        "dashboard_max_age_secs = 9223372036854775807",
        Refused,
    ),
    (
        "dashboard_max_age_secs",
        "dashboard_idle_timeout_secs = 1\ndashboard_max_age_secs = 1",
        Starts,
    ),
    (
        "dashboard_max_age_secs",
        "dashboard_max_age_secs = 34560000",
        Starts,
    ),
    ("allowed_host", "allowed_host = [\"box.lan\"]", Refused),
];

/// Runs one case; `Err` says what went wrong.
fn run(key: &str, lines: &str, expect: Expect) -> Result<(), String> {
    let dir = TestDir::new();
    // A TOML string: a Windows path's backslashes escaped.
    let escaped = dir.path().display().to_string().replace('\\', "\\\\");
    let lines = lines.replace("{dir}", &escaped);
    let listen = if lines.contains("listen =") {
        ""
    } else {
        "listen = \"127.0.0.1:0\"\n"
    };
    dir.write_config(&format!("[gateway]\n{listen}{lines}\n"));
    let mut daemon = dir.spawn_with(&[], &[]);
    // The gateway starts after the socket listens; with `enabled = false` it never does.
    let waited = if lines.contains("enabled = false") {
        daemon.wait_for_any_log_or_exit(&["listening", "panicked at"])
    } else {
        daemon.wait_for_any_log_or_exit(&[
            "gateway listening",
            "the gateway is not serving",
            "panicked at",
        ])
    };
    let outcome = match waited {
        Some(line) if !line.contains("panicked at") => {
            let gateway = daemon.client().call("status", json!({}))["gateway"].clone();
            if let Some(url) = gateway["url"].as_str() {
                // A request, so a value that only bites on a connection (a timer, a
                // layer) is exercised; its answer is not the point.
                let url = format!("{url}/api/v1/health");
                let _ = block(async { http().get(url).send().await });
            } else if let Some(error) = gateway["error"].as_str()
                && !error.contains("gateway.")
            {
                return Err(format!("the gateway's error names no key: {error}"));
            }
            let status = daemon.stop();
            if !status.success() {
                return Err(format!("stopping it exited {status:?}"));
            }
            Starts
        }
        _ => {
            let status = daemon.wait_exit();
            if status.success() {
                return Err("it exited 0 without listening".into());
            }
            Refused
        }
    };
    let log = daemon.wait_for_stderr_end();
    if log.contains("panicked") {
        return Err(format!("it panicked:\n{log}"));
    }
    if outcome == Refused {
        if !log.contains(key) {
            return Err(format!("its refusal does not name {key}:\n{log}"));
        }
        if dir.default_endpoint().exists() {
            return Err("its socket was left behind".into());
        }
    }
    if expect != Either && outcome != expect {
        return Err(format!("expected {expect:?}, got {outcome:?}:\n{log}"));
    }
    Ok(())
}

#[test]
fn every_odd_gateway_value_either_starts_or_is_refused_naming_its_key_and_none_panics() {
    let failures: Vec<String> = CASES
        .iter()
        .filter_map(|(key, lines, expect)| {
            run(key, lines, *expect)
                .err()
                .map(|e| format!("[gateway] {lines:?}: {e}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_wildcard_origin_is_refused_saying_why_and_what_to_write_instead() {
    let dir = TestDir::new();
    dir.write_config("[gateway]\nlisten = \"127.0.0.1:0\"\nallowed_origins = [\"*\"]\n");
    let mut daemon = dir.spawn_with(&[], &[]);
    assert!(!daemon.wait_exit().success());
    let log = daemon.wait_for_stderr_end();
    assert!(log.contains("gateway.allowed_origins"), "{log}");
    assert!(log.contains("wildcard"), "why: {log}");
    assert!(log.contains("list each origin"), "what to write: {log}");
    assert!(!log.contains("panicked"), "{log}");
    assert!(!dir.default_endpoint().exists(), "no socket left behind");
}

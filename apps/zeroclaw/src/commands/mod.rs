//! One function per subcommand. Each returns a message for the user on failure.

pub mod browser;
pub mod call;
pub mod checkpoints;
pub mod mcp;
pub mod prompt;
pub mod runs;
pub mod service;
pub mod sessions;
pub mod store;
pub mod token;
pub mod trust;
mod words;

pub use words::{describe_call_error, resolve_session};

use serde_json::Value;
use std::sync::OnceLock;
use std::time::Duration;
use zeroclaw_client::protocol::{GatewayStatus, McpServerStatus, ProviderStatus, StatusResult};
use zeroclaw_client::{Client, ClientOptions, Remote};
use zeroclaw_daemon::{DaemonOptions, GatewayChoice};
use zeroclaw_ipc::Paths;

/// `--url`: the client commands talk to this gateway instead of the local socket.
static REMOTE: OnceLock<Remote> = OnceLock::new();

/// Makes every client command use the gateway at `remote`.
pub fn use_remote(remote: Remote) {
    let _ = REMOTE.set(remote);
}

pub fn remote() -> Option<&'static Remote> {
    REMOTE.get()
}

type Outcome = Result<(), String>;

/// How long `zeroclaw stop` waits for the daemon to finish shutting down.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// How `zeroclaw daemon` runs: its flags, and what its service manager passed it.
pub struct DaemonRun {
    pub ephemeral: bool,
    pub gateway: GatewayChoice,
    pub exit_when_idle: Option<Duration>,
    pub activation: zeroclaw_daemon::service::Activation,
    pub notifier: zeroclaw_daemon::service::Notifier,
}

pub async fn daemon(paths: Paths, run: DaemonRun) -> Outcome {
    zeroclaw_daemon::run(DaemonOptions {
        paths,
        ephemeral: run.ephemeral,
        gateway: run.gateway,
        activation: run.activation,
        notifier: run.notifier,
        exit_when_idle: run.exit_when_idle,
    })
    .await
    .map_err(|e| e.to_string())
}

fn options() -> ClientOptions {
    ClientOptions {
        name: "zeroclaw-cli".into(),
        ..ClientOptions::default()
    }
}

/// Connects to a running daemon; never starts one. With no socket to connect to, a daemon
/// may still be running: the message names it (see [`no_daemon_but`]).
pub async fn connect(paths: &Paths) -> Result<Client, String> {
    connect_with(paths, options()).await
}

/// [`connect`] with these options: over the gateway with `--url`, else the socket.
pub async fn connect_with(paths: &Paths, options: ClientOptions) -> Result<Client, String> {
    if let Some(remote) = remote() {
        return Client::connect_remote(remote, options)
            .await
            .map_err(|e| e.to_string());
    }
    Client::connect(&paths.endpoint, options)
        .await
        .map_err(|e| match &e {
            zeroclaw_client::ClientError::Connect(zeroclaw_ipc::ConnectError::NoDaemon {
                endpoint,
            }) => no_daemon_but(paths, endpoint).unwrap_or_else(|| e.to_string()),
            _ => e.to_string(),
        })
}

/// Nothing answers at `endpoint`, yet a daemon may be running: one whose socket file was
/// deleted still holds the endpoint's lock, and one serving another endpoint on this data dir
/// (a mistyped or forgotten ZEROCLAW_SOCKET) holds the data dir's. Starting a daemon is the
/// wrong advice for either: this names the running one and how to reach it.
fn no_daemon_but(paths: &Paths, endpoint: &zeroclaw_ipc::Endpoint) -> Option<String> {
    if let Some(pid) = zeroclaw_ipc::lock_holder(endpoint) {
        return Some(format!(
            "no socket at {endpoint}, but the daemon with pid {pid} holds its lock: its socket file was deleted. It re-creates it within daemon.socket_check_secs; or stop it with `kill {pid}`"
        ));
    }
    match zeroclaw_ipc::data_dir_holder(paths)? {
        zeroclaw_ipc::Holder::Daemon {
            pid,
            endpoint: Some(theirs),
        } if theirs != endpoint.to_string() => {
            let pid = pid.map_or_else(|| "pid unknown".to_owned(), |pid| format!("pid {pid}"));
            Some(format!(
                "no daemon at {endpoint}, but the daemon ({pid}) of this data directory ({}) serves {theirs}: set ZEROCLAW_SOCKET to {theirs} to talk to it (a data directory takes one daemon, so another one started here would be refused)",
                paths.data_dir.display()
            ))
        }
        _ => None,
    }
}

pub async fn status(paths: &Paths, as_json: bool) -> Outcome {
    let client = connect(paths).await?;
    let status = client
        .status()
        .await
        .map_err(|e| format!("status failed: {}", describe_call_error(&e)))?;
    if as_json {
        print_json(serde_json::to_value(&status))?;
    } else {
        print!("{}", describe_status(&status));
    }
    Ok(())
}

pub async fn stop(paths: &Paths) -> Outcome {
    let client = connect(paths).await?;
    let pid = client.server_info().pid;
    client
        .shutdown()
        .await
        .map_err(|e| format!("shutdown failed: {}", describe_call_error(&e)))?;
    // The daemon closes every connection as it stops, then closes its store and lets the
    // data dir's lock go: only then may a daemon (or `zeroclaw store recover`) start on it,
    // so `zeroclaw stop && zeroclaw daemon` works. A remote daemon's lock is not ours to see.
    let local = remote().is_none().then(|| paths.clone());
    let stopped = async move {
        client.closed().await;
        if let Some(paths) = local {
            let _ =
                tokio::task::spawn_blocking(move || zeroclaw_ipc::wait_data_dir_free(&paths)).await;
        }
    };
    tokio::time::timeout(STOP_TIMEOUT, stopped)
        .await
        .map_err(|_| format!("the daemon (pid {pid}) accepted shutdown but is still running after {STOP_TIMEOUT:?}"))?;
    println!("daemon (pid {pid}) stopped");
    Ok(())
}

pub fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Prints an answer for `--json`, indented: `serde_json::to_value` of its protocol type.
pub fn print_json(value: serde_json::Result<Value>) -> Outcome {
    let value = value.map_err(|e| format!("the answer could not be written as JSON: {e}"))?;
    println!("{}", pretty(&value));
    Ok(())
}

fn describe_status(s: &StatusResult) -> String {
    let gateway = match &s.gateway {
        None => "off".to_owned(),
        Some(GatewayStatus::Up { url, .. }) => url.clone(),
        Some(GatewayStatus::Down { error }) => format!("down: {error}"),
    };
    format!(
        "zeroclaw daemon {version} (protocol {protocol}), pid {pid}, up {uptime}\n\
         endpoint   {endpoint}\n\
         data dir   {data_dir}\n\
         mode       {mode}\n\
         clients    {clients}\n\
         sessions   {total} ({running} running)\n\
         mcp        {mcp}\n\
         gateway    {gateway}\n\
         provider   {provider}\n",
        version = s.server_version,
        protocol = s.protocol_version,
        pid = s.pid,
        uptime = human_duration(Duration::from_millis(s.uptime_ms)),
        endpoint = s.endpoint,
        data_dir = s.data_dir,
        mode = if s.ephemeral {
            "ephemeral (exits when its last client leaves)"
        } else {
            "persistent"
        },
        clients = s.clients,
        total = s.sessions.total,
        running = s.sessions.running,
        mcp = describe_mcp(&s.mcp_servers),
        provider = describe_provider(s.provider.as_ref()),
    )
}

/// `openai gpt-4o-mini at https://…/v1; last call ok at 2026-…`. Never a key: the daemon
/// sends none, and its base URL comes without credentials.
fn describe_provider(provider: Option<&ProviderStatus>) -> String {
    let Some(p) = provider else {
        return "unknown (an older daemon)".into();
    };
    let last = match &p.last_call {
        None => "no call yet".to_owned(),
        Some(call) if call.ok => format!("last call ok at {}", call.at),
        Some(call) => format!(
            "last call failed at {}: {}",
            call.at,
            call.error.as_deref().unwrap_or("?")
        ),
    };
    format!("{} {} at {}; {last}", p.kind, p.model, p.base_url)
}

/// `2 servers: github ready (12 tools), docs failed`.
fn describe_mcp(servers: &[McpServerStatus]) -> String {
    if servers.is_empty() {
        return "no servers".into();
    }
    let each: Vec<String> = servers
        .iter()
        .map(|s| match s.state.as_str() {
            "ready" => format!("{} ready ({} tools)", s.name, s.tools),
            state => format!("{} {state}", s.name),
        })
        .collect();
    format!("{} servers: {}", servers.len(), each.join(", "))
}

fn human_duration(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human_duration(Duration::from_secs(5)), "5s");
        assert_eq!(human_duration(Duration::from_secs(65)), "1m05s");
        assert_eq!(human_duration(Duration::from_secs(7300)), "2h01m");
    }
}

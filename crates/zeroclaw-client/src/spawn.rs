//! Starting an ephemeral daemon for a client that found none.

use crate::{Client, ClientError, ClientOptions};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use zeroclaw_ipc::Paths;

/// How long a freshly started daemon may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(15);

/// The daemon binary: the `zeroclaw` beside this executable, else `zeroclaw` on `PATH`.
pub fn daemon_binary() -> PathBuf {
    let name = if cfg!(windows) {
        "zeroclaw.exe"
    } else {
        "zeroclaw"
    };
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(name)))
        .filter(|candidate| candidate.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

/// Where an ephemeral daemon started by a client writes its log.
pub fn ephemeral_log(paths: &Paths) -> PathBuf {
    paths.data_dir.join("ephemeral-daemon.log")
}

/// Connects to the daemon at `paths.endpoint`, starting `zeroclaw daemon --ephemeral` first
/// when none answers. The child gets the client's endpoint in `ZEROCLAW_SOCKET` (and its
/// config dir), so the two cannot disagree; it runs in its own process group, so the
/// client's Ctrl-C does not reach it; its log replaces `<data dir>/ephemeral-daemon.log`.
pub async fn connect_or_start(
    paths: &Paths,
    options: ClientOptions,
) -> Result<Client, ClientError> {
    match Client::connect(&paths.endpoint, options.clone()).await {
        Err(ClientError::Connect(zeroclaw_ipc::ConnectError::NoDaemon { .. })) => {}
        other => return other,
    }
    let mut child = spawn(paths, &daemon_binary())?;
    let deadline = Instant::now() + START_TIMEOUT;
    let mut delay = Duration::from_millis(5);
    loop {
        match Client::connect(&paths.endpoint, options.clone()).await {
            Ok(client) => return Ok(client),
            Err(ClientError::Connect(zeroclaw_ipc::ConnectError::NoDaemon { .. })) => {}
            Err(other) => return Err(other),
        }
        if let Ok(Some(status)) = child.try_wait() {
            // Another client may have won the race to start one; try it before giving up.
            if let Ok(client) = Client::connect(&paths.endpoint, options.clone()).await {
                return Ok(client);
            }
            return Err(ClientError::Start(format!(
                "the daemon exited with {status} before accepting connections:\n{}",
                log_tail(&ephemeral_log(paths))
            )));
        }
        if Instant::now() >= deadline {
            let _ = child.start_kill();
            let _ = child.wait().await;
            return Err(ClientError::Start(format!(
                "the daemon did not accept connections within {START_TIMEOUT:?}:\n{}",
                log_tail(&ephemeral_log(paths))
            )));
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_millis(100));
    }
}

fn spawn(paths: &Paths, binary: &Path) -> Result<tokio::process::Child, ClientError> {
    std::fs::create_dir_all(&paths.data_dir).map_err(|e| {
        ClientError::Start(format!("cannot create {}: {e}", paths.data_dir.display()))
    })?;
    let log_path = ephemeral_log(paths);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(&log_path)
        .map_err(|e| ClientError::Start(format!("cannot open {}: {e}", log_path.display())))?;
    let mut command = tokio::process::Command::new(binary);
    command
        .arg("--config-dir")
        .arg(&paths.config_dir)
        .args(["daemon", "--ephemeral"])
        .env("ZEROCLAW_SOCKET", paths.endpoint.as_path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
    #[cfg(unix)]
    command.process_group(0);
    #[cfg(windows)]
    {
        /// CREATE_NEW_PROCESS_GROUP: the console's Ctrl-C is not delivered to the daemon.
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        command.creation_flags(CREATE_NEW_PROCESS_GROUP);
    }
    command.spawn().map_err(|e| {
        ClientError::Start(format!(
            "cannot start {} daemon --ephemeral: {e}; install zeroclaw on your PATH or start `zeroclaw daemon` yourself",
            binary.display()
        ))
    })
}

/// The last lines of a log file, for an error report.
fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(20);
    let tail = lines[start..].join("\n");
    if tail.is_empty() {
        format!("(nothing in {})", path.display())
    } else {
        format!("{tail}\n(full log: {})", path.display())
    }
}

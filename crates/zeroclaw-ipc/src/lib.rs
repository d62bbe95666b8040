//! Local IPC for zeroclaw: where the daemon listens ([`endpoint`]), how it listens safely
//! ([`LocalListener`]: a Unix socket or a Windows named pipe), and how clients connect
//! ([`connect`]). Policy that is about the protocol lives in `zeroclaw-rpc`; policy that is
//! about the daemon (what to do with a connection) lives in the runtime.

pub mod endpoint;
mod local;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

pub use endpoint::{Endpoint, Paths, ResolveError, resolve};
pub use local::{LocalStream, LocalTransport};
#[cfg(windows)]
pub use windows::is_wine;

use std::io;
use std::path::PathBuf;

/// Who connected, as far as the OS can tell us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerInfo {
    /// The peer's uid (Unix only).
    pub uid: Option<u32>,
    /// The peer's pid, where the platform reports it (SO_PEERCRED on Linux).
    pub pid: Option<u32>,
    /// For the audit log: `unix:pid=<pid>,uid=<uid>`, `unix:uid=<uid>` or `pipe:local`.
    pub label: String,
}

impl PeerInfo {
    pub fn unix(uid: u32, pid: Option<u32>) -> Self {
        let label = match pid {
            Some(pid) => format!("unix:pid={pid},uid={uid}"),
            None => format!("unix:uid={uid}"),
        };
        Self {
            uid: Some(uid),
            pid,
            label,
        }
    }

    pub fn pipe_local() -> Self {
        Self {
            uid: None,
            pid: None,
            label: "pipe:local".into(),
        }
    }

    /// Whether this peer may talk to the daemon: the same user, or root. Where the OS gives
    /// no uid (named pipes), the pipe's ACL has already decided.
    pub fn is_trusted(&self) -> bool {
        match self.uid {
            #[cfg(unix)]
            Some(uid) => uid == unix::current_uid() || uid == 0,
            _ => true,
        }
    }
}

/// An accepted connection.
#[derive(Debug)]
pub struct Accepted {
    pub stream: LocalStream,
    pub peer: PeerInfo,
}

/// Why the daemon could not start listening. Each message says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error(
        "another zeroclaw daemon ({}) is already serving {endpoint}; stop it with `zeroclaw stop`, or set ZEROCLAW_SOCKET (or --config-dir) to run a second one elsewhere",
        match .pid { Some(pid) => format!("pid {pid}"), None => "pid unknown".to_string() }
    )]
    AlreadyRunning { endpoint: String, pid: Option<u32> },
    /// Windows: the data dir's lock (`daemon.lock`) is held, whatever pipe that daemon uses.
    #[error(
        "another zeroclaw daemon ({}) is already using the data directory {}; stop it with `zeroclaw stop`, or use another data dir (--config-dir or ZEROCLAW_DATA_DIR) to run a second one",
        match .pid { Some(pid) => format!("pid {pid}"), None => "pid unknown".to_string() },
        path.display()
    )]
    DataDirInUse { path: PathBuf, pid: Option<u32> },
    #[error(
        "{} exists and is {what}, not a socket; it was left untouched. Remove it yourself, or set ZEROCLAW_SOCKET to another path",
        path.display()
    )]
    NotASocket { path: PathBuf, what: &'static str },
    #[error(
        "something is already listening on {} without holding its lock file; stop that process, or set ZEROCLAW_SOCKET to another path",
        path.display()
    )]
    LiveSocket { path: PathBuf },
    #[error("the data directory {} cannot be used: {reason}", path.display())]
    DataDir { path: PathBuf, reason: String },
    #[error("cannot use the lock file {}: {source}", path.display())]
    Lock { path: PathBuf, source: io::Error },
    #[error("could not {what}: {source}")]
    Io { what: String, source: io::Error },
}

/// The daemon's listening endpoint.
pub struct LocalListener {
    #[cfg(unix)]
    inner: unix::UnixServer,
    #[cfg(windows)]
    inner: windows::PipeServer,
}

impl LocalListener {
    /// Starts listening on `paths.endpoint` with the platform's access rules (see the
    /// protocol reference, "Daemon lifecycle").
    pub fn bind(paths: &Paths) -> Result<Self, BindError> {
        #[cfg(unix)]
        let inner = unix::UnixServer::bind(paths.endpoint.as_path(), &paths.data_dir)?;
        #[cfg(windows)]
        let inner = windows::PipeServer::bind(paths)?;
        Ok(Self { inner })
    }

    /// The next connection. Errors are per-connection or transient (descriptors exhausted):
    /// the caller logs them, backs off, and keeps accepting.
    pub async fn accept(&mut self) -> io::Result<Accepted> {
        self.inner.accept().await
    }

    /// Makes `accept` check every `every` that the socket file still exists, and re-create
    /// it (with a warning in the log) if it was deleted. Named pipes cannot be deleted: a
    /// no-op on Windows.
    pub fn watch_socket(&mut self, every: std::time::Duration) {
        #[cfg(unix)]
        self.inner.watch_socket(every);
        #[cfg(windows)]
        let _ = every;
    }

    /// Stops listening and removes the socket if it is still the one this listener bound.
    pub fn close(self) {
        #[cfg(unix)]
        self.inner.remove_socket();
        #[cfg(windows)]
        drop(self.inner);
    }
}

/// The daemon's exclusivity without its socket, for work that must not run beside a daemon
/// (`zeroclaw store recover` renames the database). While it is held, a daemon refuses to
/// start ([`BindError::AlreadyRunning`]); dropping it releases it.
pub struct DaemonLock {
    #[cfg(unix)]
    _file: std::fs::File,
    /// Windows: the data dir's lock (`<data dir>\daemon.lock`), the one a daemon takes
    /// before it creates its pipe.
    #[cfg(windows)]
    _file: std::fs::File,
}

/// Takes the daemon's lock for `paths`, or says which daemon holds it.
pub fn lock(paths: &Paths) -> Result<DaemonLock, BindError> {
    #[cfg(unix)]
    let lock = DaemonLock {
        _file: unix::take_lock(paths.endpoint.as_path())?,
    };
    #[cfg(windows)]
    let lock = {
        std::fs::create_dir_all(&paths.data_dir).map_err(|source| BindError::Io {
            what: format!("create the data directory ({})", paths.data_dir.display()),
            source,
        })?;
        DaemonLock {
            _file: windows::take_lock(&paths.data_dir)?,
        }
    };
    Ok(lock)
}

/// Why a client could not connect.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("no daemon at {endpoint}; start one with `zeroclaw daemon`")]
    NoDaemon { endpoint: Endpoint },
    #[error("cannot connect to {endpoint}: {source}")]
    Io {
        endpoint: Endpoint,
        source: io::Error,
    },
}

/// The pid of the daemon holding `endpoint`'s lock, for a client that found no socket
/// there: a daemon whose socket file was deleted. Always `None` on Windows, where a pipe cannot
/// be deleted from under its daemon.
pub fn lock_holder(endpoint: &Endpoint) -> Option<u32> {
    #[cfg(unix)]
    return unix::lock_holder(endpoint.as_path());
    #[cfg(windows)]
    {
        let _ = endpoint;
        None
    }
}

/// Connects to a daemon's endpoint.
pub async fn connect(endpoint: &Endpoint) -> Result<LocalStream, ConnectError> {
    let classify = |source: io::Error| match source.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused => ConnectError::NoDaemon {
            endpoint: endpoint.clone(),
        },
        _ => ConnectError::Io {
            endpoint: endpoint.clone(),
            source,
        },
    };
    #[cfg(unix)]
    {
        tokio::net::UnixStream::connect(endpoint.as_path())
            .await
            .map(LocalStream::Unix)
            .map_err(classify)
    }
    #[cfg(windows)]
    {
        windows::connect(endpoint).await.map_err(classify)
    }
}

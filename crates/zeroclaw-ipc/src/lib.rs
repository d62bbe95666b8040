//! Local IPC for zeroclaw: where the daemon listens ([`endpoint`]), the data dir's lock
//! ([`claim_data_dir`]: one daemon per data dir), how it listens safely ([`LocalListener`]:
//! a Unix socket or a Windows named pipe), and how clients connect ([`connect`]). Policy that is about the protocol lives in `zeroclaw-rpc`; policy that is
//! about the daemon (what to do with a connection) lives in `zeroclaw-daemon`.

mod data_lock;
pub mod endpoint;
mod local;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

pub use data_lock::{DataDirLock, Holder, LOCK_FILE};
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
    /// The endpoint's lock (Unix) or the pipe's name (Windows) is held. Only ever met with
    /// the data dir's lock held, so the holder serves another data dir: a daemon of its own
    /// endpoint is the way past, and never one on the same data.
    #[error(
        "another zeroclaw daemon ({}) is already serving {endpoint}, for another data directory; stop it with `zeroclaw stop`, or give this daemon an endpoint of its own (ZEROCLAW_SOCKET, or --config-dir)",
        match .pid { Some(pid) => format!("pid {pid}"), None => "pid unknown".to_string() }
    )]
    AlreadyRunning { endpoint: String, pid: Option<u32> },
    /// The data dir's lock (`<data dir>/daemon.lock`) is held: by a daemon, whatever its
    /// endpoint, or by a command working on the store. `endpoint` is the refused process's;
    /// `command` is `None` for a daemon.
    #[error("{}", data_lock::in_use_message(path, holder, endpoint, *command))]
    DataDirInUse {
        path: PathBuf,
        holder: Holder,
        endpoint: String,
        command: Option<&'static str>,
    },
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
    /// A socket the service manager passed (socket activation) cannot be served as it is.
    #[error("the socket passed as `{name}` by the service manager cannot be served: {reason}")]
    Inherited { name: &'static str, reason: String },
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
    /// protocol reference, "Daemon lifecycle"). The data dir's lock comes first: asking
    /// for it here proves it was taken.
    pub fn bind(paths: &Paths, _data_dir: &DataDirLock) -> Result<Self, BindError> {
        #[cfg(unix)]
        let inner = unix::UnixServer::bind(paths.endpoint.as_path(), &paths.data_dir)?;
        #[cfg(windows)]
        let inner = windows::PipeServer::bind(paths)?;
        Ok(Self { inner })
    }

    /// Serves `socket`, the listening Unix socket a service manager bound at
    /// `paths.endpoint` and passed to this process (socket activation, its name `rpc`),
    /// instead of binding one. The same rules as [`LocalListener::bind`]'s hold: the data
    /// dir's lock first, the endpoint's lock, an owner-only socket (tightened to 0600 if the
    /// manager made it looser), the peer-credential check on every connection. The socket
    /// file is the manager's: it is never removed, nor re-created if deleted.
    #[cfg(unix)]
    pub fn inherit(
        socket: std::os::fd::OwnedFd,
        paths: &Paths,
        _data_dir: &DataDirLock,
    ) -> Result<Self, BindError> {
        let inner = unix::UnixServer::inherit(socket, paths.endpoint.as_path())?;
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

/// Makes the data dir ready for a daemon (created if missing; on Unix 0700 and ours) and
/// takes its lock exclusively, recording this process's pid and `paths.endpoint`: one daemon
/// per data dir, whatever its endpoint. A daemon takes it before it opens the store and holds
/// it until the store is closed; a second one is refused ([`BindError::DataDirInUse`],
/// naming the holder's pid and endpoint) before it touches anything.
pub fn claim_data_dir(paths: &Paths) -> Result<DataDirLock, BindError> {
    #[cfg(unix)]
    unix::prepare_private_dir(&paths.data_dir)?;
    #[cfg(windows)]
    std::fs::create_dir_all(&paths.data_dir).map_err(|source| BindError::Io {
        what: format!("create the data directory ({})", paths.data_dir.display()),
        source,
    })?;
    data_lock::take(paths, data_lock::Role::Daemon(&paths.endpoint))
}

/// The data dir's lock, exclusive, for `command`, which writes the store with no daemon
/// running (`zeroclaw store recover`): refused while a daemon or another command holds it,
/// and while it is held no daemon starts. The data dir must exist.
pub fn lock(paths: &Paths, command: &'static str) -> Result<DataDirLock, BindError> {
    data_lock::take(paths, data_lock::Role::Writer(command))
}

/// The data dir's lock, shared, for `command`, which only reads the store (`zeroclaw store
/// check`): several readers at once, none beside a daemon or a writer. The data dir must
/// exist.
pub fn lock_shared(paths: &Paths, command: &'static str) -> Result<DataDirLock, BindError> {
    data_lock::take(paths, data_lock::Role::Reader(command))
}

/// Who holds the lock of `paths.data_dir`, if anyone does (a client that found no daemon
/// at its endpoint asks). The probe holds a shared lock for an instant.
pub fn data_dir_holder(paths: &Paths) -> Option<Holder> {
    data_lock::holder(&paths.data_dir)
}

/// Blocks until no daemon (or offline writer) holds the lock of `paths.data_dir`: a daemon
/// that has stopped serving still closes its store before it lets go, and a daemon or
/// `zeroclaw store recover` started before then is refused.
pub fn wait_data_dir_free(paths: &Paths) -> io::Result<()> {
    data_lock::wait_free(&paths.data_dir)
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

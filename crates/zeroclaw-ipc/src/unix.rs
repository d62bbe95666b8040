//! The Unix listener: private directory, lock, stale-socket rules, owner-only socket.
//!
//! Order matters: the endpoint's lock is taken before the socket path is touched, so only
//! the daemon holding the lock ever removes a socket, and only one whose connect is refused.
//! (The data dir's lock, one daemon per data dir, is taken before both: `data_lock.rs`.)

use crate::{Accepted, BindError, LocalStream, PeerInfo};
use rustix::fs::{FlockOperation, Mode};
use rustix::net::{SocketType, sockopt};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use tokio::net::UnixListener;

pub(crate) struct UnixServer {
    listener: UnixListener,
    path: PathBuf,
    /// (device, inode) of the socket this daemon bound, so shutdown removes only its own.
    bound: (u64, u64),
    /// When set, how often `accept` checks that the socket file is still there.
    check: Option<tokio::time::Interval>,
    /// A failed re-creation was logged; the next failures stay quiet until one succeeds.
    restore_failed: bool,
    /// Held for the daemon's lifetime; the kernel drops the flock when the process dies,
    /// which is what makes a socket left by a SIGKILLed daemon recoverable.
    _lock: File,
    /// Passed by the service manager (socket activation): the socket file is the
    /// manager's, so it is never removed or re-created here.
    inherited: bool,
}

impl UnixServer {
    /// Binds `path`; the data dir has been prepared and locked ([`crate::claim_data_dir`]).
    pub(crate) fn bind(path: &Path, data_dir: &Path) -> Result<Self, BindError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
            && parent != data_dir
        {
            // A socket outside the data dir (ZEROCLAW_SOCKET): create a missing parent
            // privately, but never change the mode of a directory we did not create.
            if !parent.exists() {
                create_private_dir(parent)?;
            }
        }
        let lock = take_lock(path)?;
        remove_if_stale(path)?;
        let (listener, bound) = bind_socket(path)?;
        Ok(Self {
            listener,
            path: path.to_path_buf(),
            bound,
            check: None,
            restore_failed: false,
            _lock: lock,
            inherited: false,
        })
    }

    /// Serves `socket`, a listening socket the service manager bound at `path` and passed
    /// to this process (socket activation). The rules of a socket bound here still hold:
    /// it must be a listening Unix stream socket bound at `path` itself (so clients, which
    /// resolve the endpoint as usual, find it), its file is made 0600 if it was looser, the
    /// endpoint's lock is taken, and every connection's peer credentials are checked in
    /// `accept` as on a socket bound here. Its file is never removed: it is the manager's.
    pub(crate) fn inherit(socket: OwnedFd, path: &Path) -> Result<Self, BindError> {
        let refuse = |reason: String| BindError::Inherited {
            name: "rpc",
            reason,
        };
        let kind = sockopt::socket_type(&socket)
            .map_err(|e| refuse(format!("cannot read its type: {e}")))?;
        if kind != SocketType::STREAM {
            return Err(refuse("it is not a stream socket (ListenStream=)".into()));
        }
        if !sockopt::socket_acceptconn(&socket)
            .map_err(|e| refuse(format!("cannot tell whether it listens: {e}")))?
        {
            return Err(refuse("it is not listening".into()));
        }
        let std_listener = std::os::unix::net::UnixListener::from(socket);
        let local = std_listener
            .local_addr()
            .map_err(|e| refuse(format!("it is not a Unix socket: {e}")))?;
        match local.as_pathname() {
            Some(bound) if bound == path => {}
            Some(bound) => {
                return Err(refuse(format!(
                    "it is bound at {}, but this daemon's endpoint is {}; clients would not find it. Set ListenStream= to the endpoint (`zeroclaw endpoint` prints it), or ZEROCLAW_SOCKET to the socket's path",
                    bound.display(),
                    path.display()
                )));
            }
            None => {
                return Err(refuse(
                    "it has no path (an abstract or unnamed socket); clients connect by path"
                        .into(),
                ));
            }
        }
        let meta = fs::symlink_metadata(path)
            .map_err(|e| io_error("inspect the passed socket", path, e))?;
        if !meta.file_type().is_socket() {
            return Err(BindError::NotASocket {
                path: path.to_path_buf(),
                what: "not a socket",
            });
        }
        if meta.mode() & 0o077 != 0 {
            tracing::warn!(path = %path.display(), mode = format!("{:o}", meta.mode() & 0o777), "the passed socket was accessible to others; tightening it to 0600 (set SocketMode=0600 in the socket unit)");
            fs::set_permissions(path, fs::Permissions::from_mode(0o600))
                .map_err(|e| io_error("set the passed socket's permissions", path, e))?;
        }
        let lock = take_lock(path)?;
        std_listener
            .set_nonblocking(true)
            .map_err(|e| io_error("make the passed socket non-blocking", path, e))?;
        let listener = UnixListener::from_std(std_listener)
            .map_err(|e| io_error("register the passed socket", path, e))?;
        Ok(Self {
            listener,
            path: path.to_path_buf(),
            bound: (meta.dev(), meta.ino()),
            check: None,
            restore_failed: false,
            _lock: lock,
            inherited: true,
        })
    }

    /// From now on, `accept` checks every `every` that the socket file still exists.
    pub(crate) fn watch_socket(&mut self, every: std::time::Duration) {
        if self.inherited {
            // The manager's socket: if its file goes, re-creating it here would make a
            // socket the manager does not know; `systemctl restart zeroclaw.socket` is the
            // way back.
            return;
        }
        let mut check = tokio::time::interval(every);
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        self.check = Some(check);
    }

    pub(crate) async fn accept(&mut self) -> io::Result<Accepted> {
        let (stream, _) = loop {
            let Some(check) = self.check.as_mut() else {
                break self.listener.accept().await?;
            };
            tokio::select! {
                accepted = self.listener.accept() => break accepted?,
                _ = check.tick() => self.restore_socket(),
            }
        };
        let cred = stream.peer_cred()?;
        let pid = cred.pid().and_then(|p| u32::try_from(p).ok());
        Ok(Accepted {
            stream: LocalStream::Unix(stream),
            peer: PeerInfo::unix(cred.uid(), pid),
        })
    }

    /// Re-creates the socket if its file is gone (someone deleted it): without it the daemon
    /// is alive, holds the lock, and nobody can reach it. Still under the lock, so no other
    /// daemon can be binding the path. Anything else at the path is left alone, as at
    /// start-up; the old listener is dropped, since nothing can connect to it by name.
    fn restore_socket(&mut self) {
        match fs::symlink_metadata(&self.path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            _ => return,
        }
        match bind_socket(&self.path) {
            Ok((listener, bound)) => {
                self.listener = listener;
                self.bound = bound;
                self.restore_failed = false;
                tracing::warn!(path = %self.path.display(), "the socket file was deleted; re-created the socket");
            }
            Err(e) if !self.restore_failed => {
                self.restore_failed = true;
                tracing::error!(path = %self.path.display(), error = %e, "the socket file was deleted and could not be re-created; retrying");
            }
            Err(_) => {}
        }
    }

    /// Removes the socket, but only if the file at the path is still the one bound here.
    pub(crate) fn remove_socket(&self) {
        if self.inherited {
            // The service manager's: it goes on listening after this daemon exits.
            return;
        }
        match fs::symlink_metadata(&self.path) {
            Ok(meta) if (meta.dev(), meta.ino()) == self.bound => {
                if let Err(e) = fs::remove_file(&self.path) {
                    tracing::warn!(path = %self.path.display(), error = %e, "could not remove the socket");
                }
            }
            Ok(_) => {
                tracing::warn!(path = %self.path.display(), "socket path now holds another file; left in place")
            }
            Err(_) => {}
        }
    }
}

/// The effective uid of this process.
pub(crate) fn current_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

fn io_error(what: &str, path: &Path, source: io::Error) -> BindError {
    BindError::Io {
        what: format!("{what} ({})", path.display()),
        source,
    }
}

fn create_private_dir(dir: &Path) -> Result<(), BindError> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| io_error("create directory", dir, e))
}

/// Creates the data dir 0700, or checks an existing one: it must be a directory owned by
/// this user; a looser mode is tightened to 0700.
pub(crate) fn prepare_private_dir(dir: &Path) -> Result<(), BindError> {
    if !dir.exists() {
        create_private_dir(dir)?;
    }
    let meta = fs::metadata(dir).map_err(|e| io_error("inspect the data directory", dir, e))?;
    if !meta.is_dir() {
        return Err(BindError::DataDir {
            path: dir.to_path_buf(),
            reason: "it exists and is not a directory".into(),
        });
    }
    let uid = current_uid();
    if meta.uid() != uid {
        return Err(BindError::DataDir {
            path: dir.to_path_buf(),
            reason: format!(
                "it is owned by uid {}, not by you (uid {uid}); use a data dir of your own (--config-dir or ZEROCLAW_DATA_DIR)",
                meta.uid()
            ),
        });
    }
    if meta.mode() & 0o077 != 0 {
        tracing::warn!(path = %dir.display(), mode = format!("{:o}", meta.mode() & 0o777), "data directory was accessible to others; tightening it to 0700");
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| io_error("tighten the data directory to 0700", dir, e))?;
    }
    Ok(())
}

/// Opens a lock file (never through a symlink), creating it 0600 if `create`; anything but
/// a regular file is refused.
pub(crate) fn open(path: &Path, create: bool) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(create)
        .create(create)
        .truncate(false)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "it is a symbolic link; refusing to follow it (remove it if you did not create it)",
                )
            } else {
                e
            }
        })?;
    if !file.metadata()?.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is not a regular file",
        ));
    }
    Ok(file)
}

/// A non-blocking `flock`, exclusive or shared: `Ok(false)` when another holds it.
pub(crate) fn try_lock(file: &File, exclusive: bool) -> io::Result<bool> {
    let how = if exclusive {
        FlockOperation::NonBlockingLockExclusive
    } else {
        FlockOperation::NonBlockingLockShared
    };
    match rustix::fs::flock(file, how) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// A shared `flock` that waits for an exclusive holder to let go.
pub(crate) fn wait_shared(file: &File) -> io::Result<()> {
    Ok(rustix::fs::flock(file, FlockOperation::LockShared)?)
}

pub(crate) fn unlock(file: &File) -> io::Result<()> {
    Ok(rustix::fs::flock(file, FlockOperation::Unlock)?)
}

/// Opens `<socket>.lock` and takes an exclusive, non-blocking flock: one daemon per endpoint.
/// The file then holds this daemon's pid.
pub(crate) fn take_lock(socket: &Path) -> Result<File, BindError> {
    let lock_path = crate::Endpoint::new(socket).lock_path();
    let lock_err = |source| BindError::Lock {
        path: lock_path.clone(),
        source,
    };
    let mut file = open(&lock_path, true).map_err(lock_err)?;
    if !try_lock(&file, true).map_err(lock_err)? {
        let mut text = String::new();
        let _ = file.read_to_string(&mut text);
        return Err(BindError::AlreadyRunning {
            endpoint: socket.display().to_string(),
            pid: text.trim().parse().ok(),
        });
    }
    file.set_len(0).map_err(lock_err)?;
    file.rewind().map_err(lock_err)?;
    writeln!(file, "{}", std::process::id()).map_err(lock_err)?;
    Ok(file)
}

/// The pid of the daemon holding the lock beside `socket`, if one holds it. The probe takes
/// a shared lock for an instant, so a daemon starting at that very instant is refused as if
/// one were running.
pub(crate) fn lock_holder(socket: &Path) -> Option<u32> {
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(crate::Endpoint::new(socket).lock_path())
        .ok()?;
    match rustix::fs::flock(&file, FlockOperation::NonBlockingLockShared) {
        Err(rustix::io::Errno::WOULDBLOCK) => {
            let mut text = String::new();
            file.read_to_string(&mut text).ok()?;
            text.trim().parse().ok()
        }
        // Free (the lock goes with the file), or unknown.
        _ => None,
    }
}

/// A socket whose connect is refused is left over from a dead daemon: remove it. A live
/// socket, or anything that is not a socket, is never touched.
fn remove_if_stale(path: &Path) -> Result<(), BindError> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_error("inspect the socket path", path, e)),
    };
    let kind = meta.file_type();
    if !kind.is_socket() {
        let what = if kind.is_symlink() {
            "a symbolic link"
        } else if kind.is_dir() {
            "a directory"
        } else if kind.is_file() {
            "a regular file"
        } else {
            "not a socket"
        };
        return Err(BindError::NotASocket {
            path: path.to_path_buf(),
            what,
        });
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(_) => Err(BindError::LiveSocket {
            path: path.to_path_buf(),
        }),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
            tracing::info!(path = %path.display(), "removing a stale socket left by a daemon that is gone");
            fs::remove_file(path).map_err(|e| io_error("remove the stale socket", path, e))
        }
        Err(e) => Err(io_error("probe the existing socket", path, e)),
    }
}

/// Binds the socket owner-only and returns it with its (device, inode).
fn bind_socket(path: &Path) -> Result<(UnixListener, (u64, u64)), BindError> {
    let listener = bind_owner_only(path)?;
    let meta =
        fs::symlink_metadata(path).map_err(|e| io_error("inspect the new socket", path, e))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
        .map_err(|e| io_error("set the socket's permissions", path, e))?;
    Ok((listener, (meta.dev(), meta.ino())))
}

/// Binds with a umask that leaves the socket 0600 from the moment it exists, so there is
/// no window in which another user could connect before its mode is set. The umask is the
/// process's: a file another thread creates during the bind gets a stricter mode, never a
/// looser one.
fn bind_owner_only(path: &Path) -> Result<UnixListener, BindError> {
    let previous = rustix::process::umask(Mode::from_raw_mode(0o177));
    let bound = UnixListener::bind(path);
    rustix::process::umask(previous);
    bound.map_err(|e| io_error("bind the socket", path, e))
}

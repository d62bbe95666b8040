//! The data directory's lock: one daemon per data directory, whatever its endpoint, and the
//! store's offline maintenance kept away from a live daemon.
//!
//! One rule on every platform: `<data dir>/daemon.lock`, locked without waiting (`flock` on
//! Unix; `LockFileEx` on Windows, over one byte far past the record, because Windows locks
//! are mandatory and the next process must be able to read who holds it). The OS drops the
//! lock when its holder dies, even when killed, so nothing stale is ever left; the file
//! stays.
//!
//! - A daemon locks it exclusively before it opens the store, and holds it until the store
//!   is closed; a command that writes the store offline (`zeroclaw store recover`) locks it
//!   exclusively too. Either writes a record of itself into the file: its pid, and the
//!   endpoint it serves or the command it is.
//! - A command that only reads the store (`zeroclaw store check`, `backup`) locks it shared
//!   and writes nothing: several may read at once, and none beside a daemon.
//!
//! A refused process names the holder from the record. The record is only read while an
//! exclusive holder holds the lock, so it is never a dead process's: when an exclusive lock
//! is refused, a shared one is asked for at once, and if that is granted the holders are
//! readers (which leave no record).

use crate::{BindError, Endpoint, Paths};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::Path;

/// The lock's file name, inside the data dir.
pub const LOCK_FILE: &str = "daemon.lock";

/// The most of the record that is read: it is a pid and a path, and the file is not trusted.
const RECORD_MAX: u64 = 8 * 1024;

/// Who holds a data dir's lock, from its record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// A daemon, and the endpoint it serves (unknown in a record written by an older
    /// zeroclaw, which wrote its pid alone).
    Daemon {
        pid: Option<u32>,
        endpoint: Option<String>,
    },
    /// A command that writes the store offline, such as `zeroclaw store recover`.
    Command { pid: Option<u32>, name: String },
    /// Commands that only read the store (they hold it shared and leave no record).
    Readers,
}

/// The data dir's lock, held until it is dropped.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
}

/// How a lock is asked for, and what its holder records.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Role<'a> {
    /// A daemon serving this endpoint: exclusive.
    Daemon(&'a Endpoint),
    /// A command that writes the store offline: exclusive.
    Writer(&'static str),
    /// A command that only reads the store: shared.
    Reader(&'static str),
}

impl Role<'_> {
    fn exclusive(self) -> bool {
        !matches!(self, Role::Reader(_))
    }

    /// What an exclusive holder writes into the file: `pid=N`, then `endpoint=E` or
    /// `command=NAME` (the rest of the file, so a path may hold any character).
    fn record(self) -> Option<String> {
        let pid = std::process::id();
        match self {
            Role::Daemon(endpoint) => Some(format!("pid={pid}\nendpoint={endpoint}\n")),
            Role::Writer(name) => Some(format!("pid={pid}\ncommand={name}\n")),
            Role::Reader(_) => None,
        }
    }

    fn command(self) -> Option<&'static str> {
        match self {
            Role::Daemon(_) => None,
            Role::Writer(name) | Role::Reader(name) => Some(name),
        }
    }
}

/// Takes the lock of `paths.data_dir` for `role`, or says who holds it. The data dir must
/// exist.
pub(crate) fn take(paths: &Paths, role: Role<'_>) -> Result<DataDirLock, BindError> {
    let path = paths.data_dir.join(LOCK_FILE);
    let lock_err = |source| BindError::Lock {
        path: path.clone(),
        source,
    };
    let mut file = platform::open(&path, true).map_err(lock_err)?;
    let exclusive = role.exclusive();
    if !platform::try_lock(&file, exclusive).map_err(lock_err)? {
        return Err(BindError::DataDirInUse {
            path: paths.data_dir.clone(),
            holder: holder_of(&mut file, exclusive),
            endpoint: paths.endpoint.to_string(),
            command: role.command(),
        });
    }
    if let Some(record) = role.record() {
        file.set_len(0).map_err(lock_err)?;
        file.rewind().map_err(lock_err)?;
        file.write_all(record.as_bytes()).map_err(lock_err)?;
    }
    Ok(DataDirLock { _file: file })
}

/// Who holds the lock of `data_dir`, if anyone does. The probe holds a shared lock for an
/// instant, so a daemon starting at that very instant is refused as if a reader held it.
pub(crate) fn holder(data_dir: &Path) -> Option<Holder> {
    let mut file = platform::open(&data_dir.join(LOCK_FILE), false).ok()?;
    match platform::try_lock(&file, false) {
        Ok(true) => {
            let _ = platform::unlock(&file);
            None
        }
        Ok(false) => Some(read_record(&mut file)),
        Err(_) => None,
    }
}

/// Blocks until no daemon or writer holds the lock of `data_dir` (readers may), then
/// returns holding nothing: what `zeroclaw stop` waits on, since a daemon closes its
/// connections before it closes the store and lets the lock go. No lock file: nothing held.
pub(crate) fn wait_free(data_dir: &Path) -> std::io::Result<()> {
    let file = match platform::open(&data_dir.join(LOCK_FILE), false) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    platform::wait_shared(&file)?;
    platform::unlock(&file)
}

/// Who holds the lock that `file` was refused.
fn holder_of(file: &mut File, refused_exclusive: bool) -> Holder {
    // Readers hold it shared: then a shared lock is granted, and there is no record to read.
    if refused_exclusive && matches!(platform::try_lock(file, false), Ok(true)) {
        let _ = platform::unlock(file);
        return Holder::Readers;
    }
    read_record(file)
}

fn read_record(file: &mut File) -> Holder {
    let mut bytes = Vec::new();
    let _ = file
        .rewind()
        .and_then(|()| file.take(RECORD_MAX).read_to_end(&mut bytes));
    parse(&String::from_utf8_lossy(&bytes))
}

/// Reads a record (see [`Role::record`]). A bare pid is a daemon's record from before the
/// endpoint was recorded (zeroclaw's Windows daemons wrote that).
fn parse(text: &str) -> Holder {
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let pid = first
        .strip_prefix("pid=")
        .unwrap_or(first)
        .trim()
        .parse()
        .ok();
    let value = rest.strip_suffix('\n').unwrap_or(rest);
    if let Some(name) = value.strip_prefix("command=") {
        return Holder::Command {
            pid,
            name: name.to_owned(),
        };
    }
    Holder::Daemon {
        pid,
        endpoint: value
            .strip_prefix("endpoint=")
            .filter(|e| !e.is_empty())
            .map(str::to_owned),
    }
}

fn pid_text(pid: Option<u32>) -> String {
    match pid {
        Some(pid) => format!("pid {pid}"),
        None => "pid unknown".into(),
    }
}

/// The refusal's message: what holds the data dir, and what to do. `ours` is the endpoint
/// of the refused process; `command` is `None` for a daemon. It never suggests another
/// endpoint on the same data dir as a way past: there is none.
pub(crate) fn in_use_message(
    path: &Path,
    holder: &Holder,
    ours: &str,
    command: Option<&str>,
) -> String {
    let dir = path.display();
    match holder {
        Holder::Daemon { pid, endpoint } => {
            let pid = pid_text(*pid);
            let (serving, stop) = match endpoint.as_deref() {
                Some(theirs) if theirs != ours => (
                    format!(", serving {theirs}"),
                    format!(
                        "stop it with `zeroclaw stop` pointed at its endpoint (ZEROCLAW_SOCKET={theirs}; this command used {ours})"
                    ),
                ),
                Some(theirs) => (
                    format!(", serving {theirs}"),
                    "stop it with `zeroclaw stop`".to_owned(),
                ),
                None => (String::new(), "stop it with `zeroclaw stop`".to_owned()),
            };
            match command {
                None => format!(
                    "the data directory {dir} is in use by another zeroclaw daemon ({pid}){serving}; one data directory takes one daemon, whatever its endpoint. Use that daemon, or {stop}; a second daemon needs a data directory of its own (--config-dir or ZEROCLAW_DATA_DIR)"
                ),
                Some(name) => format!(
                    "the data directory {dir} is in use by a zeroclaw daemon ({pid}){serving}; `{name}` works only on a store no daemon is using: {stop}, then run `{name}` again"
                ),
            }
        }
        Holder::Command { pid, name } => format!(
            "the data directory {dir} is in use by `{name}` ({}); wait for it to finish, then try again",
            pid_text(*pid)
        ),
        Holder::Readers => format!(
            "the data directory {dir} is being read by `zeroclaw store check` or `zeroclaw store backup`; wait for it to finish, then try again"
        ),
    }
}

#[cfg(unix)]
use crate::unix as platform;
#[cfg(windows)]
use crate::windows as platform;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn paths(dir: &Path, endpoint: &str) -> Paths {
        let data_dir = dir.join("data");
        std::fs::create_dir_all(&data_dir).unwrap();
        Paths {
            config_dir: dir.to_path_buf(),
            data_dir,
            endpoint: Endpoint::new(endpoint),
        }
    }

    fn refusal(result: Result<DataDirLock, BindError>) -> (Holder, String) {
        match result {
            Err(e @ BindError::DataDirInUse { .. }) => {
                let text = e.to_string();
                let BindError::DataDirInUse { holder, .. } = e else {
                    unreachable!()
                };
                (holder, text)
            }
            Err(e) => panic!("unexpected error: {e}"),
            Ok(_) => panic!("the lock was granted"),
        }
    }

    /// A daemon's lock refuses a second daemon through another endpoint, naming the data
    /// dir, the first one's pid and the endpoint it serves, and never advising a second
    /// endpoint as the way past.
    #[test]
    fn a_daemons_lock_refuses_a_daemon_on_another_endpoint_naming_pid_and_endpoint() {
        let dir = tempfile::tempdir().unwrap();
        let first = paths(dir.path(), "first.sock");
        let _held = take(&first, Role::Daemon(&first.endpoint)).unwrap();
        let second = paths(dir.path(), "typo.sock");
        let (holder, text) = refusal(take(&second, Role::Daemon(&second.endpoint)));
        assert_eq!(
            holder,
            Holder::Daemon {
                pid: Some(std::process::id()),
                endpoint: Some("first.sock".into())
            }
        );
        assert!(
            text.contains(&first.data_dir.display().to_string())
                && text.contains(&format!("pid {}", std::process::id()))
                && text.contains("serving first.sock")
                && text.contains("ZEROCLAW_DATA_DIR"),
            "{text}"
        );
        assert!(!text.contains("ZEROCLAW_SOCKET=typo"), "{text}");
        assert_eq!(holder_at(&first), Some(holder));
    }

    fn holder_at(paths: &Paths) -> Option<Holder> {
        holder(&paths.data_dir)
    }

    /// Readers share the lock, keep daemons and writers out, and are named as readers.
    #[test]
    fn readers_share_the_lock_and_keep_daemons_and_writers_out() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path(), "d.sock");
        let one = take(&paths, Role::Reader("zeroclaw store check")).unwrap();
        let two = take(&paths, Role::Reader("zeroclaw store check")).unwrap();
        let (holder, text) = refusal(take(&paths, Role::Daemon(&paths.endpoint)));
        assert_eq!(holder, Holder::Readers);
        assert!(text.contains("being read"), "{text}");
        let (holder, _) = refusal(take(&paths, Role::Writer("zeroclaw store recover")));
        assert_eq!(holder, Holder::Readers);
        drop((one, two));
        let _daemon = take(&paths, Role::Daemon(&paths.endpoint)).unwrap();
    }

    /// A writer is refused beside a daemon and a reader beside a writer, each naming the
    /// holder; the lock is free again once dropped.
    #[test]
    fn writers_and_readers_are_refused_naming_the_exclusive_holder() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path(), "d.sock");
        let daemon = take(&paths, Role::Daemon(&paths.endpoint)).unwrap();
        let (_, text) = refusal(take(&paths, Role::Writer("zeroclaw store recover")));
        assert!(
            text.contains("`zeroclaw store recover` works only on a store no daemon is using")
                && text.contains("serving d.sock"),
            "{text}"
        );
        drop(daemon);
        assert_eq!(holder_at(&paths), None);
        let writer = take(&paths, Role::Writer("zeroclaw store recover")).unwrap();
        let (holder, text) = refusal(take(&paths, Role::Reader("zeroclaw store check")));
        assert_eq!(
            holder,
            Holder::Command {
                pid: Some(std::process::id()),
                name: "zeroclaw store recover".into()
            }
        );
        assert!(text.contains("wait for it to finish"), "{text}");
        drop(writer);
        let _reader = take(&paths, Role::Reader("zeroclaw store check")).unwrap();
    }

    #[test]
    fn records_are_read_back_whatever_the_endpoint_holds() {
        assert_eq!(
            parse("pid=12\nendpoint=/tmp/a\nb.sock\n"),
            Holder::Daemon {
                pid: Some(12),
                endpoint: Some("/tmp/a\nb.sock".into())
            }
        );
        assert_eq!(
            parse("pid=7\ncommand=zeroclaw store recover\n"),
            Holder::Command {
                pid: Some(7),
                name: "zeroclaw store recover".into()
            }
        );
        // An older Windows daemon's record: its pid alone.
        assert_eq!(
            parse("4242\r\n"),
            Holder::Daemon {
                pid: Some(4242),
                endpoint: None
            }
        );
        assert_eq!(
            parse(""),
            Holder::Daemon {
                pid: None,
                endpoint: None
            }
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_at_the_lock_path_is_refused_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path(), "d.sock");
        let target = dir.path().join("target");
        std::os::unix::fs::symlink(&target, paths.data_dir.join(LOCK_FILE)).unwrap();
        let err = take(&paths, Role::Daemon(&paths.endpoint)).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(!target.exists());
    }
}

//! A sandbox policy as configured: plain data, and the in-process checks it gives. What a
//! command needs is made from it by `prepared.rs` (through `plan.rs`, its validation).

use std::path::{Path, PathBuf};

use crate::check::Checker;
use crate::{Mode, Refusal};

/// What a session's commands and file tools may do. Plain data: build it from the config
/// and the session, then [`Policy::prepare`] it per command, or check paths with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub mode: Mode,
    /// Outbound network (any socket family but `AF_UNIX`). Ignored in mode `full`, where
    /// nothing is restricted.
    pub network: bool,
    /// The session's working directory: writable in `workspace-write`. Absolute.
    pub cwd: PathBuf,
    /// More writable directories in `workspace-write` (ignored in `read-only`). Absolute,
    /// existing.
    pub writable_roots: Vec<PathBuf>,
    /// Paths no sandboxed tool may read, write or connect to: the daemon's data dir, its
    /// config dir and its socket. Absolute; one that does not exist is skipped, unless a
    /// sandboxed command could create it (an error then).
    pub hidden: Vec<PathBuf>,
}

impl Policy {
    /// A policy with the network off, no writable roots and nothing hidden.
    pub fn new(mode: Mode, cwd: impl Into<PathBuf>) -> Self {
        Policy {
            mode,
            network: false,
            cwd: cwd.into(),
            writable_roots: Vec::new(),
            hidden: Vec::new(),
        }
    }

    /// Sets [`Policy::network`].
    pub fn network(mut self, on: bool) -> Self {
        self.network = on;
        self
    }

    /// Adds a writable root.
    pub fn writable_root(mut self, dir: impl Into<PathBuf>) -> Self {
        self.writable_roots.push(dir.into());
        self
    }

    /// Adds a hidden path.
    pub fn hide(mut self, path: impl Into<PathBuf>) -> Self {
        self.hidden.push(path.into());
        self
    }

    /// The in-process checks, with this policy's paths resolved once.
    pub fn checker(&self) -> Checker {
        Checker::new(self.mode, &self.cwd, &self.writable_roots, &self.hidden)
    }

    /// Whether a file tool may read `path`; the resolved path on success. See [`Checker`].
    pub fn check_read(&self, path: &Path) -> Result<PathBuf, Refusal> {
        self.checker().check_read(path)
    }

    /// Whether a file tool may write `path`; the resolved path on success. See [`Checker`].
    pub fn check_write(&self, path: &Path) -> Result<PathBuf, Refusal> {
        self.checker().check_write(path)
    }
}

//! What the caller can tune.

use std::path::PathBuf;

/// The engine's settings. `Options::default()` is what the daemon uses.
#[derive(Debug, Clone)]
pub struct Options {
    /// A file larger than this many bytes is left out of snapshots (listed in
    /// `Omitted::too_large`) and never touched by a restore. Default 10 MiB.
    pub max_file_bytes: u64,
    /// A workspace with more files to capture than this (ignored ones not counted) is
    /// refused with `Error::TooManyFiles` instead of taking minutes. Default 100,000.
    pub max_files: usize,
    /// Directories never captured nor touched, wherever they are (typically the daemon's
    /// data dir, in case a session's workspace contains it). The engine's own root is
    /// always one of them.
    pub never_capture: Vec<PathBuf>,
    /// The git program: a name looked up in `PATH`, or a path. Default `git`.
    pub git: PathBuf,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_file_bytes: 10 * 1024 * 1024,
            max_files: 100_000,
            never_capture: Vec::new(),
            git: PathBuf::from("git"),
        }
    }
}

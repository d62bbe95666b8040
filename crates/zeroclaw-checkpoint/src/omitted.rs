//! What a snapshot leaves out, besides ignored files, so the caller can say so.

use std::path::PathBuf;

/// What a snapshot left out besides ignored files (which `Workspace::ignored` lists), so
/// the caller can say so. None of it is ever touched by a restore.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Omitted {
    /// Files over `Options::max_file_bytes`, with their sizes.
    pub too_large: Vec<LargeFile>,
    /// Directories that are git repositories of their own (they hold a `.git`): git records
    /// such a directory only as a link to a commit, which cannot restore its files, so it is
    /// left out whole.
    pub nested_repositories: Vec<PathBuf>,
    /// Files that could not be read (permissions) or are not regular files or symlinks.
    pub unreadable: Vec<Unreadable>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LargeFile {
    pub path: PathBuf,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    pub path: PathBuf,
    pub reason: String,
}

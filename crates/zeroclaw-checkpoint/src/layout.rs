//! The engine's root directory:
//!
//! ```text
//! <root>/
//!   empty/              an empty directory: git's HOME, hooks path and init template
//!   empty.gitconfig     an empty file: git's global config and attributes file
//!   locks/<key>.lock    one lock file per workspace, never deleted (so a removed shadow
//!                       repository can be re-created under the same lock)
//!   repos/<key>/        the shadow repository of one workspace (a bare git directory)
//! ```
//!
//! `<key>` is the first 32 hex digits of the SHA-256 of the workspace's canonical path.

use std::fs::File;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::paths;

#[derive(Debug)]
pub(crate) struct Layout {
    pub root: PathBuf,
    pub empty_dir: PathBuf,
    pub empty_file: PathBuf,
    pub locks: PathBuf,
    pub repos: PathBuf,
}

impl Layout {
    /// The layout under `root` (made absolute), without creating anything.
    pub(crate) fn at(root: &Path) -> Result<Self, Error> {
        let root = std::path::absolute(root).map_err(|e| Error::io("resolve", root, e))?;
        Ok(Self {
            empty_dir: root.join("empty"),
            empty_file: root.join("empty.gitconfig"),
            locks: root.join("locks"),
            repos: root.join("repos"),
            root,
        })
    }

    /// Creates what is missing, and empties `empty/` and `empty.gitconfig` if anything was
    /// put there: git reads them as config and hooks.
    pub(crate) fn create(&self) -> Result<(), Error> {
        for dir in [&self.root, &self.locks, &self.repos, &self.empty_dir] {
            std::fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))?;
        }
        let entries = std::fs::read_dir(&self.empty_dir)
            .map_err(|e| Error::io("read", &self.empty_dir, e))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let removed = match entry.file_type() {
                Ok(t) if t.is_dir() => std::fs::remove_dir_all(&path),
                _ => std::fs::remove_file(&path),
            };
            removed.map_err(|e| Error::io("remove", &path, e))?;
        }
        let empty = std::fs::metadata(&self.empty_file).map(|m| m.len() == 0);
        if !matches!(empty, Ok(true)) {
            File::create(&self.empty_file).map_err(|e| Error::io("create", &self.empty_file, e))?;
        }
        Ok(())
    }

    /// The shadow repository's key for a canonical workspace path.
    pub(crate) fn key(workspace: &Path) -> String {
        let digest = Sha256::digest(paths::to_bytes(workspace));
        digest[..16].iter().map(|b| format!("{b:02x}")).collect()
    }

    pub(crate) fn repo(&self, key: &str) -> PathBuf {
        self.repos.join(key)
    }

    pub(crate) fn lock(&self, key: &str) -> PathBuf {
        self.locks.join(format!("{key}.lock"))
    }
}

/// An exclusive lock on one workspace's shadow repository, held for a whole operation.
/// It is a `flock` on Unix and `LockFileEx` on Windows (std's `File::lock`), taken on a file
/// opened for this operation: two threads of one daemon exclude each other as two
/// processes do, and the lock goes away with its holder, even when it is killed.
pub(crate) struct RepoLock {
    _file: File,
}

impl RepoLock {
    pub(crate) fn acquire(path: &Path) -> Result<Self, Error> {
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| Error::io("open lock file", path, e))?;
        file.lock().map_err(|e| Error::io("lock", path, e))?;
        Ok(Self { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_hex_of_the_path() {
        let a = Layout::key(Path::new("/home/u/project"));
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(a, Layout::key(Path::new("/home/u/project")));
        assert_ne!(a, Layout::key(Path::new("/home/u/project2")));
    }
}

//! What a call with a path will really touch: the path resolved (symbolic links of its
//! existing part followed, `..` applied), whether that is outside the session's working
//! directory, and whether it is one of the daemon's own files, which no policy lets a tool
//! reach without an approval that says so.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

/// A call's path, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Target {
    /// Absolute; every existing part resolved through symbolic links.
    pub path: PathBuf,
    /// Not inside the session's (resolved) working directory.
    pub outside_cwd: bool,
    /// Why the call must be approved whatever the policy says: it reaches the daemon's
    /// own files.
    pub protected: Option<String>,
}

/// The daemon's own files.
pub(super) struct Own<'a> {
    pub data_dir: &'a Path,
    pub config_file: &'a Path,
}

/// Resolves `written` (relative to `cwd` unless absolute) for a call that reads, or
/// writes if `writes`. Blocking: it asks the file system.
pub(super) fn resolve(cwd: &Path, written: &str, writes: bool, own: &Own<'_>) -> Target {
    let path = real(&crate::tools::resolve(cwd, written));
    let outside_cwd = !path.starts_with(real(cwd));
    let verb = if writes { "writes" } else { "reads" };
    let protected = if daemon_process_files(&path) {
        Some(format!(
            "{verb} the daemon's own process files ({}), which hold its secrets such as the provider's API key",
            path.display()
        ))
    } else if path.starts_with(real(own.data_dir)) {
        Some(format!(
            "{verb} the daemon's data directory ({}: its database of every session, and its records)",
            path.display()
        ))
    } else if path == real(own.config_file) {
        Some(format!(
            "{verb} the daemon's configuration file ({})",
            path.display()
        ))
    } else {
        None
    };
    Target {
        path,
        outside_cwd,
        protected,
    }
}

/// `path` absolute and resolved: its longest existing ancestor through symbolic links
/// (`canonicalize`), the rest with `.` dropped and `..` applied, as the directories that
/// do not exist yet cannot be links.
fn real(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(found) = existing.canonicalize() {
            return rest.iter().rev().fold(found, |mut acc: PathBuf, part| {
                match part {
                    Component::ParentDir => {
                        acc.pop();
                    }
                    Component::Normal(name) => acc.push(name),
                    _ => {}
                }
                acc
            });
        }
        match (existing.parent(), existing.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                existing = parent;
            }
            // Nothing of it exists (not even `/`): as written.
            _ => return path.to_path_buf(),
        }
    }
}

/// Whether `path` (resolved) is under `/proc/<n>` for the daemon's pid or one of its
/// threads' ids (`/proc/self` and `/proc/thread-self` resolve to those).
fn daemon_process_files(path: &Path) -> bool {
    let mut parts = path.components();
    let (Some(Component::RootDir), Some(Component::Normal(proc)), Some(Component::Normal(id))) =
        (parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    if proc != OsStr::new("proc") || id.to_str().is_none_or(|id| id.parse::<u32>().is_err()) {
        return false;
    }
    id == OsStr::new(&std::process::id().to_string())
        || Path::new("/proc/self/task").join(id).exists()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn links_and_dots_are_resolved_and_the_daemons_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let cwd = root.join("work");
        let data = root.join("data");
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(root.join("config.toml"), "").unwrap();
        std::os::unix::fs::symlink(&root, cwd.join("up")).unwrap();
        let own = Own {
            data_dir: &data,
            config_file: &root.join("config.toml"),
        };
        let at = |p: &str| resolve(&cwd, p, true, &own);

        let t = at("new/dir/../file");
        assert_eq!((t.path, t.outside_cwd), (cwd.join("new/file"), false));
        assert!(t.protected.is_none());
        let t = at("../outside/x");
        assert_eq!((t.path, t.outside_cwd), (root.join("outside/x"), true));
        let t = at("up/elsewhere");
        assert_eq!((t.path, t.outside_cwd), (root.join("elsewhere"), true));
        let t = at("up/data/zeroclaw.db");
        assert!(t.protected.unwrap().contains("data directory"));
        let t = at("up/config.toml");
        assert!(t.protected.unwrap().contains("configuration file"));
        for p in [
            "/proc/self/environ",
            "/proc/thread-self/environ",
            &format!("/proc/{}/mem", std::process::id()),
        ] {
            let t = at(p);
            assert!(t.protected.unwrap().contains("process files"), "{p}");
        }
        assert!(at("/proc/1/environ").protected.is_none());
        assert!(at("/proc/self").protected.is_some());
    }
}

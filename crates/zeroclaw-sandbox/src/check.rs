//! The in-process checks for the file tools: the same rules as the kernel's, on a path
//! resolved the way the kernel resolves it.
//!
//! A path is resolved component by component from the working directory: every symlink on
//! the way (the last component too, dangling or not, since `open(O_CREAT)` follows it) is
//! replaced by its target, `..` goes up from where the walk really is, and the part that does
//! not exist yet is taken as written. So `cwd/link/x` with `link -> /etc` is `/etc/x`, and
//! `cwd/a/../../x` is the parent of cwd's `x`, as the kernel would see them.
//!
//! Rules, in this order (the first that matches refuses):
//!
//! | path (as given, or resolved)                  | read    | write   | refusal            |
//! |-----------------------------------------------|---------|---------|--------------------|
//! | under a hidden path                           | refused | refused | `Hidden`           |
//! | under `/dev`, but not one of [`DEVICES`]       | refused | refused | `Device`           |
//! | `/proc/self`, `/proc/thread-self`, `/proc/N`  | refused | refused | `Process`          |
//! | outside the writable set (but one of [`DEVICES`]) | allowed | refused | `Write`         |
//!
//! In mode `full` nothing is refused. The `/proc/N` rule is stricter than the kernel's for a
//! command (which may read its own `/proc/self`): the file tools run in the daemon, where
//! `/proc/self/environ` or `/proc/self/mem` would be the daemon's own secrets.
//!
//! Not closed here: the time between the check and the tool's own `open`. A sandboxed
//! background command could swap a checked directory for a symlink in that window; the
//! kernel's rules still bind that command, but not the daemon's file tool (docs/sandbox.md).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use crate::refusal::DEVICES;
use crate::{Mode, Refusal};

/// How many symlinks one resolution follows before it stops (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// A policy's paths, resolved once, for checking many paths (a `grep` over a tree).
#[derive(Debug, Clone)]
pub struct Checker {
    mode: Mode,
    cwd: PathBuf,
    writable: Vec<PathBuf>,
    hidden: Vec<PathBuf>,
}

impl Checker {
    /// The checks of a policy's parts ([`Policy::checker`](crate::Policy::checker)).
    pub(crate) fn new(
        mode: Mode,
        cwd: &Path,
        writable_roots: &[PathBuf],
        hidden: &[PathBuf],
    ) -> Self {
        let cwd = resolve_from(Path::new("/"), cwd);
        let writable = match mode {
            Mode::WorkspaceWrite => std::iter::once(cwd.clone())
                .chain(writable_roots.iter().map(|r| resolve_from(&cwd, r)))
                .collect(),
            Mode::ReadOnly | Mode::Full => Vec::new(),
        };
        let hidden = hidden
            .iter()
            .flat_map(|h| [resolve_from(&cwd, h), lexical(&cwd, h)])
            .collect();
        Checker {
            mode,
            cwd,
            writable,
            hidden,
        }
    }

    /// Adds a writable directory (a command's private temp dir).
    pub(crate) fn with_writable(mut self, dir: &Path) -> Self {
        self.writable.push(resolve_from(&self.cwd, dir));
        self
    }

    /// The mode the checks follow.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// `path` resolved as the kernel would from the working directory (see the module doc).
    pub fn resolve(&self, path: &Path) -> PathBuf {
        resolve_from(&self.cwd, path)
    }

    /// Whether the sandbox lets a tool read `path` (open, list, search). Returns the resolved
    /// path to use.
    pub fn check_read(&self, path: &Path) -> Result<PathBuf, Refusal> {
        let resolved = self.resolve(path);
        if self.mode == Mode::Full {
            return Ok(resolved);
        }
        self.refuse_special(path, resolved)
    }

    /// Whether the sandbox lets a tool write `path` (create, change, remove, rename). Returns
    /// the resolved path to use.
    pub fn check_write(&self, path: &Path) -> Result<PathBuf, Refusal> {
        let resolved = self.resolve(path);
        if self.mode == Mode::Full {
            return Ok(resolved);
        }
        let resolved = self.refuse_special(path, resolved)?;
        let device = cfg!(unix) && DEVICES.iter().any(|d| resolved == Path::new(d));
        if device || self.writable.iter().any(|w| resolved.starts_with(w)) {
            Ok(resolved)
        } else {
            Err(Refusal::Write {
                path: resolved,
                mode: self.mode,
            })
        }
    }

    /// Whether `path` (as given or resolved) is one of the hidden paths or under one.
    pub(crate) fn is_hidden(&self, given: &Path, resolved: &Path) -> bool {
        let given = lexical(&self.cwd, given);
        self.hidden
            .iter()
            .any(|h| given.starts_with(h) || resolved.starts_with(h))
    }

    fn refuse_special(&self, given: &Path, resolved: PathBuf) -> Result<PathBuf, Refusal> {
        if self.is_hidden(given, &resolved) {
            return Err(Refusal::Hidden { path: resolved });
        }
        if is_device(&resolved) {
            return Err(Refusal::Device { path: resolved });
        }
        if is_process_file(&resolved) {
            return Err(Refusal::Process {
                path: Some(resolved),
            });
        }
        Ok(resolved)
    }
}

/// Under `/dev` and not one of the allowed devices (`/dev` itself may be listed).
pub(crate) fn is_device(path: &Path) -> bool {
    cfg!(unix)
        && path.starts_with("/dev")
        && path != Path::new("/dev")
        && !DEVICES.iter().any(|d| path == Path::new(d))
}

/// `/proc/self`, `/proc/thread-self` or `/proc/<pid>`, or anything under them.
pub(crate) fn is_process_file(path: &Path) -> bool {
    if !cfg!(unix) {
        return false;
    }
    let Ok(rest) = path.strip_prefix("/proc") else {
        return false;
    };
    match rest.components().next() {
        Some(Component::Normal(name)) => {
            let name = name.to_string_lossy();
            name == "self"
                || name == "thread-self"
                || (!name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()))
        }
        _ => false,
    }
}

/// One step of a path still to walk.
enum Part {
    /// A root (with its prefix on Windows): the walk starts over there.
    Root(PathBuf),
    Parent,
    Name(OsString),
}

fn parts(path: &Path) -> Vec<Part> {
    let mut root = PathBuf::new();
    let mut out = Vec::new();
    for c in path.components() {
        match c {
            Component::Prefix(p) => root.push(p.as_os_str()),
            Component::RootDir => {
                root.push(Component::RootDir.as_os_str());
                out.push(Part::Root(std::mem::take(&mut root)));
            }
            Component::CurDir => {}
            Component::ParentDir => out.push(Part::Parent),
            Component::Normal(n) => out.push(Part::Name(n.to_os_string())),
        }
    }
    out
}

/// `path` (relative to `base`) resolved as the kernel would: see the module doc.
pub(crate) fn resolve_from(base: &Path, path: &Path) -> PathBuf {
    let start = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut queue: VecDeque<Part> = parts(&start).into();
    let mut out = PathBuf::new();
    let mut links = 0;
    // Once a component is missing, nothing below it exists: the rest is taken as written.
    let mut missing = false;
    while let Some(part) = queue.pop_front() {
        match part {
            Part::Root(root) => {
                out = root;
                missing = false;
            }
            Part::Parent => {
                out.pop();
                // `..` out of a missing directory may land back on existing ones.
                missing = missing && std::fs::symlink_metadata(&out).is_err();
            }
            Part::Name(name) => {
                let next = out.join(&name);
                if !missing && links < MAX_LINKS {
                    match std::fs::symlink_metadata(&next) {
                        Ok(meta) if meta.file_type().is_symlink() => {
                            if let Ok(target) = std::fs::read_link(&next) {
                                links += 1;
                                // A relative target is read from the link's directory (`out`).
                                for p in parts(&target).into_iter().rev() {
                                    queue.push_front(p);
                                }
                                continue;
                            }
                        }
                        Ok(_) => {}
                        Err(_) => missing = true,
                    }
                }
                out = next;
            }
        }
    }
    out
}

/// `path` made absolute from `base` with `.` and `..` removed by text alone, symlinks not
/// followed: the path as the caller named it.
fn lexical(base: &Path, path: &Path) -> PathBuf {
    let start = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut out = PathBuf::new();
    for part in parts(&start) {
        match part {
            Part::Root(root) => out = root,
            Part::Parent => {
                out.pop();
            }
            Part::Name(name) => out.push(name),
        }
    }
    out
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn resolution_follows_symlinks_and_dot_dot_like_the_kernel() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("w/sub")).unwrap();
        std::fs::create_dir_all(root.join("out")).unwrap();
        symlink(root.join("out"), root.join("w/link")).unwrap();
        symlink("../out/new", root.join("w/dangling")).unwrap();
        symlink("sub/..", root.join("w/up")).unwrap();
        let w = root.join("w");
        assert_eq!(resolve_from(&w, Path::new("link/x")), root.join("out/x"));
        assert_eq!(
            resolve_from(&w, Path::new("dangling")),
            root.join("out/new")
        );
        assert_eq!(
            resolve_from(&w, Path::new("../out/./y")),
            root.join("out/y")
        );
        assert_eq!(resolve_from(&w, Path::new("nope/../../z")), root.join("z"));
        assert_eq!(resolve_from(&w, Path::new("up/f")), root.join("w/f"));
        assert_eq!(resolve_from(&w, Path::new("/..")), PathBuf::from("/"));
    }

    #[test]
    fn a_symlink_loop_ends_instead_of_spinning() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        symlink("b", root.join("a")).unwrap();
        symlink("a", root.join("b")).unwrap();
        let resolved = resolve_from(&root, Path::new("a/x"));
        assert!(resolved.starts_with(&root), "{}", resolved.display());
    }

    #[test]
    fn process_files_and_devices_are_recognised() {
        assert!(is_process_file(Path::new("/proc/self/environ")));
        assert!(is_process_file(Path::new("/proc/123/mem")));
        assert!(!is_process_file(Path::new("/proc/cpuinfo")));
        assert!(is_device(Path::new("/dev/sda")));
        assert!(is_device(Path::new("/dev/pts/0")));
        assert!(!is_device(Path::new("/dev/null")));
        assert!(!is_device(Path::new("/dev")));
    }
}

//! Shared by the checkpoint tests: a store and a workspace in a temp dir, a full listing of
//! a tree (content hashes, modes, symlink targets), and the user's own git for the tests
//! that need a user repository.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};
use zeroclaw_checkpoint::{
    Checkpoints, Error, Options, RefName, Restore, RestoreOutcome, SnapshotId, Workspace,
};

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub engine: Checkpoints,
    pub ws: Workspace,
}

impl Fixture {
    /// A path in the workspace.
    pub fn at(&self, rel: &str) -> PathBuf {
        self.ws.path().join(rel)
    }
}

/// A fresh store and an empty workspace, or `None` where git cannot run (Windows under
/// Wine, which has no git: there "unavailable" is the expected outcome, checked here).
pub fn fixture(options: Options) -> Option<Fixture> {
    fixture_in(options, "ws")
}

pub fn fixture_in(options: Options, ws: &str) -> Option<Fixture> {
    let dir = tempfile::tempdir().unwrap();
    let engine = match Checkpoints::open(dir.path().join("store"), options) {
        Ok(engine) => engine,
        Err(Error::Unavailable { reason }) if cfg!(windows) => {
            eprintln!("SKIPPED: git is unavailable here ({reason})");
            return None;
        }
        Err(e) => panic!("the engine did not open: {e}"),
    };
    let ws_path = dir.path().join(ws);
    std::fs::create_dir_all(&ws_path).unwrap();
    let ws = engine.workspace(&ws_path).unwrap();
    Some(Fixture { dir, engine, ws })
}

pub fn name(s: &str) -> RefName {
    RefName::new(s).unwrap()
}

pub fn write(path: impl AsRef<Path>, content: impl AsRef<[u8]>) {
    let path = path.as_ref();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, content).unwrap();
}

#[cfg(unix)]
pub fn set_executable(path: impl AsRef<Path>, executable: bool) {
    use std::os::unix::fs::PermissionsExt;
    let mode = if executable { 0o755 } else { 0o644 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(unix)]
pub fn symlink(target: &str, link: impl AsRef<Path>) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// Bytes that do not compress: a xorshift stream.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// One entry of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Dir,
    File { sha256: String, mode: u32 },
    Symlink { target: PathBuf },
}

/// Everything under `root` (`.git` directories too), by relative path: directories, files with their content hash and permission bits, symlinks with
/// their targets (never followed).
pub fn listing(root: &Path) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let meta = path.symlink_metadata().unwrap();
        if meta.file_type().is_symlink() {
            out.insert(
                rel,
                Entry::Symlink {
                    target: std::fs::read_link(&path).unwrap(),
                },
            );
        } else if meta.is_dir() {
            out.insert(rel, Entry::Dir);
            walk(root, &path, out);
        } else {
            let sha256 = format!("{:x}", Sha256::digest(std::fs::read(&path).unwrap()));
            out.insert(
                rel,
                Entry::File {
                    sha256,
                    mode: mode(&meta),
                },
            );
        }
    }
}

#[cfg(unix)]
fn mode(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode(_meta: &std::fs::Metadata) -> u32 {
    0
}

/// Restores `target` without conflict checks and expects it to go ahead.
pub fn restore(
    ws: &Workspace,
    target: &SnapshotId,
    undo: &str,
) -> (SnapshotId, Vec<zeroclaw_checkpoint::Change>) {
    let outcome = ws
        .restore(&Restore {
            target: target.clone(),
            undo_ref: name(undo),
            gaps: Vec::new(),
            force: false,
        })
        .unwrap();
    match outcome {
        RestoreOutcome::Restored { undo, changes } => (undo, changes),
        RestoreOutcome::Refused { conflicts } => panic!("the restore was refused: {conflicts:?}"),
    }
}

/// The user's own git, as a user would run it in `dir`: their environment, minus what
/// could point it elsewhere, with a private HOME so this machine's config plays no part.
pub fn user_git(dir: &Path, home: &Path, args: &[&str]) -> String {
    let out = user_git_command(dir, home, args).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn user_git_command(dir: &Path, home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GIT_") {
            cmd.env_remove(key);
        }
    }
    cmd.current_dir(dir)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "User")
        .env("GIT_AUTHOR_EMAIL", "user@example.invalid")
        .env("GIT_COMMITTER_NAME", "User")
        .env("GIT_COMMITTER_EMAIL", "user@example.invalid")
        .args(args);
    cmd
}

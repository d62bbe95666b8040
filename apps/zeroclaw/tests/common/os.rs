//! The operating system's side of a test: processes, users, and the bytes left on disk.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether the process is gone (or a zombie nobody reaps yet).
#[cfg(target_os = "linux")]
pub fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Waits until a tool's shell has written its pid to `path` (whole: it writes a temp file
/// and renames it), and returns the pid.
pub fn wait_for_pid_file(path: &Path) -> u32 {
    super::poll_until(&format!("the pid file {}", path.display()), || {
        path.exists()
    });
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Whether this process runs as root.
#[cfg(unix)]
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// `setpriv` running `program args` as nobody:nogroup, or `None` (with the reason
/// printed) when this cannot be done here: not root, or no `setpriv`.
#[cfg(unix)]
pub fn as_nobody(program: &str, args: &[&str]) -> Option<Command> {
    if !is_root() {
        eprintln!("skipped: needs root to run a process as another user");
        return None;
    }
    let probe = Command::new("setpriv").arg("--version").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: setpriv (util-linux) is not installed");
        return None;
    }
    let mut cmd = Command::new("setpriv");
    cmd.args([
        "--reuid=nobody",
        "--regid=nogroup",
        "--clear-groups",
        "--",
        program,
    ])
    .args(args);
    Some(cmd)
}

/// Every file under `root`, read whole, with its path.
fn all_files(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                out.push((entry.path(), std::fs::read(entry.path()).unwrap()));
            }
        }
    }
    out
}

/// Asserts no file under `root` holds `secret`; returns the database files seen.
pub fn assert_no_file_holds(root: &Path, secret: &str) -> Vec<String> {
    let mut db = Vec::new();
    for (path, bytes) in all_files(root) {
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "the secret is in {}",
            path.display()
        );
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("zeroclaw.db") {
            db.push(name);
        }
    }
    db
}

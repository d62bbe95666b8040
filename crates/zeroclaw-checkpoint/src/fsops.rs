//! The file operations of a restore. Each file is written to a temporary file in its own
//! directory and renamed over its destination, so a reader (or a crash) sees the old file
//! or the new one, never half of one. No operation follows a symlink: every directory on
//! the way is checked with `lstat` first.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::paths;

/// Checks that every directory between `root` and the parent of `rel` (git's form) is a
/// real directory, creating the missing ones. Refuses a symlink or file on the way.
pub(crate) fn ensure_parents(root: &Path, rel: &[u8]) -> io::Result<()> {
    let mut dir = root.to_path_buf();
    for ancestor in paths::ancestors(rel) {
        dir.push(paths::from_bytes(last_part(ancestor)));
        match dir.symlink_metadata() {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(io::Error::other(format!(
                    "{} is not a directory (a restore never follows a symlink or replaces a file it did not capture)",
                    dir.display()
                )));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => std::fs::create_dir(&dir)?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn last_part(path: &[u8]) -> &[u8] {
    path.rsplit(|&b| b == b'/').next().unwrap_or(path)
}

/// Like `ensure_parents`, but creates nothing: whether every directory on the way is real.
pub(crate) fn parents_are_real_dirs(root: &Path, rel: &[u8]) -> io::Result<()> {
    let mut dir = root.to_path_buf();
    for ancestor in paths::ancestors(rel) {
        dir.push(paths::from_bytes(last_part(ancestor)));
        let meta = dir.symlink_metadata()?;
        if !meta.is_dir() {
            return Err(io::Error::other(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
    }
    Ok(())
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A new, unused temporary name beside `dest`.
fn temp_beside(dest: &Path) -> PathBuf {
    let name = dest
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    let mut tmp = OsString::from(".");
    tmp.push(name);
    tmp.push(format!(
        ".zeroclaw-restore-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    dest.with_file_name(tmp)
}

/// Writes a regular file atomically: `fill` writes the content into a temporary file,
/// which then gets its mode and replaces `dest`. (Not fsynced: a restore of 100 files
/// would wait on 100 flushes, and the snapshot it restores stays in the store.) A file being replaced keeps its
/// permission bits apart from the executable ones, which follow `executable` (set where
/// the file is readable, as git does); a new file gets the usual bits less the umask.
pub(crate) fn write_file(
    dest: &Path,
    executable: bool,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let previous = dest
        .symlink_metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.permissions());
    let tmp = temp_beside(dest);
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(if executable { 0o777 } else { 0o666 });
    }
    let result = (|| {
        let mut file = options.open(&tmp)?;
        fill(&mut file)?;
        #[cfg(unix)]
        if let Some(previous) = previous {
            use std::os::unix::fs::PermissionsExt;
            let old = previous.mode() & 0o7777;
            let mode = if executable {
                old | ((old & 0o444) >> 2)
            } else {
                old & !0o111
            };
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        #[cfg(not(unix))]
        let _ = (previous, executable);
        drop(file);
        std::fs::rename(&tmp, dest)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Makes `dest` a symlink to `target` (stored as it was, never resolved), atomically.
pub(crate) fn write_symlink(dest: &Path, target: &[u8]) -> io::Result<()> {
    let tmp = temp_beside(dest);
    let target = paths::from_bytes(target);
    #[cfg(unix)]
    std::os::unix::fs::symlink(&target, &tmp)?;
    #[cfg(windows)]
    std::os::windows::fs::symlink_file(&target, &tmp)?;
    let result = std::fs::rename(&tmp, dest);
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Removes a file or symlink (never what a symlink points to); one already gone is fine.
pub(crate) fn remove(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Every file or symlink under `dir`, relative to it in git's form, without following
/// symlinks; stops (returning `false`) as soon as `allowed` refuses one.
pub(crate) fn all_entries_allowed(
    dir: &Path,
    base: &[u8],
    allowed: &dyn Fn(&[u8]) -> bool,
) -> io::Result<bool> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let mut rel = base.to_vec();
        rel.push(b'/');
        rel.extend_from_slice(&paths::to_bytes(Path::new(&entry.file_name())));
        if entry.file_type()?.is_dir() {
            if !all_entries_allowed(&entry.path(), &rel, allowed)? {
                return Ok(false);
            }
        } else if !allowed(&rel) {
            return Ok(false);
        }
    }
    Ok(true)
}

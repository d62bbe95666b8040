//! Which tracked files changed since the index last saw them: one `lstat` each, compared
//! with the data git cached for the entry, as `git ls-files -m -d` decides it — minus the
//! process, which was half of an unchanged workspace's snapshot. Unix only (elsewhere git
//! does it: Windows' `lstat` data are not git's).
//!
//! Erring towards "changed" is safe: a path listed here is only hashed again by
//! `update-index`, which leaves an unchanged file's entry as it was. So a file is listed
//! when anything git compares differs, and when it is *racily clean* (changed in the same
//! second as the index was written, so equal stat data prove nothing).

use std::path::Path;

use crate::index::Entry;

/// The id of the empty blob (`git hash-object /dev/null`).
const EMPTY_BLOB: [u8; 20] = [
    0xe6, 0x9d, 0xe2, 0x9b, 0xb2, 0xd1, 0xd6, 0x43, 0x4b, 0x8b, 0x29, 0xae, 0x77, 0x5a, 0xd8, 0xc2,
    0xe4, 0x8c, 0x53, 0x91,
];

/// The paths (work-tree form) of the `entries` below `prefix` whose file is gone or whose
/// `lstat` differs from the cached one, in the index's order. `index_mtime` is the index
/// file's modification time in seconds. Two threads share the `lstat`s: on a VM a call
/// costs a microsecond or two, and a workspace has thousands.
pub(crate) fn changed(
    work_tree: &Path,
    entries: &[Entry],
    prefix: &[u8],
    index_mtime: i64,
) -> Vec<Vec<u8>> {
    use rustix::fs::{Mode, OFlags};
    let under: Vec<&Entry> = entries
        .iter()
        .filter(|e| {
            prefix.is_empty()
                || e.path
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.first() == Some(&b'/'))
        })
        .collect();
    // `lstat`s relative to the work tree, as git makes them: resolving the whole absolute
    // path each time costs more than the call.
    let Ok(root) = rustix::fs::open(
        work_tree,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        // No work tree: every entry is gone.
        return under.iter().map(|e| e.path.clone()).collect();
    };
    let check = |part: &[&Entry]| -> Vec<Vec<u8>> {
        part.iter()
            .filter(|e| differs(&root, e, index_mtime))
            .map(|e| e.path.clone())
            .collect()
    };
    let (first, second) = under.split_at(under.len() / 2);
    std::thread::scope(|scope| {
        let later = scope.spawn(|| check(second));
        let mut out = check(first);
        // A panicked half (it cannot: nothing in it panics) would list its entries whole.
        out.extend(
            later
                .join()
                .unwrap_or_else(|_| second.iter().map(|e| e.path.clone()).collect()),
        );
        out
    })
}

/// Whether `entry`'s file is gone, or changed as far as its `lstat` says.
fn differs(root: &rustix::fd::OwnedFd, entry: &Entry, index_mtime: i64) -> bool {
    use rustix::fs::{AtFlags, FileType};
    let meta = match rustix::fs::statat(root, entry.path.as_slice(), AtFlags::SYMLINK_NOFOLLOW) {
        Ok(meta) => meta,
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => return true,
        // Unreadable: git lists it neither, and the entry stays as it is.
        Err(_) => return false,
    };
    let file_type = FileType::from_raw_mode(meta.st_mode);
    let type_differs = match entry.mode {
        // core.fileMode: the owner's execute bit is part of the entry.
        0o100644 | 0o100755 => {
            file_type != FileType::RegularFile || (entry.mode ^ meta.st_mode) & 0o100 != 0
        }
        0o120000 => file_type != FileType::Symlink,
        _ => file_type != FileType::Directory,
    };
    let s = &entry.stat;
    // Git keeps 32 bits of each field; nanoseconds are 0 where git was built without them,
    // and then not compared.
    let time_differs = |cached: (u32, u32), sec: i64, nsec: i64| {
        cached.0 != sec as u32 || (cached.1 != 0 && cached.1 != nsec as u32)
    };
    #[allow(clippy::unnecessary_cast)] // the field types differ between targets
    let stat_differs = type_differs
        || time_differs(s.mtime, meta.st_mtime as i64, meta.st_mtime_nsec as i64)
        || time_differs(s.ctime, meta.st_ctime as i64, meta.st_ctime_nsec as i64)
        || s.ino != meta.st_ino as u32
        || s.uid != meta.st_uid as u32
        || s.gid != meta.st_gid as u32
        || s.size != meta.st_size as u32;
    // Git smudges a racily clean entry it found changed by zeroing its size: such an entry
    // is changed unless its blob is the empty one.
    let smudged = s.size == 0 && entry.oid != EMPTY_BLOB;
    // Changed in the second the index was written: equal stat data prove nothing.
    let racy = i64::from(s.mtime.0) >= index_mtime;
    stat_differs || smudged || racy
}

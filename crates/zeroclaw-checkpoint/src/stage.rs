//! Bringing the shadow index up to date in this process, in place of `git update-index`:
//! each path the walk found changed is opened once, hashed as a blob if it is new content,
//! and its index entry replaced (or removed); the new blobs go into the snapshot's one pack
//! with its trees (`trees.rs`), and the index is written whole (`index::encode`) after
//! the pack, so an index never names an object the store does not have.
//!
//! `update-index` was a process that read and rewrote the 10,000-entry index of a 10k-file
//! workspace for every turn, half of a snapshot's time (docs/benchmarks.md, issue 31). It
//! is still what runs where this cannot: on Windows (whose `lstat` data are not git's), for
//! an index this crate does not read, and when the files to hash add up to more than
//! [`MAX_BYTES`], which a pack built in memory should not hold.
//!
//! The bytes hashed are the file's own: the shadow repository turns every conversion
//! (end of line, filters) off, so git would hash the same.

use std::collections::HashMap;
use std::io::Read as _;

use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::index::{Entry, Stat};
use crate::omitted::{LargeFile, Omitted, Unreadable};
use crate::pack::{self, Kind, Oid};
use crate::paths;

/// The most bytes of files one snapshot hashes here; past it `git update-index` does (a
/// first snapshot of a large workspace), streaming each file instead of holding them.
pub(crate) const MAX_BYTES: u64 = 32 * 1024 * 1024;

/// New objects for the snapshot's pack.
pub(crate) type Objects = Vec<(Oid, Kind, Vec<u8>)>;

/// The index brought up to date.
pub(crate) struct Staged {
    /// The index's entries, in its order.
    pub entries: Vec<Entry>,
    /// The blobs they need that the index did not already name.
    pub objects: Objects,
    /// The paths (work-tree form) whose entry changed, sorted: what differs from the tree
    /// of the index as it was.
    pub changed: Vec<Changed>,
}

/// A path whose entry changed: its mode and object before and after (`None`: no entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Changed {
    pub path: Vec<u8>,
    pub old: Option<(u32, Oid)>,
    pub new: Option<(u32, Oid)>,
}

/// `entries` (the index, in its order) with `update` (hashed if present, removed if gone)
/// and `drop` (removed) applied. `root` is the work tree.
pub(crate) fn stage(
    root: &OwnedFd,
    mut entries: Vec<Entry>,
    update: &[Vec<u8>],
    drop: &[Vec<u8>],
    max_file_bytes: u64,
    omitted: &mut Omitted,
) -> Staged {
    let mut staged: HashMap<Vec<u8>, Option<Entry>> = HashMap::new();
    let mut objects: Objects = Vec::new();
    let mut changed = Vec::new();
    {
        let known: HashMap<&[u8], &Entry> =
            entries.iter().map(|e| (e.path.as_slice(), e)).collect();
        // What leaves the snapshot (a tracked file the ignore rules now cover) leaves it even
        // if it also changed, as `update-index --force-remove` after `--add` would have it.
        let dropped: std::collections::HashSet<&[u8]> = drop.iter().map(Vec::as_slice).collect();
        for path in update.iter().filter(|p| !dropped.contains(p.as_slice())) {
            let entry = match read(root, path, max_file_bytes) {
                Current::Content { mode, stat, bytes } => {
                    let oid = pack::oid(Kind::Blob, &bytes);
                    // Only a content the index did not have at this path is written: a
                    // file that was only touched, or changed back, adds nothing.
                    if known.get(path.as_slice()).is_none_or(|e| e.oid != oid) {
                        objects.push((oid, Kind::Blob, bytes));
                    }
                    Some(Entry {
                        mode,
                        oid,
                        path: path.clone(),
                        stat,
                    })
                }
                Current::Gone => None,
                Current::TooLarge(bytes) => {
                    omitted.too_large.push(LargeFile {
                        path: paths::relative(path),
                        bytes,
                    });
                    None
                }
                Current::Unreadable(reason) => {
                    omitted.unreadable.push(Unreadable {
                        path: paths::relative(path),
                        reason,
                    });
                    None
                }
            };
            staged.insert(path.clone(), entry);
        }
        for path in drop {
            staged.insert(path.clone(), None);
        }
        for (path, entry) in &staged {
            let old = known.get(path.as_slice()).map(|e| (e.mode, e.oid));
            let new = entry.as_ref().map(|e| (e.mode, e.oid));
            if old != new {
                changed.push(Changed {
                    path: path.clone(),
                    old,
                    new,
                });
            }
        }
    }
    let displaced = drop_conflicts(&mut entries, &staged);
    for displaced in displaced
        .into_iter()
        .filter(|e| !staged.contains_key(&e.path))
    {
        changed.push(Changed {
            path: displaced.path,
            old: Some((displaced.mode, displaced.oid)),
            new: None,
        });
    }
    entries.retain(|e| !staged.contains_key(&e.path));
    entries.extend(staged.into_values().flatten());
    entries.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    changed.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    // Two blobs of the same content, staged at two paths, go into the pack once.
    objects.sort_unstable_by_key(|(oid, _, _)| *oid);
    objects.dedup_by_key(|(oid, _, _)| *oid);
    Staged {
        entries,
        objects,
        changed,
    }
}

/// Removes the entries a staged file displaces, as `update-index --replace` does: the
/// files under a path that is now a file, and a file where a path now has a directory.
/// The walk normally lists them itself (gone), so this only matters when the workspace
/// changed while it ran. `entries` are in the index's order, so each is a binary search.
/// Returns the entries removed.
fn drop_conflicts(
    entries: &mut Vec<Entry>,
    staged: &HashMap<Vec<u8>, Option<Entry>>,
) -> Vec<Entry> {
    let mut displaced = vec![false; entries.len()];
    let mut any = false;
    for path in staged.iter().filter(|(_, e)| e.is_some()).map(|(p, _)| p) {
        let mut dir = path.clone();
        dir.push(b'/');
        let start = entries.partition_point(|e| e.path < dir);
        for (i, _) in entries[start..]
            .iter()
            .enumerate()
            .take_while(|(_, e)| e.path.starts_with(&dir))
        {
            displaced[start + i] = true;
            any = true;
        }
        for (slash, _) in path.iter().enumerate().filter(|&(_, &b)| b == b'/') {
            if let Ok(at) = entries.binary_search_by(|e| e.path.as_slice().cmp(&path[..slash])) {
                displaced[at] = true;
                any = true;
            }
        }
    }
    if !any {
        return Vec::new();
    }
    let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(entries)
        .into_iter()
        .zip(displaced)
        .partition(|(_, displaced)| *displaced);
    *entries = kept.into_iter().map(|(e, _)| e).collect();
    gone.into_iter().map(|(e, _)| e).collect()
}

/// What a path holds now.
enum Current {
    Content {
        mode: u32,
        stat: Stat,
        bytes: Vec<u8>,
    },
    Gone,
    TooLarge(u64),
    Unreadable(String),
}

/// Opens `path` (relative to `root`) without following a final symlink: a file is read
/// whole (after its `fstat`, as git takes the stat data before the content: a change while
/// reading leaves the entry's data older than the file, so the next walk hashes it again);
/// a symlink's content is its target.
fn read(root: &OwnedFd, path: &[u8], max_file_bytes: u64) -> Current {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    match rustix::fs::openat(root, path, flags, Mode::empty()) {
        Ok(fd) => read_open(fd, max_file_bytes),
        Err(Errno::LOOP) => read_link(root, path),
        Err(Errno::NOENT | Errno::NOTDIR) => Current::Gone,
        Err(e) => Current::Unreadable(std::io::Error::from(e).to_string()),
    }
}

fn read_open(fd: OwnedFd, max_file_bytes: u64) -> Current {
    let meta = match rustix::fs::fstat(&fd) {
        Ok(meta) => meta,
        Err(e) => return Current::Unreadable(std::io::Error::from(e).to_string()),
    };
    match FileType::from_raw_mode(meta.st_mode) {
        FileType::RegularFile => {}
        // A tracked file that became a directory: its entry goes, its files come as new.
        FileType::Directory => return Current::Gone,
        _ => return Current::Unreadable("not a regular file or symlink".into()),
    }
    #[allow(clippy::unnecessary_cast)] // st_size's type differs between targets
    let size = meta.st_size as u64;
    if size > max_file_bytes {
        return Current::TooLarge(size);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    let mut file = std::fs::File::from(fd);
    if let Err(e) = (&mut file).take(max_file_bytes + 1).read_to_end(&mut bytes) {
        return Current::Unreadable(e.to_string());
    }
    if bytes.len() as u64 > max_file_bytes {
        return Current::TooLarge(bytes.len() as u64);
    }
    let mode = if meta.st_mode & 0o100 != 0 {
        0o100755
    } else {
        0o100644
    };
    Current::Content {
        mode,
        stat: stat_of(&meta),
        bytes,
    }
}

fn read_link(root: &OwnedFd, path: &[u8]) -> Current {
    let meta = match rustix::fs::statat(root, path, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(meta) => meta,
        Err(Errno::NOENT | Errno::NOTDIR) => return Current::Gone,
        Err(e) => return Current::Unreadable(std::io::Error::from(e).to_string()),
    };
    if FileType::from_raw_mode(meta.st_mode) != FileType::Symlink {
        // Changed again since the open said it was a link: the next walk finds it.
        return Current::Unreadable("changed while the snapshot was taken".into());
    }
    match rustix::fs::readlinkat(root, path, Vec::new()) {
        Ok(target) => Current::Content {
            mode: 0o120000,
            stat: stat_of(&meta),
            bytes: target.into_bytes(),
        },
        Err(Errno::NOENT | Errno::NOTDIR) => Current::Gone,
        Err(e) => Current::Unreadable(std::io::Error::from(e).to_string()),
    }
}

/// The `lstat` data as git caches them: 32 bits a field.
#[allow(clippy::unnecessary_cast)] // the field types differ between targets
fn stat_of(meta: &rustix::fs::Stat) -> Stat {
    Stat {
        ctime: (meta.st_ctime as u32, meta.st_ctime_nsec as u32),
        mtime: (meta.st_mtime as u32, meta.st_mtime_nsec as u32),
        dev: meta.st_dev as u32,
        ino: meta.st_ino as u32,
        uid: meta.st_uid as u32,
        gid: meta.st_gid as u32,
        size: meta.st_size as u32,
    }
}

//! The project files a turn reads (instruction files, `SKILL.md`s, command files), read
//! again only when they change: each is kept with the (modification time, length) it had,
//! and a `stat` per file per turn tells whether that still holds.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// At most this many files are kept; past it the cache starts again empty (a daemon that
/// serves many projects reads their files once more, which is cheap).
const MAX_ENTRIES: usize = 1024;

/// A file's head as read.
#[derive(Debug, PartialEq)]
pub struct Text {
    /// At most the cap it was read with, cut at a character boundary; invalid UTF-8 replaced.
    pub text: String,
    /// Its size on disk.
    pub bytes: u64,
    /// Whether `text` is only its head.
    pub truncated: bool,
}

#[derive(Debug)]
struct Entry {
    modified: Option<SystemTime>,
    len: u64,
    cap: usize,
    text: Arc<Text>,
}

/// The cache, shared by every session of the daemon.
#[derive(Debug, Default)]
pub struct Files {
    entries: Mutex<HashMap<PathBuf, Entry>>,
}

impl Files {
    /// `path`'s first `cap` bytes; `None` if it is not a readable regular file (a missing
    /// file is the common case: most directories have no `AGENTS.md`). Blocking.
    pub fn read(&self, path: &Path, cap: usize) -> Option<Arc<Text>> {
        let meta = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
        let (modified, len) = (meta.modified().ok(), meta.len());
        if let Ok(entries) = self.entries.lock()
            && let Some(e) = entries.get(path)
            && e.modified == modified
            && e.len == len
            && e.cap == cap
        {
            return Some(e.text.clone());
        }
        let text = Arc::new(read_head(path, cap, len)?);
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
            entries.insert(
                path.to_path_buf(),
                Entry {
                    modified,
                    len,
                    cap,
                    text: text.clone(),
                },
            );
        }
        Some(text)
    }
}

/// The first `cap` bytes of `path` (whose size is `len`).
fn read_head(path: &Path, cap: usize, len: u64) -> Option<Text> {
    let file = std::fs::File::open(path).ok()?;
    let mut buf = Vec::new();
    let limit = u64::try_from(cap).unwrap_or(u64::MAX);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .ok()?;
    let truncated = buf.len() > cap;
    buf.truncate(cap);
    let mut text = String::from_utf8_lossy(&buf).into_owned();
    if truncated {
        // The cut may fall inside a character: drop its start rather than show U+FFFD.
        while text.ends_with('\u{fffd}') {
            text.pop();
        }
    }
    Some(Text {
        text,
        bytes: len.max(u64::try_from(buf.len()).unwrap_or(0)),
        truncated,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_file_is_read_again_only_when_its_length_or_time_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("AGENTS.md");
        let files = Files::default();
        assert!(files.read(&path, 100).is_none());
        std::fs::write(&path, "one").unwrap();
        let first = files.read(&path, 100).unwrap();
        assert!(Arc::ptr_eq(&first, &files.read(&path, 100).unwrap()));
        std::fs::write(&path, "three").unwrap();
        assert_eq!(files.read(&path, 100).unwrap().text, "three");
        let cut = files.read(&path, 2).unwrap();
        assert_eq!(
            (cut.text.as_str(), cut.bytes, cut.truncated),
            ("th", 5, true)
        );
    }
}

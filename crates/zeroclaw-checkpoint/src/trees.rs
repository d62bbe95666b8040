//! A snapshot's trees, built here from the shadow index and written as one pack, in place
//! of `git write-tree`, which writes every new tree as a loose object: a file (and often a
//! fan-out directory) each. A turn that changes files in 100 directories makes some 200
//! new trees, and on a file system where creating a file costs a fraction of a millisecond
//! those creations were most of the snapshot's time (docs/checkpoints.md, "Measured").
//!
//! Which trees the repository already has is remembered per repository (those of its last
//! snapshot here), so only new ones are packed; whatever is not remembered is packed again,
//! which costs a few bytes and is never wrong. Pruning (`git gc`) may delete trees, so it
//! renews the repository's generation file and the memory of that repository goes with it.
//! An index this crate's reader does not understand leaves the work to `git write-tree`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::Error;
use crate::index::{self, Entry};
use crate::pack::{self, Kind, Oid};
use crate::repo::Repo;

/// The file whose content names the repository's generation: new after every `git gc`.
const GENERATION: &str = "zeroclaw-generation";

/// The trees each repository is known to hold, by repository directory.
#[derive(Debug, Default)]
pub(crate) struct KnownTrees {
    by_repo: Mutex<HashMap<PathBuf, Known>>,
}

#[derive(Debug)]
struct Known {
    generation: String,
    trees: HashSet<Oid>,
    /// The tree of the index as this process last wrote it, and the index file's stamp
    /// then: while the file is as written, a snapshot staged here knows what it changed
    /// since that tree without asking git (`snapshot.rs`).
    index_tree: Option<(Oid, IndexStamp)>,
}

/// What tells one write of the index file from another: each write makes a new file
/// (written beside it, then renamed over it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) struct IndexStamp {
    pub len: u64,
    pub ino: u64,
    pub mtime: (i64, i64),
}

impl IndexStamp {
    /// The index file's stamp now, `None` without one.
    #[cfg(unix)]
    pub(crate) fn of(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).ok()?;
        Some(Self {
            len: meta.len(),
            ino: meta.ino(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
        })
    }
}

#[cfg(unix)] // where the index is staged here
impl KnownTrees {
    /// The tree of the index file if it is still as this process last wrote it.
    pub(crate) fn index_tree(&self, repo_dir: &Path, stamp: Option<IndexStamp>) -> Option<Oid> {
        let by_repo = self
            .by_repo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (tree, written) = by_repo.get(repo_dir)?.index_tree?;
        (Some(written) == stamp).then_some(tree)
    }

    /// Records the tree of the index this process just wrote (`None`: unknown, as after
    /// git wrote it).
    pub(crate) fn set_index_tree(&self, repo_dir: &Path, written: Option<(Oid, IndexStamp)>) {
        let mut by_repo = self
            .by_repo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(known) = by_repo.get_mut(repo_dir) {
            known.index_tree = written;
        }
    }
}

/// The tree of the workspace as the index has it, its new trees written; `None` when the
/// index is not one this crate reads (the caller runs `git write-tree`).
pub(crate) fn write_from_index(repo: &Repo, known: &KnownTrees) -> Result<Option<String>, Error> {
    let bytes = match std::fs::read(&repo.ctx.index) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io("read", &repo.ctx.index, e)),
    };
    let entries = if bytes.is_empty() {
        Vec::new()
    } else {
        match index::entries(&bytes) {
            Some(entries) => entries,
            None => return Ok(None),
        }
    };
    write(repo, known, &entries, Vec::new()).map(|root| Some(pack::hex(&root)))
}

/// The tree of `entries` (an index's, in its order), written with its new trees and
/// `objects` (blobs staged for it) as one pack.
pub(crate) fn write(
    repo: &Repo,
    known: &KnownTrees,
    entries: &[Entry],
    mut objects: Vec<(Oid, Kind, Vec<u8>)>,
) -> Result<Oid, Error> {
    let mut built = Vec::new();
    let root = build(&under(entries, &repo.record.prefix), &mut built);

    let generation = generation(&repo.dir)?;
    let mut by_repo = known
        .by_repo
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let known = by_repo.entry(repo.dir.clone()).or_insert_with(|| Known {
        generation: generation.clone(),
        trees: HashSet::new(),
        index_tree: None,
    });
    if known.generation != generation {
        known.generation = generation;
        known.trees.clear();
        known.index_tree = None;
    }
    let mut seen = HashSet::with_capacity(built.len());
    objects.extend(
        built
            .into_iter()
            .filter(|(id, _)| seen.insert(*id) && !known.trees.contains(id))
            .map(|(id, content)| (id, Kind::Tree, content)),
    );
    let dir = repo.dir.join("objects");
    pack::write(&dir, &objects).map_err(|e| Error::io("write a pack in", &dir, e))?;
    // The last snapshot's trees: what the next one most likely shares.
    known.trees = seen;
    // Whoever wrote the index (git, or the caller after this) says what its tree is.
    known.index_tree = None;
    Ok(root)
}

/// Renews the repository's generation, for after `git gc`: the trees it deleted may be ones
/// a process remembers.
pub(crate) fn new_generation(repo_dir: &Path) -> Result<(), Error> {
    let path = repo_dir.join(GENERATION);
    std::fs::write(&path, fresh_token()).map_err(|e| Error::io("write", &path, e))
}

fn generation(repo_dir: &Path) -> Result<String, Error> {
    let path = repo_dir.join(GENERATION);
    match std::fs::read_to_string(&path) {
        Ok(token) => Ok(token),
        // A repository made before generations (or just made): give it one.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let token = fresh_token();
            std::fs::write(&path, &token).map_err(|e| Error::io("write", &path, e))?;
            Ok(token)
        }
        Err(e) => Err(Error::io("read", &path, e)),
    }
}

/// A token no other generation has: this process, the time, and a count.
fn fresh_token() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!(
        "{}-{nanos}-{}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The entries below `prefix` (a work-tree path, empty for the whole work tree), with
/// paths relative to it.
fn under<'a>(entries: &'a [Entry], prefix: &[u8]) -> Vec<(&'a [u8], &'a Entry)> {
    if prefix.is_empty() {
        return entries.iter().map(|e| (e.path.as_slice(), e)).collect();
    }
    entries
        .iter()
        .filter_map(|e| {
            let rest = e.path.strip_prefix(prefix)?.strip_prefix(b"/")?;
            Some((rest, e))
        })
        .collect()
}

/// The tree of `entries` (paths relative to it, in the index's order, which is git's tree
/// order: a directory's entries are contiguous and sort as its name followed by `/`), and
/// each tree in it pushed to `out`; returns its id.
fn build(entries: &[(&[u8], &Entry)], out: &mut Vec<(Oid, Vec<u8>)>) -> Oid {
    let mut content = Vec::new();
    let mut i = 0;
    while i < entries.len() {
        let (path, entry) = entries[i];
        match path.iter().position(|&b| b == b'/') {
            None => {
                push_entry(&mut content, entry.mode, path, &entry.oid);
                i += 1;
            }
            Some(slash) => {
                let name = &path[..=slash]; // with its `/`
                let end = i + entries[i..]
                    .iter()
                    .take_while(|(p, _)| p.starts_with(name))
                    .count();
                let inner: Vec<(&[u8], &Entry)> = entries[i..end]
                    .iter()
                    .map(|(p, e)| (&p[name.len()..], *e))
                    .collect();
                let id = build(&inner, out);
                push_entry(&mut content, 0o40000, &name[..slash], &id);
                i = end;
            }
        }
    }
    let id = pack::oid(Kind::Tree, &content);
    out.push((id, content));
    id
}

fn push_entry(content: &mut Vec<u8>, mode: u32, name: &[u8], id: &Oid) {
    content.extend_from_slice(format!("{mode:o} ").as_bytes());
    content.extend_from_slice(name);
    content.push(0);
    content.extend_from_slice(id);
}

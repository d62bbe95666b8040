//! What changed in the workspace since the index last saw it (one `git ls-files` walk), and,
//! on request, what is ignored (another).
//!
//! The index is git's stat cache of the workspace as last snapshotted, so the walk lists
//! only what changed (`-m`, `-d`) and what is new (`-o`): an unchanged tree of 10k files
//! costs one `lstat` per file and no reads.

use std::path::PathBuf;

use crate::error::Error;
use crate::git::{Git, Stream};
use crate::paths;
use crate::repo::Repo;

/// Paths (work-tree form) that the walk found.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Tracked paths whose stat data or presence changed (modified, deleted, type changed).
    pub tracked: Vec<Vec<u8>>,
    /// Files and symlinks the index does not have, not ignored.
    pub untracked: Vec<Vec<u8>>,
    /// Directories holding a `.git` of their own (git will not descend into them).
    pub nested: Vec<Vec<u8>>,
    /// The index's entries, where this crate read them to compare (Unix): the snapshot
    /// stages its changes into them itself (`stage.rs`).
    pub index: Option<Vec<crate::index::Entry>>,
}

/// What the ignore rules leave out of the workspace's snapshots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IgnoredSummary {
    /// Ignored entries, a directory once for all it holds, sorted, at most the limit asked.
    pub entries: Vec<Ignored>,
    /// How many more there were.
    pub unlisted: usize,
}

/// An ignored file, or directory (with all it holds), relative to the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    pub path: PathBuf,
    pub directory: bool,
}

/// The number of entries in an index file (its header), 0 when there is none.
pub(crate) fn index_entries(repo: &Repo) -> Result<usize, Error> {
    let path = &repo.ctx.index;
    let mut header = [0u8; 12];
    let read = std::fs::File::open(path).and_then(|mut f| {
        use std::io::Read;
        f.read_exact(&mut header)
    });
    match read {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            return Err(index_damage(repo, "index file smaller than expected"));
        }
        Err(e) => return Err(Error::io("read", path, e)),
    }
    if &header[..4] != b"DIRC" {
        return Err(index_damage(repo, "index file has a bad signature"));
    }
    Ok(u32::from_be_bytes([header[8], header[9], header[10], header[11]]) as usize)
}

fn index_damage(repo: &Repo, detail: &str) -> Error {
    Error::Corrupt {
        repo: repo.dir.clone(),
        detail: detail.to_string(),
    }
}

/// The pathspec that limits a command to the workspace (none when it is the work tree).
pub(crate) fn pathspec(repo: &Repo) -> Vec<std::ffi::OsString> {
    let mut args = vec![std::ffi::OsString::from("--")];
    if !repo.record.prefix.is_empty() {
        args.push(paths::from_bytes(&repo.record.prefix).into_os_string());
    }
    args
}

/// Walks the workspace. Fails with `TooManyFiles` as soon as the index and the new files
/// together pass `max_files` (the walk is stopped, and nothing more is kept in memory).
///
/// Two walks run side by side: one compares every tracked file's `lstat` with the index
/// (here, `stat.rs`, where the index is one this crate reads on Unix; else
/// `git ls-files -m -d`), the other, `git ls-files -o`, reads the directories for new
/// files; on two cores the walk takes the time of the longer one.
pub(crate) fn walk(git: &Git, repo: &Repo, max_files: usize) -> Result<Found, Error> {
    let tracked_count = index_entries(repo)?;
    let command = |flags: &[&str]| {
        let mut args: Vec<std::ffi::OsString> = ["ls-files", "-z"]
            .iter()
            .chain(flags)
            .map(Into::into)
            .collect();
        args.extend(pathspec(repo));
        git.stream(&repo.ctx, &args)
    };
    let here = compared_here(repo);
    let git_compares = match here {
        Some(_) => None,
        None => Some(command(&["-m", "-d"])?),
    };
    let new = command(&["-o", "--exclude-standard"])?;
    let (tracked, untracked, nested) = std::thread::scope(|scope| {
        let tracked = scope.spawn(|| match (git_compares, &here) {
            (Some(changed), _) => read_tracked(changed),
            #[cfg(unix)]
            (None, Some((entries, mtime))) => Ok(crate::stat::changed(
                &repo.record.work_tree,
                entries,
                &repo.record.prefix,
                *mtime,
            )),
            // Git compares exactly when the index was not read here.
            _ => Ok(Vec::new()),
        });
        let new = read_untracked(new, tracked_count, max_files, repo);
        let tracked = tracked.join().unwrap_or_else(|_| {
            Err(Error::Git {
                command: "ls-files".into(),
                status: "its reader panicked".into(),
                stderr: String::new(),
            })
        });
        let (untracked, nested) = new?;
        Ok::<_, Error>((tracked?, untracked, nested))
    })?;
    Ok(Found {
        tracked,
        untracked,
        nested,
        index: here.map(|(entries, _)| entries),
    })
}

/// The index's entries and modification time (seconds), where this crate compares them
/// itself: an index `index::entries` reads (none yet is an empty one). Elsewhere git
/// compares them (`lstat` data there are not git's).
#[cfg(unix)]
fn compared_here(repo: &Repo) -> Option<(Vec<crate::index::Entry>, i64)> {
    let path = &repo.ctx.index;
    let mtime = match std::fs::metadata(path) {
        Ok(meta) => meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_secs(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some((Vec::new(), 0)),
        Err(_) => return None,
    };
    let bytes = std::fs::read(path).ok()?;
    let entries = crate::index::entries(&bytes)?;
    Some((entries, i64::try_from(mtime).ok()?))
}

#[cfg(not(unix))]
fn compared_here(_repo: &Repo) -> Option<(Vec<crate::index::Entry>, i64)> {
    None
}

/// Tracked paths whose `lstat` differs from the index or that are gone (a deleted file is
/// listed twice, as modified and deleted).
fn read_tracked(mut stream: Stream) -> Result<Vec<Vec<u8>>, Error> {
    let mut paths = Vec::new();
    let mut record = Vec::new();
    while stream.next_record(&mut record)? {
        paths.push(record.clone());
    }
    stream.finish()?;
    paths.sort();
    paths.dedup();
    Ok(paths)
}

type Paths = Vec<Vec<u8>>;

/// New files, and the nested repositories git shows as `dir/` without entering them.
fn read_untracked(
    mut stream: Stream,
    tracked: usize,
    max_files: usize,
    repo: &Repo,
) -> Result<(Paths, Paths), Error> {
    let (mut untracked, mut nested) = (Vec::new(), Vec::new());
    let mut record = Vec::new();
    while stream.next_record(&mut record)? {
        if let Some(dir) = record.strip_suffix(b"/") {
            nested.push(dir.to_vec());
            continue;
        }
        untracked.push(record.clone());
        if tracked + untracked.len() > max_files {
            stream.abandon();
            return Err(Error::TooManyFiles {
                workspace: repo.record.workspace.clone(),
                limit: max_files,
                found: tracked + untracked.len(),
            });
        }
    }
    stream.finish()?;
    Ok((untracked, nested))
}

/// The ignored entries of the workspace, at most `max_listed` of them listed.
pub(crate) fn ignored(git: &Git, repo: &Repo, max_listed: usize) -> Result<IgnoredSummary, Error> {
    let mut args: Vec<std::ffi::OsString> = [
        "ls-files",
        "-z",
        "-o",
        "-i",
        "--exclude-standard",
        "--directory",
    ]
    .iter()
    .map(Into::into)
    .collect();
    args.extend(pathspec(repo));
    summarise_ignored(git.stream(&repo.ctx, &args)?, repo, max_listed)
}

fn summarise_ignored(
    mut stream: Stream,
    repo: &Repo,
    max_listed: usize,
) -> Result<IgnoredSummary, Error> {
    let mut summary = IgnoredSummary::default();
    let mut record = Vec::new();
    // git lists an ignored directory and, after it, some of what it holds: one entry each.
    let mut last_dir: Option<Vec<u8>> = None;
    while stream.next_record(&mut record)? {
        if let Some(dir) = &last_dir
            && record.starts_with(dir)
        {
            continue;
        }
        let is_dir = record.ends_with(b"/");
        if is_dir {
            last_dir = Some(record.clone());
        }
        let Some(rel) = repo
            .record
            .strip(record.strip_suffix(b"/").unwrap_or(&record))
        else {
            continue;
        };
        if summary.entries.len() < max_listed {
            summary.entries.push(Ignored {
                path: paths::relative(rel),
                directory: is_dir,
            });
        } else {
            summary.unlisted += 1;
        }
    }
    stream.finish()?;
    Ok(summary)
}

//! What changed in the workspace since the index last saw it, and what is ignored: two
//! `git ls-files` walks, run side by side.
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
}

/// Ignored entries, workspace-relative: directories once for their whole content.
#[derive(Debug, Default)]
pub(crate) struct IgnoredSummary {
    pub listed: Vec<(PathBuf, bool)>,
    pub unlisted: usize,
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
pub(crate) fn walk(
    git: &Git,
    repo: &Repo,
    max_files: usize,
    max_ignored_listed: usize,
) -> Result<(Found, IgnoredSummary), Error> {
    let tracked_count = index_entries(repo)?;
    let mut args: Vec<std::ffi::OsString> = [
        "ls-files",
        "-z",
        "-t",
        "-m",
        "-d",
        "-o",
        "--exclude-standard",
    ]
    .iter()
    .map(Into::into)
    .collect();
    args.extend(pathspec(repo));
    let main = git.stream(&repo.ctx, &args)?;
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
    let ignored = git.stream(&repo.ctx, &args)?;

    std::thread::scope(|scope| {
        let ignored = scope.spawn(|| summarise_ignored(ignored, repo, max_ignored_listed));
        let found = read_changes(main, tracked_count, max_files, repo);
        let ignored = ignored.join().unwrap_or_else(|_| {
            Err(Error::Git {
                command: "ls-files".into(),
                status: "reader panicked".into(),
                stderr: String::new(),
            })
        });
        Ok((found?, ignored?))
    })
}

fn read_changes(
    mut stream: Stream,
    tracked: usize,
    max_files: usize,
    repo: &Repo,
) -> Result<Found, Error> {
    let mut found = Found::default();
    let mut record = Vec::new();
    while stream.next_record(&mut record)? {
        let (tag, path) = match record.split_first() {
            Some((&tag, rest)) if rest.first() == Some(&b' ') => (tag, rest[1..].to_vec()),
            _ => continue,
        };
        match tag {
            b'?' if path.ends_with(b"/") => {
                let mut path = path;
                path.pop();
                found.nested.push(path);
            }
            b'?' => {
                found.untracked.push(path);
                if tracked + found.untracked.len() > max_files {
                    stream.abandon();
                    return Err(Error::TooManyFiles {
                        workspace: repo.record.workspace.clone(),
                        limit: max_files,
                        found: tracked + found.untracked.len(),
                    });
                }
            }
            _ => found.tracked.push(path),
        }
    }
    stream.finish()?;
    found.tracked.sort();
    found.tracked.dedup();
    Ok(found)
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
        if summary.listed.len() < max_listed {
            summary.listed.push((paths::relative(rel), is_dir));
        } else {
            summary.unlisted += 1;
        }
    }
    stream.finish()?;
    Ok(summary)
}

//! Taking a snapshot: bring the shadow index up to date with the workspace (only what the
//! walk found changed is read and hashed: here, `stage.rs`, or by `git update-index`),
//! then write its trees (`trees.rs`).

use std::ffi::OsString;

#[cfg(unix)]
use crate::diff::ChangeKind;
use crate::diff::{Change, RawChange};
use crate::error::Error;
use crate::fsops;
use crate::git::{self, Git};
use crate::ids::SnapshotId;
use crate::omitted::{LargeFile, Omitted, Unreadable};
#[cfg(unix)]
use crate::pack;
use crate::paths;
use crate::repo::Repo;
use crate::scan::{self, Found};
use crate::trees::{self, KnownTrees};

/// A snapshot just taken.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub id: SnapshotId,
    /// How many files (and symlinks) it holds.
    pub files: usize,
    /// What differs from the parent snapshot the caller named (empty without one).
    pub changes: Vec<Change>,
    /// What it left out.
    pub omitted: Omitted,
}

/// A snapshot before its ref exists.
#[derive(Debug)]
pub(crate) struct Captured {
    pub id: SnapshotId,
    pub files: usize,
    pub omitted: Omitted,
    /// What changed since the snapshot named, when staging knew it (`stage_here`): the
    /// answer `git diff-tree` would give from that snapshot to this one.
    pub since: Option<(SnapshotId, Vec<RawChange>)>,
}

/// The index brought up to date and its tree written.
struct Done {
    /// The tree's id (hex).
    id: String,
    files: usize,
    /// The tree the index held before (hex), and what changed since.
    since: Option<(String, Vec<RawChange>)>,
}

/// Past this many files to hash at once, git writes them into one pack instead of one loose
/// object file each (bulk check-in): creating files is what costs most on a slow file
/// system, so a turn that changed 100 files makes two files in the store, not 100 (and a
/// first snapshot of 10k files a few, not 10k). Below it, loose objects are as cheap and
/// leave no small pack behind.
const BULK: usize = 16;

pub(crate) struct Limits {
    pub max_file_bytes: u64,
    pub max_files: usize,
}

/// Captures the workspace's current state. A damaged index (a cache) is rebuilt once.
pub(crate) fn capture(
    git: &Git,
    repo: &Repo,
    known: &KnownTrees,
    limits: &Limits,
    rules_changed: bool,
) -> Result<Captured, Error> {
    match capture_once(git, repo, known, limits, rules_changed) {
        Err(Error::Corrupt { detail, .. }) if git::is_index_damage(&detail) => {
            std::fs::remove_file(&repo.ctx.index)
                .map_err(|e| Error::io("remove", &repo.ctx.index, e))?;
            capture_once(git, repo, known, limits, true)
        }
        other => other,
    }
}

fn capture_once(
    git: &Git,
    repo: &Repo,
    known: &KnownTrees,
    limits: &Limits,
    rules_changed: bool,
) -> Result<Captured, Error> {
    let mut found = scan::walk(git, repo, limits.max_files)?;
    let mut omitted = Omitted::default();
    let rules_changed = rules_changed
        || found
            .tracked
            .iter()
            .chain(&found.untracked)
            .any(|p| p.rsplit(|&b| b == b'/').next() == Some(b".gitignore"));
    // (`bytes` decides whether the changes are staged here, which is Unix only.)
    #[cfg_attr(not(unix), allow(unused_variables))]
    let Sorted {
        update,
        mut drop,
        bytes,
    } = sort(repo, &found, limits.max_file_bytes, &mut omitted);
    for nested in &found.nested {
        if let Some(rel) = repo.record.strip(nested) {
            omitted.nested_repositories.push(paths::relative(rel));
        }
    }
    if rules_changed {
        // Tracked files that the ignore rules now cover leave the snapshot, as a fresh
        // `git add` of the workspace would not take them.
        let mut args: Vec<OsString> = ["ls-files", "-z", "-c", "-i", "--exclude-standard"]
            .iter()
            .map(Into::into)
            .collect();
        args.extend(scan::pathspec(repo));
        let out = git.run(&repo.ctx, &args, None)?;
        drop.extend(
            out.split(|&b| b == 0)
                .filter(|p| !p.is_empty())
                .map(<[u8]>::to_vec),
        );
    }
    let staged_here = match found.index.take() {
        #[cfg(unix)]
        Some(entries) if bytes <= crate::stage::MAX_BYTES => Some(stage_here(
            repo,
            known,
            entries,
            &update,
            &drop,
            limits,
            &mut omitted,
        )?),
        _ => None,
    };
    let done = match staged_here {
        Some(done) => done,
        None => stage_with_git(git, repo, known, &update, &drop)?,
    };
    let id = SnapshotId::parse(done.id.trim())?;
    let since = match done.since {
        Some((base, changes)) => Some((SnapshotId::parse(&base)?, changes)),
        None => None,
    };
    omitted.nested_repositories.sort();
    omitted.too_large.sort_by(|a, b| a.path.cmp(&b.path));
    omitted.unreadable.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Captured {
        id,
        files: done.files,
        omitted,
        since,
    })
}

/// Stages the changes here (`stage.rs`), writes the pack (its blobs and trees), then the
/// index.
#[cfg(unix)]
fn stage_here(
    repo: &Repo,
    known: &KnownTrees,
    entries: Vec<crate::index::Entry>,
    update: &[Vec<u8>],
    drop: &[Vec<u8>],
    limits: &Limits,
    omitted: &mut Omitted,
) -> Result<Done, Error> {
    use rustix::fs::{Mode, OFlags};
    let work_tree = &repo.record.work_tree;
    let root = rustix::fs::open(
        work_tree,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Error::io("open", work_tree, e.into()))?;
    let index = &repo.ctx.index;
    // The tree the index holds now, if this process wrote it: what the staged changes are
    // changes from.
    let base = known.index_tree(&repo.dir, trees::IndexStamp::of(index));
    let staged = crate::stage::stage(&root, entries, update, drop, limits.max_file_bytes, omitted);
    let root_tree = trees::write(repo, known, &staged.entries, staged.objects)?;
    // The index only after the pack: an index that names an object the store lacks would
    // make every later snapshot name it too.
    let mut temporary = index.as_os_str().to_owned();
    temporary.push(".zeroclaw-new");
    let temporary = std::path::PathBuf::from(temporary);
    std::fs::write(&temporary, crate::index::encode(&staged.entries))
        .and_then(|()| std::fs::rename(&temporary, index))
        .map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            Error::io("write", index, e)
        })?;
    let written = trees::IndexStamp::of(index).map(|stamp| (root_tree, stamp));
    known.set_index_tree(&repo.dir, written);
    let since = base.map(|base| {
        let changes = staged
            .changed
            .iter()
            .filter_map(|c| raw_change(repo, c))
            .collect();
        (pack::hex(&base), changes)
    });
    Ok(Done {
        id: pack::hex(&root_tree),
        files: staged.entries.len(),
        since,
    })
}

/// A staged change as `git diff-tree` would list it between the two trees.
#[cfg(unix)]
fn raw_change(repo: &Repo, changed: &crate::stage::Changed) -> Option<RawChange> {
    let path = repo.record.strip(&changed.path)?.to_vec();
    let (kind, (new_mode, new_oid)) = match (changed.old, changed.new) {
        (None, Some(new)) => (ChangeKind::Added, new),
        (Some(_), Some(new)) => (ChangeKind::Modified, new),
        (Some(_), None) => (ChangeKind::Deleted, (0, [0; 20])),
        (None, None) => return None,
    };
    Some(RawChange {
        path,
        kind,
        new_mode,
        new_oid: pack::hex(&new_oid),
    })
}

/// Stages the changes with `git update-index`, then writes the trees.
fn stage_with_git(
    git: &Git,
    repo: &Repo,
    known: &KnownTrees,
    update: &[Vec<u8>],
    drop: &[Vec<u8>],
) -> Result<Done, Error> {
    if !update.is_empty() {
        let mut args: Vec<&str> = Vec::new();
        if update.len() > BULK {
            // Unsynced, as the trees' pack is (`pack.rs`).
            args.extend(["-c", "core.bigFileThreshold=1", "-c", "core.fsync=none"]);
        }
        args.extend([
            "update-index",
            "-z",
            "--add",
            "--remove",
            "--replace",
            "--stdin",
        ]);
        git.run(&repo.ctx, &args, Some(&nul_list(update)))?;
    }
    if !drop.is_empty() {
        git.run(
            &repo.ctx,
            ["update-index", "-z", "--force-remove", "--stdin"],
            Some(&nul_list(drop)),
        )?;
    }
    let files = scan::index_entries(repo)?;
    let id = match trees::write_from_index(repo, known)? {
        Some(id) => id,
        None => String::from_utf8_lossy(&write_tree(git, repo, files)?).into_owned(),
    };
    Ok(Done {
        id,
        files,
        since: None,
    })
}

/// The index's tree as git writes it (one loose object per new tree), for an index
/// `trees::write` does not read.
fn write_tree(git: &Git, repo: &Repo, files: usize) -> Result<Vec<u8>, Error> {
    if files == 0 {
        git.run(&repo.ctx, ["mktree", "-z"], Some(b""))
    } else if repo.record.prefix.is_empty() {
        git.run(&repo.ctx, ["write-tree"], None)
    } else {
        let mut prefix = OsString::from("--prefix=");
        prefix.push(paths::from_bytes(&repo.record.prefix));
        prefix.push("/");
        git.run(&repo.ctx, [OsString::from("write-tree"), prefix], None)
    }
}

struct Sorted {
    /// For `update-index --add --remove`: hashed if present, removed if gone.
    update: Vec<Vec<u8>>,
    /// For `update-index --force-remove`: out of the snapshot although present.
    drop: Vec<Vec<u8>>,
    /// The size of the regular files in `update`, as their `lstat` said.
    bytes: u64,
}

/// Decides, with one `lstat` each, what happens to every path the walk found.
fn sort(repo: &Repo, found: &Found, max_file_bytes: u64, omitted: &mut Omitted) -> Sorted {
    let mut sorted = Sorted {
        update: Vec::new(),
        drop: Vec::new(),
        bytes: 0,
    };
    let candidates = found
        .tracked
        .iter()
        .map(|p| (p, true))
        .chain(found.untracked.iter().map(|p| (p, false)));
    for (path, tracked) in candidates {
        let full = repo.record.work_tree.join(paths::relative(path));
        let rel = || paths::relative(repo.record.strip(path).unwrap_or(path));
        // A tracked path under what is now a symlink (or a file) is out of the snapshot: git
        // would refuse it ("beyond a symbolic link"), and it is no longer there.
        let beyond_a_link = tracked
            && fsops::parents_are_real_dirs(&repo.record.work_tree, path)
                .is_err_and(|e| e.kind() != std::io::ErrorKind::NotFound);
        let keep = match full.symlink_metadata() {
            _ if beyond_a_link => false,
            // Gone: the index entry goes too.
            Err(_) => tracked,
            Ok(meta) if meta.file_type().is_symlink() => true,
            // A tracked file that became a directory: its entry goes, its files come as new.
            Ok(meta) if meta.is_dir() => tracked,
            Ok(meta) if meta.is_file() && meta.len() > max_file_bytes => {
                omitted.too_large.push(LargeFile {
                    path: rel(),
                    bytes: meta.len(),
                });
                false
            }
            Ok(meta) if meta.is_file() => match std::fs::File::open(&full) {
                Ok(_) => {
                    sorted.bytes += meta.len();
                    true
                }
                Err(e) => {
                    omitted.unreadable.push(Unreadable {
                        path: rel(),
                        reason: e.to_string(),
                    });
                    false
                }
            },
            Ok(_) => {
                omitted.unreadable.push(Unreadable {
                    path: rel(),
                    reason: "not a regular file or symlink".into(),
                });
                false
            }
        };
        match (keep, tracked) {
            (true, _) => sorted.update.push(path.clone()),
            (false, true) => sorted.drop.push(path.clone()),
            (false, false) => {}
        }
    }
    sorted
}

fn nul_list(paths: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(paths.iter().map(|p| p.len() + 1).sum());
    for p in paths {
        out.extend_from_slice(p);
        out.push(0);
    }
    out
}

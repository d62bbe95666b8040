//! Restoring a workspace to a snapshot: plan (what changes, what is in the way), then
//! apply (deletions first, then every file written atomically).

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use crate::blobs::Blobs;
use crate::conflict::{self, Conflict, ConflictReason, Gap};
use crate::diff::{self, Change, ChangeKind, MODE_EXECUTABLE, MODE_FILE, MODE_SYMLINK, RawChange};
use crate::error::Error;
use crate::fsops;
use crate::git::Git;
use crate::ids::{RefName, SnapshotId};
use crate::paths;
use crate::repo::Repo;

/// A restore to ask for.
#[derive(Debug, Clone)]
pub struct Restore {
    /// The snapshot the workspace is to equal.
    pub target: SnapshotId,
    /// The ref that keeps the undo snapshot (the state found before restoring) alive.
    pub undo_ref: RefName,
    /// The gaps between the turns since `target` (oldest first, or in any order): what
    /// changed in them was changed outside the agent, and is a conflict if the restore
    /// would change it. Empty: no conflict check on edits.
    pub gaps: Vec<Gap>,
    /// Overwrite conflicting paths (all but `Blocked` ones) instead of refusing.
    pub force: bool,
}

/// What a restore would do, without doing it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestorePlan {
    /// What the restore would do to each path (`Added`: created, `Deleted`: removed).
    pub changes: Vec<Change>,
    pub conflicts: Vec<Conflict>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestoreOutcome {
    /// Done. `undo` is the state found before restoring (kept alive by `undo_ref`):
    /// restoring it undoes this restore. `changes` is what was done to each path.
    Restored {
        undo: SnapshotId,
        changes: Vec<Change>,
    },
    /// Nothing was changed (and no undo ref created): these paths are in the way. A
    /// forced restore overwrites all but the `Blocked` ones.
    Refused { conflicts: Vec<Conflict> },
}

/// The longest symlink target restored (far beyond any system's PATH_MAX).
const SYMLINK_TARGET_MAX: u64 = 64 * 1024;

pub(crate) struct Plan {
    pub raw: Vec<RawChange>,
    pub conflicts: Vec<Conflict>,
}

impl Plan {
    pub(crate) fn public(&self) -> RestorePlan {
        RestorePlan {
            changes: self.raw.iter().map(RawChange::public).collect(),
            conflicts: self.conflicts.clone(),
        }
    }

    /// Whether the restore must not go ahead.
    pub(crate) fn refused(&self, force: bool) -> bool {
        self.conflicts
            .iter()
            .any(|c| !force || !c.reason.forceable())
    }
}

/// What a restore from `current` (the state just captured) to `target` would change, and
/// what is in its way.
pub(crate) fn plan(
    git: &Git,
    repo: &Repo,
    current: &SnapshotId,
    target: &SnapshotId,
    gaps: &[Gap],
) -> Result<Plan, Error> {
    let ctx = &repo.ctx;
    let raw = diff::raw(git, ctx, current, target)?;
    let outside = conflict::outside_edits(git, ctx, gaps, Some(current))?;
    let deleted: HashSet<&[u8]> = raw
        .iter()
        .filter(|c| c.kind == ChangeKind::Deleted)
        .map(|c| c.path.as_slice())
        .collect();
    let root = &repo.record.workspace;
    let mut blobs: Option<Blobs> = None;
    let mut conflicts = Vec::new();
    for change in &raw {
        let conflict = |reason| Conflict {
            path: paths::relative(&change.path),
            reason,
        };
        if outside.contains(&change.path) {
            conflicts.push(conflict(ConflictReason::EditedOutside));
        }
        if change.kind == ChangeKind::Deleted {
            continue;
        }
        if let Some(reason) = in_the_way(root, change, &deleted, git, repo, &mut blobs)? {
            conflicts.push(conflict(reason));
        }
    }
    Ok(Plan {
        raw,
        conflicts: conflict::merge(conflicts),
    })
}

/// What, on disk, stands where `change` is to be written and is not in the current
/// snapshot.
fn in_the_way(
    root: &Path,
    change: &RawChange,
    deleted: &HashSet<&[u8]>,
    git: &Git,
    repo: &Repo,
    blobs: &mut Option<Blobs>,
) -> Result<Option<ConflictReason>, Error> {
    let mut dir = root.to_path_buf();
    for ancestor in paths::ancestors(&change.path) {
        dir.push(paths::relative(ancestor).file_name().unwrap_or_default());
        match dir.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("inspect", &dir, e)),
            Ok(meta) if meta.is_dir() => {}
            // A captured file or symlink where the target has a directory: removed first.
            Ok(_) if deleted.contains(ancestor) => return Ok(None),
            Ok(_) => return Ok(Some(ConflictReason::Blocked)),
        }
    }
    if change.kind != ChangeKind::Added {
        return Ok(None);
    }
    let dest = root.join(paths::relative(&change.path));
    let meta = match dest.symlink_metadata() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("inspect", &dest, e)),
        Ok(meta) => meta,
    };
    if meta.is_dir() {
        // Empty once its captured files are removed, or in the way.
        let empties = fsops::all_entries_allowed(&dest, &change.path, &|p| deleted.contains(p))
            .map_err(|e| Error::io("read", &dest, e))?;
        return Ok((!empties).then_some(ConflictReason::Blocked));
    }
    if blobs.is_none() {
        *blobs = Some(Blobs::start(git, &repo.ctx)?);
    }
    let Some(blobs) = blobs.as_mut() else {
        return Ok(Some(ConflictReason::NotCaptured));
    };
    let same =
        same_content(&dest, &meta, change, blobs).map_err(|e| Error::io("compare", &dest, e))?;
    Ok((!same).then_some(ConflictReason::NotCaptured))
}

/// Whether an uncaptured file already holds exactly what the restore would write.
fn same_content(
    dest: &Path,
    meta: &std::fs::Metadata,
    change: &RawChange,
    blobs: &mut Blobs,
) -> std::io::Result<bool> {
    if change.new_mode == MODE_SYMLINK {
        if !meta.file_type().is_symlink() {
            return Ok(false);
        }
        let target = paths::to_bytes(&std::fs::read_link(dest)?);
        return Ok(
            blobs.read(&change.new_oid, SYMLINK_TARGET_MAX)?.as_deref() == Some(target.as_slice())
        );
    }
    if !meta.is_file() {
        return Ok(false);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let executable = meta.permissions().mode() & 0o111 != 0;
        if executable != (change.new_mode == MODE_EXECUTABLE) {
            return Ok(false);
        }
    }
    let Some(blob) = blobs.read(&change.new_oid, meta.len())? else {
        return Ok(false);
    };
    Ok(blob.len() as u64 == meta.len() && std::fs::read(dest)? == blob)
}

/// Applies a plan whose conflicts were accepted. Fails part-way only on an I/O error,
/// naming `undo` so the caller can put everything back.
pub(crate) fn apply(
    git: &Git,
    repo: &Repo,
    plan: &Plan,
    target: &SnapshotId,
    undo: &SnapshotId,
) -> Result<Vec<Change>, Error> {
    let root = &repo.record.workspace;
    let target_dirs = directories(git, repo, target)?;
    let mut done: Vec<Change> = Vec::new();
    let failed = |done: &[Change], path: &[u8], source| Error::RestoreFailed {
        undo: undo.clone(),
        done: done.len(),
        path: root.join(paths::relative(path)),
        source,
    };

    let mut emptied = BTreeSet::new();
    for change in plan.raw.iter().filter(|c| c.kind == ChangeKind::Deleted) {
        fsops::parents_are_real_dirs(root, &change.path)
            .and_then(|()| fsops::remove(&root.join(paths::relative(&change.path))))
            .map_err(|e| failed(&done, &change.path, e))?;
        emptied.extend(paths::ancestors(&change.path).map(<[u8]>::to_vec));
        done.push(change.public());
    }
    // Directories left empty go, deepest first, unless the target has files in them; a
    // directory with anything left in it (an ignored file) stays.
    let mut emptied: Vec<Vec<u8>> = emptied
        .into_iter()
        .filter(|d| !target_dirs.contains(d))
        .collect();
    emptied.sort_by_key(|d| Reverse(d.iter().filter(|&&b| b == b'/').count()));
    for dir in emptied {
        let _ = std::fs::remove_dir(root.join(paths::relative(&dir)));
    }

    let mut blobs = Blobs::start(git, &repo.ctx)?;
    for change in plan.raw.iter().filter(|c| c.kind != ChangeKind::Deleted) {
        let dest = root.join(paths::relative(&change.path));
        write(root, &dest, change, &mut blobs).map_err(|e| failed(&done, &change.path, e))?;
        done.push(change.public());
    }
    done.sort();
    Ok(done)
}

fn write(root: &Path, dest: &Path, change: &RawChange, blobs: &mut Blobs) -> std::io::Result<()> {
    fsops::ensure_parents(root, &change.path)?;
    if dest.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir(dest)?;
    }
    match change.new_mode {
        MODE_SYMLINK => {
            let target = blobs
                .read(&change.new_oid, SYMLINK_TARGET_MAX)?
                .ok_or_else(|| std::io::Error::other("the symlink's target is too long"))?;
            fsops::write_symlink(dest, &target)
        }
        MODE_FILE | MODE_EXECUTABLE => {
            fsops::write_file(dest, change.new_mode == MODE_EXECUTABLE, |file| {
                blobs.copy(&change.new_oid, file).map(|_| ())
            })
        }
        other => Err(std::io::Error::other(format!(
            "the snapshot holds an entry of mode {other:o}, which is never captured"
        ))),
    }
}

/// Every directory of a snapshot (git's form).
fn directories(git: &Git, repo: &Repo, tree: &SnapshotId) -> Result<HashSet<Vec<u8>>, Error> {
    let out = git.run(
        &repo.ctx,
        ["ls-tree", "-r", "-d", "-z", "--name-only", tree.as_str()],
        None,
    )?;
    Ok(out
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(<[u8]>::to_vec)
        .collect())
}

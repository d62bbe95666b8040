//! One workspace's checkpoints: every operation takes the workspace's lock, opens (or
//! creates) its shadow repository, and does its work with git.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::conflict::{self, Gap};
use crate::diff::{self, Change, RawChange};
use crate::engine::Engine;
use crate::error::Error;
use crate::excludes;
use crate::git::Context;
use crate::ids::{RefName, SnapshotId};
use crate::layout::RepoLock;
use crate::paths;
use crate::prune::{self, Pruned};
use crate::repo::Repo;
use crate::restore::{self, Restore, RestoreOutcome, RestorePlan};
use crate::scan::{self, IgnoredSummary};
use crate::snapshot::{self, Captured, Snapshot};

/// A workspace (a directory, canonical) and its shadow repository. Cheap to clone; every
/// method blocks (git runs as a child process) and is safe to call from several threads
/// and processes at once: they take turns on the workspace's lock.
#[derive(Debug, Clone)]
pub struct Workspace {
    engine: Arc<Engine>,
    path: PathBuf,
    key: String,
}

/// The lock, the repository, and the engine, for the length of one operation.
struct Session<'a> {
    engine: &'a Engine,
    repo: Repo,
    _lock: RepoLock,
}

impl Workspace {
    pub(crate) fn new(engine: Arc<Engine>, path: PathBuf, key: String) -> Self {
        Self { engine, path, key }
    }

    /// The workspace's canonical path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where its shadow repository is (or will be).
    pub fn store_dir(&self) -> PathBuf {
        self.engine.layout.repo(&self.key)
    }

    /// Snapshots the workspace and points `name` at the snapshot (replacing what it named).
    /// With `parent`, the result lists what changed since that snapshot; a `parent` the
    /// store does not hold is `UnknownSnapshot` (the snapshot is taken all the same, and
    /// `name` names it).
    pub fn snapshot(&self, name: &RefName, parent: Option<&SnapshotId>) -> Result<Snapshot, Error> {
        let ask = (name.clone(), parent.cloned());
        let mut answers = self.snapshot_many(std::slice::from_ref(&ask))?;
        answers
            .pop()
            .unwrap_or_else(|| unreachable!("one answer per ask"))
    }

    /// Snapshots the workspace once for several asks, as `snapshot` does for each: every
    /// name points at the one snapshot (set in one `update-ref`), and each ask with a parent
    /// gets its own changes. What fails for the whole capture is the `Err`; a parent the
    /// store does not hold fails only its own ask. For many turns in one workspace at once
    /// (they would otherwise take turns on its lock, each walking it).
    pub fn snapshot_many(
        &self,
        asks: &[(RefName, Option<SnapshotId>)],
    ) -> Result<Vec<Result<Snapshot, Error>>, Error> {
        let session = self.created()?;
        let captured = session.capture()?;
        let names: Vec<&RefName> = asks.iter().map(|(name, _)| name).collect();
        prune::set_all(&self.engine.git, &session.repo.ctx, &names, &captured.id)?;
        // After the refs: a repack keeps what refs reach.
        prune::consolidate(&self.engine.git, &session.store_ctx())?;
        let answers = asks.iter().map(|(_, parent)| {
            let changes = match parent {
                // What staging knew changed since the parent: no diff to run.
                Some(parent)
                    if captured
                        .since
                        .as_ref()
                        .is_some_and(|(base, _)| base == parent) =>
                {
                    captured
                        .since
                        .iter()
                        .flat_map(|(_, changes)| changes)
                        .map(RawChange::public)
                        .collect()
                }
                // Checked only when the diff fails: one git process less on every turn.
                Some(parent) => session.diff(parent, &captured.id).map_err(|e| {
                    match session.require(&[parent], &self.path) {
                        Err(unknown @ Error::UnknownSnapshot { .. }) => unknown,
                        _ => e,
                    }
                })?,
                None => Vec::new(),
            };
            Ok(Snapshot {
                id: captured.id.clone(),
                files: captured.files,
                changes,
                omitted: captured.omitted.clone(),
            })
        });
        Ok(answers.collect())
    }

    /// What the ignore rules leave out of the workspace (`.gitignore` files, the enclosing
    /// repository's `info/exclude`, the user's global excludes, `Options::never_capture`):
    /// a directory once for all it holds, at most `max_listed` entries. A walk of its own,
    /// so not part of every snapshot.
    pub fn ignored(&self, max_listed: usize) -> Result<IgnoredSummary, Error> {
        let session = self.created()?;
        excludes::sync(&session.repo.dir, &session.repo.record, &self.engine.never)?;
        scan::ignored(&self.engine.git, &session.repo, max_listed)
    }

    /// What differs from snapshot `from` to snapshot `to`, sorted by path.
    pub fn diff(&self, from: &SnapshotId, to: &SnapshotId) -> Result<Vec<Change>, Error> {
        let session = self.existing(&[from, to])?;
        session.diff(from, to)
    }

    /// The paths changed outside the agent within `gaps` (a gap without `next_start` ends
    /// at the current state, which this snapshots without a ref), sorted.
    pub fn outside_edits(&self, gaps: &[Gap]) -> Result<Vec<PathBuf>, Error> {
        if gaps.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<&SnapshotId> = gaps
            .iter()
            .flat_map(|g| std::iter::once(&g.end).chain(&g.next_start))
            .collect();
        let session = self.existing(&ids)?;
        let current = if gaps.iter().any(|g| g.next_start.is_none()) {
            Some(session.capture()?.id)
        } else {
            None
        };
        let paths: BTreeSet<Vec<u8>> =
            conflict::outside_edits(&self.engine.git, session.ctx(), gaps, current.as_ref())?;
        Ok(paths.iter().map(|p| paths::relative(p)).collect())
    }

    /// What restoring `target` would do now, and what stands in its way (see `restore`);
    /// changes nothing in the workspace.
    pub fn plan_restore(&self, target: &SnapshotId, gaps: &[Gap]) -> Result<RestorePlan, Error> {
        let session = self.existing(&restore_ids(target, gaps))?;
        let current = session.capture()?;
        let plan = restore::plan(&self.engine.git, &session.repo, &current.id, target, gaps)?;
        Ok(plan.public())
    }

    /// Makes the workspace's captured content equal to `request.target`: files added since
    /// are removed, deleted ones come back, modified ones are reverted, with their modes and
    /// symlinks; ignored files, files over the size cap and nested repositories are never
    /// touched. The state found first is snapshotted under `request.undo_ref`: restoring
    /// it is the undo. With conflicts (and no `force`), or with `Blocked` paths, nothing
    /// changes and the conflicts come back.
    pub fn restore(&self, request: &Restore) -> Result<RestoreOutcome, Error> {
        let session = self.existing(&restore_ids(&request.target, &request.gaps))?;
        let current = session.capture()?;
        let plan = restore::plan(
            &self.engine.git,
            &session.repo,
            &current.id,
            &request.target,
            &request.gaps,
        )?;
        if plan.refused(request.force) {
            return Ok(RestoreOutcome::Refused {
                conflicts: plan.conflicts,
            });
        }
        prune::set(
            &self.engine.git,
            session.ctx(),
            &request.undo_ref,
            &current.id,
        )?;
        let changes = restore::apply(
            &self.engine.git,
            &session.repo,
            &plan,
            &request.target,
            &current.id,
        )?;
        Ok(RestoreOutcome::Restored {
            undo: current.id,
            changes,
        })
    }

    /// Every snapshot ref, with its snapshot, sorted by name.
    pub fn snapshots(&self) -> Result<Vec<(RefName, SnapshotId)>, Error> {
        match self.stored()? {
            Some(session) => prune::refs(&self.engine.git, &session.store_ctx()),
            None => Ok(Vec::new()),
        }
    }

    /// Deletes the refs `keep` refuses and reclaims the space only they held. When no ref
    /// is left, the whole shadow repository goes.
    pub fn prune(&self, keep: impl Fn(&RefName) -> bool) -> Result<Pruned, Error> {
        let Some(session) = self.stored()? else {
            return Ok(Pruned::default());
        };
        let dir = session.repo.dir.clone();
        let bytes_before = prune::size_of(&dir);
        let ctx = session.store_ctx();
        let (refs_removed, refs_kept) = prune::drop_refs(&self.engine.git, &ctx, &keep)?;
        if refs_kept == 0 {
            remove_repo(&dir)?;
        } else if refs_removed > 0 {
            prune::collect(&self.engine.git, &ctx)?;
        }
        Ok(Pruned {
            refs_removed,
            refs_kept,
            bytes_before,
            bytes_after: prune::size_of(&dir),
        })
    }

    /// Checks the shadow repository's objects (`git fsck`): `Error::Corrupt` if any snapshot
    /// cannot be read whole. Slow on a large store: for maintenance, not every turn.
    pub fn verify(&self) -> Result<(), Error> {
        let Some(session) = self.stored()? else {
            return Ok(());
        };
        let ctx = session.store_ctx();
        let out = self.engine.git.execute(
            self.engine.git.command(
                &ctx,
                [
                    "fsck",
                    "--connectivity-only",
                    "--no-dangling",
                    "--no-progress",
                ],
            ),
            None,
        )?;
        // Its exit status says; stderr also carries notices (an unborn HEAD).
        if out.status.success() {
            return Ok(());
        }
        let mut detail = crate::error::bounded(&out.stderr);
        if detail.is_empty() {
            detail = format!("git fsck failed ({})", out.status);
        }
        Err(Error::Corrupt {
            repo: session.repo.dir.clone(),
            detail,
        })
    }

    /// Deletes the shadow repository and every snapshot in it (also a damaged one); the
    /// next snapshot starts a new one.
    pub fn remove(&self) -> Result<(), Error> {
        let _lock = RepoLock::acquire(&self.engine.layout.lock(&self.key))?;
        let dir = self.store_dir();
        if dir.symlink_metadata().is_err() {
            return Ok(());
        }
        remove_repo(&dir)
    }

    /// The shadow repository's size in bytes (0 when there is none).
    pub fn store_bytes(&self) -> u64 {
        prune::size_of(&self.store_dir())
    }

    /// Locks and opens the repository, creating it if need be.
    fn created(&self) -> Result<Session<'_>, Error> {
        let lock = RepoLock::acquire(&self.engine.layout.lock(&self.key))?;
        self.open(lock)
    }

    /// Locks and opens the repository if there is one.
    fn stored(&self) -> Result<Option<Session<'_>>, Error> {
        let lock = RepoLock::acquire(&self.engine.layout.lock(&self.key))?;
        if self.store_dir().symlink_metadata().is_err() {
            return Ok(None);
        }
        self.open(lock).map(Some)
    }

    fn open(&self, lock: RepoLock) -> Result<Session<'_>, Error> {
        let repo = Repo::open_or_create(
            &self.engine.git,
            &self.store_dir(),
            &self.path,
            &self.engine.layout.empty_dir,
            self.engine.options.max_file_bytes,
        )?;
        Ok(Session {
            engine: &self.engine,
            repo,
            _lock: lock,
        })
    }

    /// A session in an existing repository holding every one of `ids` (the first is named
    /// as unknown when there is no repository at all).
    fn existing(&self, ids: &[&SnapshotId]) -> Result<Session<'_>, Error> {
        let Some(session) = self.stored()? else {
            return match ids.first() {
                Some(id) => Err(Error::UnknownSnapshot {
                    id: (*id).clone(),
                    workspace: self.path.clone(),
                }),
                None => self.created(),
            };
        };
        session.require(ids, &self.path)?;
        Ok(session)
    }
}

fn restore_ids<'a>(target: &'a SnapshotId, gaps: &'a [Gap]) -> Vec<&'a SnapshotId> {
    std::iter::once(target)
        .chain(
            gaps.iter()
                .flat_map(|g| std::iter::once(&g.end).chain(&g.next_start)),
        )
        .collect()
}

impl Session<'_> {
    fn ctx(&self) -> &Context {
        &self.repo.ctx
    }

    /// The repository alone, for commands that do not look at the workspace (which may be
    /// gone).
    fn store_ctx(&self) -> Context {
        Context {
            work_tree: None,
            ..self.repo.ctx.clone()
        }
    }

    fn capture(&self) -> Result<Captured, Error> {
        let workspace = &self.repo.record.workspace;
        if !workspace.is_dir() {
            return Err(Error::Workspace {
                path: workspace.clone(),
                reason: "it is not a directory (any more)".into(),
            });
        }
        let rules_changed = excludes::sync(&self.repo.dir, &self.repo.record, &self.engine.never)?;
        let options = &self.engine.options;
        let limits = snapshot::Limits {
            max_file_bytes: options.max_file_bytes,
            max_files: options.max_files,
        };
        snapshot::capture(
            &self.engine.git,
            &self.repo,
            &self.engine.trees,
            &limits,
            rules_changed,
        )
    }

    fn diff(&self, from: &SnapshotId, to: &SnapshotId) -> Result<Vec<Change>, Error> {
        let raw = diff::raw(&self.engine.git, &self.store_ctx(), from, to)?;
        Ok(raw.iter().map(diff::RawChange::public).collect())
    }

    /// Fails with `UnknownSnapshot` unless every id names a tree in the repository.
    fn require(&self, ids: &[&SnapshotId], workspace: &Path) -> Result<(), Error> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut input = String::new();
        for id in ids {
            input.push_str(id.as_str());
            input.push('\n');
        }
        let out = self.engine.git.run(
            &self.store_ctx(),
            ["cat-file", "--batch-check=%(objecttype)"],
            Some(input.as_bytes()),
        )?;
        let text = String::from_utf8_lossy(&out);
        let mut answers = text.lines();
        for id in ids {
            if answers.next() != Some("tree") {
                return Err(Error::UnknownSnapshot {
                    id: (*id).clone(),
                    workspace: workspace.to_path_buf(),
                });
            }
        }
        Ok(())
    }
}

/// Renames the repository aside, then deletes it: a crash part-way never leaves half a
/// repository under its real name.
fn remove_repo(dir: &Path) -> Result<(), Error> {
    let aside = dir.with_file_name(format!(
        "{}.removing-{}",
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    std::fs::rename(dir, &aside).map_err(|e| Error::io("remove", dir, e))?;
    std::fs::remove_dir_all(&aside).map_err(|e| Error::io("remove", &aside, e))
}

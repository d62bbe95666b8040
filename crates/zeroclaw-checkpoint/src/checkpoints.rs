//! The checkpoint engine's handle: the workspaces it gives out, the ones it stores, and
//! pruning them all.

use std::path::Path;
use std::sync::Arc;

use crate::engine::Engine;
use crate::error::Error;
use crate::ids::RefName;
use crate::layout::Layout;
use crate::options::Options;
use crate::paths;
use crate::prune::Pruned;
use crate::record::Record;
use crate::workspace::Workspace;

/// The checkpoint engine. Cheap to clone (one `Arc`).
#[derive(Debug, Clone)]
pub struct Checkpoints {
    engine: Arc<Engine>,
}

/// A workspace that has a shadow repository.
#[derive(Debug, Clone)]
pub struct StoredWorkspace {
    pub workspace: Workspace,
    /// Whether the workspace's directory still exists.
    pub exists: bool,
    /// The shadow repository's size in bytes.
    pub bytes: u64,
}

impl Checkpoints {
    /// Opens the engine with its store under `root` (e.g. `<data dir>/checkpoints`),
    /// creating the directory. Fails with `Error::Unavailable` when git cannot be run: the
    /// daemon then works without checkpoints and says so.
    pub fn open(root: impl AsRef<Path>, options: Options) -> Result<Self, Error> {
        Ok(Self {
            engine: Arc::new(Engine::open(root.as_ref(), options)?),
        })
    }

    /// The store's root directory.
    pub fn root(&self) -> &Path {
        &self.engine.layout.root
    }

    /// The git in use, as `git --version` says (`git version 2.47.3`).
    pub fn git_version(&self) -> &str {
        self.engine.git.version()
    }

    /// The workspace at `path` (an existing directory; symlinks resolved, so one workspace
    /// has one store however it is named). Nothing is created until its first snapshot.
    pub fn workspace(&self, path: impl AsRef<Path>) -> Result<Workspace, Error> {
        let path = path.as_ref();
        let refuse = |reason: String| Error::Workspace {
            path: path.to_path_buf(),
            reason,
        };
        let canonical =
            paths::canonical(path).map_err(|e| refuse(format!("cannot be resolved: {e}")))?;
        if !canonical.is_dir() {
            return Err(refuse("it is not a directory".into()));
        }
        if let Some(dir) = self.engine.never.iter().find(|d| canonical.starts_with(d)) {
            return Err(refuse(format!(
                "it lies inside {}, which is never captured",
                dir.display()
            )));
        }
        let key = Layout::key(&canonical);
        Ok(Workspace::new(self.engine.clone(), canonical, key))
    }

    /// Every workspace that has a shadow repository (for maintenance). A repository whose
    /// record cannot be read is left out; its workspace's `remove` deletes it.
    pub fn workspaces(&self) -> Result<Vec<StoredWorkspace>, Error> {
        let repos = &self.engine.layout.repos;
        let entries = std::fs::read_dir(repos).map_err(|e| Error::io("read", repos, e))?;
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.contains('.') {
                continue;
            }
            let Some(record) = Record::read(&entry.path()) else {
                continue;
            };
            out.push(StoredWorkspace {
                exists: record.workspace.is_dir(),
                bytes: crate::prune::size_of(&entry.path()),
                workspace: Workspace::new(self.engine.clone(), record.workspace, name),
            });
        }
        out.sort_by(|a, b| a.workspace.path().cmp(b.workspace.path()));
        Ok(out)
    }

    /// Prunes every workspace's snapshots: `keep(workspace, ref)` says which stay. A
    /// workspace left with none loses its shadow repository.
    pub fn prune_all(&self, keep: impl Fn(&Path, &RefName) -> bool) -> Result<Pruned, Error> {
        let mut total = Pruned::default();
        for stored in self.workspaces()? {
            let ws = &stored.workspace;
            let pruned = ws.prune(|name| keep(ws.path(), name))?;
            total.refs_removed += pruned.refs_removed;
            total.refs_kept += pruned.refs_kept;
            total.bytes_before += pruned.bytes_before;
            total.bytes_after += pruned.bytes_after;
        }
        Ok(total)
    }
}

//! One workspace's shadow repository: creating it and checking it is whole (its record of
//! what it snapshots is `record.rs`).
//!
//! The git work tree is the workspace itself, or, when the workspace lies inside a git
//! repository of the user's, that repository's top level with every command limited to the
//! workspace's subdirectory: git then reads the `.gitignore` files above the workspace too,
//! exactly as the user's own git does. (Unless the user's repository ignores the workspace
//! itself, in which case its rules cannot be what the user means, and the workspace is the
//! work tree.) Snapshot trees are always rooted at the workspace.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::git::{Context, Git};
use crate::paths;
use crate::record::{RECORD, Record};

/// An open shadow repository (its lock is held by the caller).
#[derive(Debug)]
pub(crate) struct Repo {
    pub dir: PathBuf,
    pub record: Record,
    pub ctx: Context,
}

impl Repo {
    /// The index file: git's stat cache of the workspace as last snapshotted. It is one per
    /// workspace, shared by every session there, since a snapshot is of the workspace, not
    /// of a session: whoever snapshots next finds the cache warm.
    pub(crate) fn index_path(dir: &Path) -> PathBuf {
        dir.join("index")
    }

    /// Opens the repository in `dir`, or creates it. Refuses one that is damaged or belongs
    /// to another workspace.
    pub(crate) fn open_or_create(
        git: &Git,
        dir: &Path,
        workspace: &Path,
        empty_dir: &Path,
        max_file_bytes: u64,
    ) -> Result<Self, Error> {
        if dir.exists() {
            return Self::open(dir, workspace, max_file_bytes);
        }
        Self::create(git, dir, workspace, empty_dir, max_file_bytes)
    }

    fn open(dir: &Path, workspace: &Path, max_file_bytes: u64) -> Result<Self, Error> {
        let corrupt = |detail: String| Error::Corrupt {
            repo: dir.to_path_buf(),
            detail,
        };
        for part in ["HEAD", "objects", "refs"] {
            if !dir.join(part).exists() {
                return Err(corrupt(format!("{part} is missing")));
            }
        }
        let bytes = std::fs::read(dir.join(RECORD))
            .map_err(|e| corrupt(format!("its record {RECORD} cannot be read: {e}")))?;
        let mut record = Record::decode(&bytes)
            .ok_or_else(|| corrupt(format!("its record {RECORD} is malformed")))?;
        if record.workspace != workspace {
            return Err(corrupt(format!(
                "it records the workspace {}, not {}",
                record.workspace.display(),
                workspace.display()
            )));
        }
        let index = Self::index_path(dir);
        // Stale lock files of a git that was killed mid-write: the caller holds our lock,
        // so no git is running here now.
        for stale in ["index.lock", "packed-refs.lock", "HEAD.lock", "config.lock"] {
            let _ = std::fs::remove_file(dir.join(stale));
        }
        if record.max_file_bytes != max_file_bytes {
            // Files over the new cap may be in the index: start it afresh.
            let _ = std::fs::remove_file(&index);
            record.max_file_bytes = max_file_bytes;
            record.write(dir)?;
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            ctx: Context {
                git_dir: dir.to_path_buf(),
                index,
                work_tree: Some(record.work_tree.clone()),
            },
            record,
        })
    }

    fn create(
        git: &Git,
        dir: &Path,
        workspace: &Path,
        empty_dir: &Path,
        max_file_bytes: u64,
    ) -> Result<Self, Error> {
        // Built beside its final place and renamed into it, so a crash never leaves half a
        // repository under the real name.
        let parent = dir.parent().unwrap_or(dir);
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Ok(entries) = std::fs::read_dir(parent) {
            for entry in entries.flatten() {
                let leftover = entry.file_name().to_string_lossy().into_owned();
                if leftover.starts_with(&format!("{name}.new-"))
                    || leftover.starts_with(&format!("{name}.removing-"))
                {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let building = parent.join(format!("{name}.new-{}", std::process::id()));
        let ctx = Context {
            git_dir: building.clone(),
            index: Self::index_path(&building),
            work_tree: None,
        };
        std::fs::create_dir_all(&building)
            .map_err(|e| Error::io("create directory", &building, e))?;
        let mut template = std::ffi::OsString::from("--template=");
        template.push(empty_dir.as_os_str());
        git.run(
            &ctx,
            [
                std::ffi::OsStr::new("init"),
                "--quiet".as_ref(),
                "--bare".as_ref(),
                &template,
            ],
            None,
        )?;
        for sub in ["info", "refs/zeroclaw"] {
            let path = building.join(sub);
            std::fs::create_dir_all(&path).map_err(|e| Error::io("create directory", &path, e))?;
        }
        // Our attributes come first: no end-of-line conversion, filter, ident or encoding
        // ever changes the bytes a snapshot holds, whatever the workspace's .gitattributes say.
        let attributes = building.join("info").join("attributes");
        std::fs::write(
            &attributes,
            "* -text !eol -filter -ident !working-tree-encoding\n",
        )
        .map_err(|e| Error::io("write", &attributes, e))?;

        let record = decide_work_tree(git, &ctx, workspace, max_file_bytes)?;
        record.write(&building)?;
        std::fs::rename(&building, dir).map_err(|e| Error::io("create", dir, e))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            ctx: Context {
                git_dir: dir.to_path_buf(),
                index: Self::index_path(dir),
                work_tree: Some(record.work_tree.clone()),
            },
            record,
        })
    }
}

/// The work tree and prefix for a workspace (see the module's comment).
fn decide_work_tree(
    git: &Git,
    ctx: &Context,
    workspace: &Path,
    max_file_bytes: u64,
) -> Result<Record, Error> {
    let alone = Record {
        workspace: workspace.to_path_buf(),
        work_tree: workspace.to_path_buf(),
        prefix: Vec::new(),
        user_exclude: None,
        max_file_bytes,
    };
    let Some((top, dot_git)) = workspace.ancestors().find_map(|dir| {
        let dot_git = dir.join(".git");
        dot_git
            .symlink_metadata()
            .is_ok()
            .then(|| (dir.to_path_buf(), dot_git))
    }) else {
        return Ok(alone);
    };
    let user_exclude = user_git_dir(&top, &dot_git).map(|d| d.join("info").join("exclude"));
    let Some(prefix) = workspace.strip_prefix(&top).ok().and_then(paths::git_form) else {
        return Ok(alone);
    };
    let record = Record {
        workspace: workspace.to_path_buf(),
        work_tree: top.clone(),
        prefix: prefix.clone(),
        user_exclude,
        max_file_bytes,
    };
    if prefix.is_empty() {
        return Ok(record);
    }
    // Does the user's repository ignore the workspace itself? Its info/exclude must be in
    // place for git to say.
    crate::excludes::sync(&ctx.git_dir, &record, &[])?;
    let ctx = Context {
        work_tree: Some(top),
        ..ctx.clone()
    };
    let mut dir_path = prefix;
    dir_path.push(b'/');
    let mut cmd = git.command(&ctx, ["check-ignore", "-q", "--no-index", "--"]);
    cmd.arg(paths::from_bytes(&dir_path))
        .env_remove("GIT_LITERAL_PATHSPECS");
    let out = git.execute(cmd, None)?;
    match out.status.code() {
        Some(0) => Ok(alone),
        Some(1) => Ok(record),
        _ => Err(crate::git::failure(
            "check-ignore",
            out.status,
            &out.stderr,
            &ctx,
        )),
    }
}

/// The user's git directory for a `.git` entry: the directory itself, or where a `.git`
/// file (a linked worktree or a submodule) points; for a linked worktree, the common
/// directory, which holds `info/exclude`.
fn user_git_dir(top: &Path, dot_git: &Path) -> Option<PathBuf> {
    let meta = dot_git.symlink_metadata().ok()?;
    if meta.is_dir() {
        return Some(dot_git.to_path_buf());
    }
    let text = std::fs::read_to_string(dot_git).ok()?;
    let target = text.trim().strip_prefix("gitdir:")?.trim();
    let git_dir = top.join(target);
    match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(common) => Some(git_dir.join(common.trim())),
        Err(_) => Some(git_dir),
    }
}

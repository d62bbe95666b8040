//! The refs that keep snapshots alive, and dropping them: a snapshot lives exactly as long
//! as a ref under `refs/zeroclaw/` names it (git never collects what a ref reaches).

use std::path::Path;

use crate::error::Error;
use crate::git::{Context, Git};
use crate::ids::{REF_PREFIX, RefName, SnapshotId};

/// What a prune did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    pub refs_removed: usize,
    pub refs_kept: usize,
    /// The size of the shadow repository (or repositories) before and after, in bytes.
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// Every snapshot ref of the repository, with the snapshot it names. Refs that are not
/// ours (none should exist) are left out.
pub(crate) fn refs(git: &Git, ctx: &Context) -> Result<Vec<(RefName, SnapshotId)>, Error> {
    let out = git.run(
        ctx,
        [
            "for-each-ref",
            "--format=%(objectname) %(refname)",
            REF_PREFIX,
        ],
        None,
    )?;
    let text = String::from_utf8_lossy(&out);
    Ok(text
        .lines()
        .filter_map(|line| {
            let (id, name) = line.split_once(' ')?;
            let name = RefName::new(name.strip_prefix(REF_PREFIX)?).ok()?;
            Some((name, SnapshotId::parse(id).ok()?))
        })
        .collect())
}

/// Points `name` at `id` (replacing what it named before).
pub(crate) fn set(git: &Git, ctx: &Context, name: &RefName, id: &SnapshotId) -> Result<(), Error> {
    git.run(
        ctx,
        ["update-ref", "--no-deref", &name.full(), id.as_str()],
        None,
    )?;
    Ok(())
}

/// Points every one of `names` at `id`: each written here as a loose ref, as git writes
/// one (the id and a newline in `<name>.lock`, created exclusively, renamed over the ref),
/// which saves a git process on every snapshot; should any not be written so (a lock held
/// by a git at work, a name whose directory is a ref), one `update-ref` sets them all, in
/// one transaction. A loose ref takes precedence over a packed one of the same name, so
/// what `git pack-refs` left behind is overridden, as git itself does.
pub(crate) fn set_all(
    git: &Git,
    ctx: &Context,
    names: &[&RefName],
    id: &SnapshotId,
) -> Result<(), Error> {
    if names
        .iter()
        .all(|name| write_loose(&ctx.git_dir, name, id).is_ok())
    {
        return Ok(());
    }
    if let [name] = names {
        return set(git, ctx, name, id);
    }
    let mut script = String::new();
    for name in names {
        script.push_str("update ");
        script.push_str(&name.full());
        script.push(' ');
        script.push_str(id.as_str());
        script.push('\n');
    }
    git.run(
        ctx,
        ["update-ref", "--no-deref", "--stdin"],
        Some(script.as_bytes()),
    )?;
    Ok(())
}

/// Writes `name`'s loose ref file to name `id`. Not synced, as git does not sync refs by
/// default: a crash leaves the old ref or the new one (or a stale `.lock`, which a later
/// write here refuses and git then reports).
fn write_loose(git_dir: &std::path::Path, name: &RefName, id: &SnapshotId) -> std::io::Result<()> {
    use std::io::Write;
    let path = git_dir.join(crate::paths::relative(name.full().as_bytes()));
    let mut lock = path.clone().into_os_string();
    lock.push(".lock");
    let lock = std::path::PathBuf::from(lock);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)?;
    let written = file
        .write_all(format!("{}\n", id.as_str()).as_bytes())
        .and_then(|()| {
            drop(file);
            std::fs::rename(&lock, &path)
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&lock);
    }
    written
}

/// Deletes the refs `keep` refuses; returns how many went and how many stay. The objects
/// only they reached stay on disk until `collect`.
pub(crate) fn drop_refs(
    git: &Git,
    ctx: &Context,
    keep: &dyn Fn(&RefName) -> bool,
) -> Result<(usize, usize), Error> {
    let all = refs(git, ctx)?;
    let mut script = String::new();
    let mut removed = 0;
    for (name, _) in &all {
        if !keep(name) {
            script.push_str("delete ");
            script.push_str(&name.full());
            script.push('\n');
            removed += 1;
        }
    }
    if removed > 0 {
        git.run(ctx, ["update-ref", "--stdin"], Some(script.as_bytes()))?;
    }
    Ok((removed, all.len() - removed))
}

/// Deletes every object no ref (or the index) reaches, and packs the rest. The trees a
/// process remembers the repository holding may be among the deleted: a new generation
/// tells it (`trees.rs`).
pub(crate) fn collect(git: &Git, ctx: &Context) -> Result<(), Error> {
    git.run(ctx, ["gc", "--prune=now", "--quiet"], None)?;
    crate::trees::new_generation(&ctx.git_dir)
}

/// Past this many packs, a snapshot that added one rolls the small ones up: every snapshot
/// that changes files adds a pack of trees (`trees.rs`), and git looks for an object in
/// each pack in turn.
const MAX_PACKS: usize = 50;

/// Rolls small packs up once there are more than [`MAX_PACKS`]: `git repack --geometric=2`
/// (git 2.32 and later) merges only the packs small beside the next, keeping every object;
/// older gits repack everything reachable into one. Either way a new generation follows, as
/// after `collect`.
pub(crate) fn consolidate(git: &Git, ctx: &Context) -> Result<(), Error> {
    let packs = std::fs::read_dir(ctx.git_dir.join("objects").join("pack"))
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".pack"))
                .count()
        })
        .unwrap_or(0);
    if packs <= MAX_PACKS {
        return Ok(());
    }
    if git.at_least(2, 32) {
        git.run(ctx, ["repack", "-d", "-q", "--geometric=2"], None)?;
    } else {
        git.run(ctx, ["repack", "-a", "-d", "-q"], None)?;
    }
    crate::trees::new_generation(&ctx.git_dir)
}

/// The bytes of every file under `dir` (what it takes, give or take the file system's
/// blocks).
pub(crate) fn size_of(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(t) if t.is_dir() => size_of(&entry.path()),
            Ok(_) => entry.metadata().map(|m| m.len()).unwrap_or(0),
            Err(_) => 0,
        })
        .sum()
}

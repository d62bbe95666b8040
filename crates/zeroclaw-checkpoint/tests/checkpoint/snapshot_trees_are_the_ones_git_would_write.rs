//! The engine builds a snapshot's trees itself and packs them (`trees.rs`, `pack.rs`): each
//! snapshot's id is the tree `git write-tree` makes of the same index — names that sort
//! around `/`, modes, symlinks, deep and emptied directories, a workspace inside a user's
//! repository — and `git fsck --full --strict` accepts every pack and object. After a
//! prune deleted trees the engine remembered, a snapshot of the same content writes them
//! again.

use crate::common::*;
use std::path::Path;
use zeroclaw_checkpoint::{Options, Snapshot, SnapshotId, Workspace};

/// Runs git in the shadow repository `repo` (its own index), as the engine does.
fn shadow_git(repo: &Path, args: &[&str]) -> String {
    shadow_git_with(repo, &repo.join("index"), None, args)
}

/// `shadow_git` with another index file and, for commands that read files, a work tree.
fn shadow_git_with(repo: &Path, index: &Path, work_tree: Option<&Path>, args: &[&str]) -> String {
    let home = repo.join("no-home");
    let mut cmd = user_git_command(work_tree.unwrap_or(repo), &home, args);
    cmd.env("GIT_DIR", repo).env("GIT_INDEX_FILE", index);
    if let Some(tree) = work_tree {
        cmd.env("GIT_WORK_TREE", tree);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The snapshot `id` is the tree `git write-tree` makes of the engine's index, and the tree
/// git makes of `work_tree` read afresh (`git add -A` into a new index): the index the
/// engine staged itself (`stage.rs`) says what git's own would.
fn assert_git_agrees(repo: &Path, id: &SnapshotId, prefix: Option<&str>, work_tree: &Path) {
    let prefix_arg = prefix.map(|p| format!("--prefix={p}/"));
    let write_tree: Vec<&str> = ["write-tree"]
        .into_iter()
        .chain(prefix_arg.as_deref())
        .collect();
    let tree = shadow_git(repo, &write_tree);
    assert_eq!(
        id.as_str(),
        tree,
        "the snapshot is not git's tree of its index"
    );
    let fresh = tempfile::tempdir().unwrap();
    let fresh_index = fresh.path().join("index");
    let add: Vec<&str> = ["add", "-A", "--"]
        .into_iter()
        .chain([prefix.unwrap_or(".")])
        .collect();
    shadow_git_with(repo, &fresh_index, Some(work_tree), &add);
    let afresh = shadow_git_with(repo, &fresh_index, None, &write_tree);
    assert_eq!(
        id.as_str(),
        afresh,
        "the snapshot is not git's tree of the files"
    );
    shadow_git(repo, &["fsck", "--full", "--strict", "--no-dangling"]);
    assert_eq!(shadow_git(repo, &["cat-file", "-t", id.as_str()]), "tree");
}

/// A snapshot's changes (the engine knows them from what it staged, when the index held the
/// parent's tree) are what `git diff-tree` lists between the parent and it.
fn assert_changes_are_git_s(ws: &Workspace, parent: &SnapshotId, snapshot: &Snapshot) {
    let by_git = ws.diff(parent, &snapshot.id).unwrap();
    assert_eq!(
        snapshot.changes, by_git,
        "the snapshot's changes are not git's diff"
    );
}

#[test]
fn snapshot_trees_are_the_ones_git_would_write() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    let repo = f.ws.store_dir();
    // Names that sort differently as files and as directories ("a" < "a-b" < "a.b" <
    // "a/" < "a0"), unicode, spaces, depth.
    for path in [
        "a/x.txt",
        "a-b",
        "a.b",
        "a0",
        "b/c/d/e/f/deep.txt",
        "b/c/sibling",
        "names/with space.txt",
        "names/é.txt",
        "z",
    ] {
        write(f.at(path), format!("{path}\n"));
    }
    #[cfg(unix)]
    {
        set_executable(f.at("a0"), true);
        symlink("a/x.txt", f.at("link"));
    }
    let first = f.ws.snapshot(&name("s/0"), None).unwrap();
    assert_git_agrees(&repo, &first.id, None, f.ws.path());

    // A turn: a change deep down, a new directory, a directory emptied.
    write(f.at("b/c/d/e/f/deep.txt"), "changed\n");
    write(f.at("new/dir/file"), "new\n");
    std::fs::remove_file(f.at("a/x.txt")).unwrap();
    let second = f.ws.snapshot(&name("s/1"), Some(&first.id)).unwrap();
    assert_ne!(second.id, first.id);
    assert_git_agrees(&repo, &second.id, None, f.ws.path());
    assert_changes_are_git_s(&f.ws, &first.id, &second);

    // Many files in many directories: the trees go in one pack.
    for i in 0..200 {
        write(f.at(&format!("many/d{}/f{i}", i % 40)), format!("{i}\n"));
    }
    let third = f.ws.snapshot(&name("s/2"), None).unwrap();
    assert_git_agrees(&repo, &third.id, None, f.ws.path());

    // Everything gone: the empty tree.
    for entry in std::fs::read_dir(f.ws.path()).unwrap().flatten() {
        let path = entry.path();
        if path.symlink_metadata().unwrap().is_dir() {
            std::fs::remove_dir_all(path).unwrap();
        } else {
            std::fs::remove_file(path).unwrap();
        }
    }
    let empty = f.ws.snapshot(&name("s/3"), None).unwrap();
    assert_eq!(
        empty.id.as_str(),
        "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    );
    shadow_git(&repo, &["fsck", "--full", "--strict", "--no-dangling"]);

    // Each earlier snapshot still restores exactly.
    restore(&f.ws, &second.id, "s/undo");
    assert_eq!(
        std::fs::read_to_string(f.at("b/c/d/e/f/deep.txt")).unwrap(),
        "changed\n"
    );
    assert!(!f.at("a/x.txt").exists());
}

#[test]
fn a_workspace_inside_a_repository_gets_git_s_tree_of_its_subdirectory() {
    let Some(f) = fixture_in(Options::default(), "repo/packages/app") else {
        return;
    };
    let user_repo = f.dir.path().join("repo");
    let home = f.dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    user_git(&user_repo, &home, &["init", "-q"]);
    write(user_repo.join("outside.txt"), "not in the workspace\n");
    write(user_repo.join("packages/app-other/x"), "a sibling\n");
    write(f.at("src/main.rs"), "fn main() {}\n");
    write(f.at("README"), "app\n");
    let snapshot = f.ws.snapshot(&name("s/0"), None).unwrap();
    assert_eq!(snapshot.files, 2);
    assert_git_agrees(
        &f.ws.store_dir(),
        &snapshot.id,
        Some("packages/app"),
        &user_repo,
    );
}

#[test]
fn trees_a_prune_deleted_are_written_again() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    let repo = f.ws.store_dir();
    write(f.at("dir/x"), "1\n");
    f.ws.snapshot(&name("keep/0"), None).unwrap();
    write(f.at("dir/x"), "2\n");
    let dropped = f.ws.snapshot(&name("old/0"), None).unwrap();
    let pruned = f.ws.prune(|n| n.as_str().starts_with("keep/")).unwrap();
    assert_eq!((pruned.refs_removed, pruned.refs_kept), (1, 1));
    let gone = user_git_command(
        &repo,
        &repo.join("no-home"),
        &["cat-file", "-e", dropped.id.as_str()],
    )
    .env("GIT_DIR", &repo)
    .status()
    .unwrap();
    assert!(!gone.success(), "the prune deleted the old snapshot's tree");

    // Nothing changed since: the same trees, which the engine had just written, are gone
    // from the store, and must be written again.
    let again = f.ws.snapshot(&name("new/0"), None).unwrap();
    assert_eq!(again.id, dropped.id);
    assert_git_agrees(&repo, &again.id, None, f.ws.path());
}

#[test]
fn many_turns_do_not_pile_up_packs() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    let repo = f.ws.store_dir();
    let packs = || {
        std::fs::read_dir(repo.join("objects/pack"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".pack"))
            .count()
    };
    let mut ids = Vec::new();
    for turn in 0..70 {
        write(f.at(&format!("d{}/f", turn % 7)), format!("{turn}\n"));
        ids.push(f.ws.snapshot(&name(&format!("s/{turn}")), None).unwrap().id);
        assert!(packs() <= 51, "turn {turn}: {} packs", packs());
    }
    assert_git_agrees(&repo, ids.last().unwrap(), None, f.ws.path());
    // Every snapshot is still whole.
    restore(&f.ws, &ids[3], "s/undo");
    assert_eq!(std::fs::read_to_string(f.at("d3/f")).unwrap(), "3\n");
}

/// The walk compares each tracked file's `lstat` with the index itself (`stat.rs`): a
/// change that keeps the size and puts the modification time back is still seen (a save
/// by rename: another inode), as is a change in the very second of the last snapshot (racily clean),
/// a mode change, a file turned symlink, and a deletion — each as `git write-tree` of a
/// freshly read workspace would see it.
#[test]
fn the_walk_misses_no_change_git_would_see() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    let repo = f.ws.store_dir();
    for name in ["same-size", "racy", "mode", "kind", "gone"] {
        write(f.at(&format!("d/{name}")), "0123456789\n");
    }
    // Ten seconds old, so not racily clean: only the stat data can tell.
    let path = f.at("d/same-size");
    let mtime = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
    let set_mtime = || {
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
    };
    set_mtime();
    let first = f.ws.snapshot(&name("s/0"), None).unwrap();

    // Same size, same modification time, a new inode (an editor's save-by-rename).
    write(f.at("d/.same-size.swp"), "abcdefghij\n");
    std::fs::rename(f.at("d/.same-size.swp"), &path).unwrap();
    set_mtime();
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);
    let second = f.ws.snapshot(&name("s/1"), Some(&first.id)).unwrap();
    assert_changes_are_git_s(&f.ws, &first.id, &second);
    let changed: Vec<String> = second
        .changes
        .iter()
        .map(|c| c.path.to_string_lossy().into_owned())
        .collect();
    assert_eq!(changed, ["d/same-size"]);

    // Right after a snapshot, in the same second.
    write(f.at("d/racy"), "racy!racy!\n");
    #[cfg(unix)]
    {
        set_executable(f.at("d/mode"), true);
        std::fs::remove_file(f.at("d/kind")).unwrap();
        symlink("mode", f.at("d/kind"));
    }
    std::fs::remove_file(f.at("d/gone")).unwrap();
    let third = f.ws.snapshot(&name("s/2"), Some(&second.id)).unwrap();
    assert_changes_are_git_s(&f.ws, &second.id, &third);
    let changed: Vec<String> = third
        .changes
        .iter()
        .map(|c| c.path.to_string_lossy().into_owned())
        .collect();
    let expected: &[&str] = if cfg!(unix) {
        &["d/gone", "d/kind", "d/mode", "d/racy"]
    } else {
        &["d/gone", "d/racy"]
    };
    assert_eq!(changed, expected);
    assert_git_agrees(&repo, &third.id, None, f.ws.path());
}

/// The engine stages a turn's changes itself and leaves a large batch (more bytes than it
/// holds in memory at once) to `git update-index`: both give git's tree, whichever ran
/// before, through a file turned directory and back; files only touched add nothing to the
/// store.
#[test]
fn both_ways_of_staging_give_git_s_tree() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    let repo = f.ws.store_dir();
    let objects = || {
        let mut count = 0;
        for dir in std::fs::read_dir(repo.join("objects")).unwrap().flatten() {
            count += std::fs::read_dir(dir.path()).unwrap().count();
        }
        count
    };
    // 36 MiB of new files: past what the engine stages itself.
    for i in 0..4 {
        write(f.at(&format!("big/{i}")), big(i));
    }
    write(f.at("x"), "a file\n");
    write(f.at("y/inner"), "in a directory\n");
    let first = f.ws.snapshot(&name("s/0"), None).unwrap();
    assert_git_agrees(&repo, &first.id, None, f.ws.path());

    // A file turned directory, a directory turned file, a big file changed.
    std::fs::remove_file(f.at("x")).unwrap();
    write(f.at("x/now-a-dir"), "inside\n");
    std::fs::remove_dir_all(f.at("y")).unwrap();
    write(f.at("y"), "a file again\n");
    write(f.at("big/0"), big(99));
    let second = f.ws.snapshot(&name("s/1"), Some(&first.id)).unwrap();
    assert_git_agrees(&repo, &second.id, None, f.ws.path());
    assert_changes_are_git_s(&f.ws, &first.id, &second);
    assert!(!second.changes.is_empty());

    // Back: x a file with its first content, y a directory.
    std::fs::remove_dir_all(f.at("x")).unwrap();
    write(f.at("x"), "a file\n");
    std::fs::remove_file(f.at("y")).unwrap();
    write(f.at("y/inner"), "in a directory\n");
    write(f.at("big/0"), big(0));
    let third = f.ws.snapshot(&name("s/2"), Some(&second.id)).unwrap();
    assert_eq!(third.id, first.id, "the first snapshot's tree again");
    assert_git_agrees(&repo, &third.id, None, f.ws.path());
    assert_changes_are_git_s(&f.ws, &second.id, &third);
    // A parent other than the tree the index held: git's diff, the same answer.
    let again = f.ws.snapshot(&name("s/2b"), Some(&second.id)).unwrap();
    assert_changes_are_git_s(&f.ws, &second.id, &again);

    // Touched only: a new modification time, the same bytes.
    let touched = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    for path in ["x", "big/1"] {
        std::fs::File::options()
            .write(true)
            .open(f.at(path))
            .unwrap()
            .set_modified(touched)
            .unwrap();
    }
    let before = objects();
    let fourth = f.ws.snapshot(&name("s/3"), Some(&third.id)).unwrap();
    assert_eq!(objects(), before, "touched files added objects");
    assert_eq!(fourth.id, first.id);
    assert!(fourth.changes.is_empty(), "{:?}", fourth.changes);
    assert_git_agrees(&repo, &fourth.id, None, f.ws.path());
}

/// 9 MiB of one byte, a different one for each seed (quick to make and to compress).
fn big(seed: u64) -> Vec<u8> {
    vec![b'a' + (seed % 26) as u8; 9 << 20]
}

/// A tracked file that changes in the turn that also starts ignoring it leaves the
/// snapshot, as a fresh `git add -A` would leave it out.
#[test]
fn a_changed_file_newly_ignored_leaves_the_snapshot() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    let repo = f.ws.store_dir();
    write(f.at("kept.txt"), "kept\n");
    write(f.at("build.log"), "first\n");
    let first = f.ws.snapshot(&name("s/0"), None).unwrap();
    write(f.at("build.log"), "second, and now ignored\n");
    write(f.at(".gitignore"), "*.log\n");
    let second = f.ws.snapshot(&name("s/1"), Some(&first.id)).unwrap();
    assert_git_agrees(&repo, &second.id, None, f.ws.path());
    assert_changes_are_git_s(&f.ws, &first.id, &second);
    let listed: Vec<String> = second
        .changes
        .iter()
        .map(|c| format!("{} {}", c.change.as_str(), c.path.display()))
        .collect();
    assert_eq!(listed, ["added .gitignore", "deleted build.log"]);
}

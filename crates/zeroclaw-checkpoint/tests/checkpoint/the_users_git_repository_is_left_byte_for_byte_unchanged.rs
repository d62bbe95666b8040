//! A workspace that is the user's own git repository, with a stash, branches, tags, a
//! staged change, untracked files, a hook for every event that writes a marker file, an
//! fsmonitor and a clean filter that would too: after snapshots, a diff, a planned and a
//! real restore, its undo and a prune, every byte under `.git` is as it was (so status,
//! refs, stash, index and reflogs are), and no hook, filter or monitor of the user's ran.

#![cfg(unix)]

use crate::common::*;
use zeroclaw_checkpoint::Options;

const HOOKS: &[&str] = &[
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
];

#[test]
fn the_users_git_repository_is_left_byte_for_byte_unchanged() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    let home = f.dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let marker = f.dir.path().join("ran");
    let ws = f.ws.path().to_path_buf();
    let git = |args: &[&str]| user_git(&ws, &home, args);

    git(&["init", "-q", "-b", "main"]);
    write(f.at("src/lib.rs"), "fn main() {}\n");
    write(f.at("README"), "readme\n");
    write(f.at(".gitattributes"), "*.rs filter=spy\n");
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "first"]);
    git(&["tag", "v1"]);
    git(&["branch", "feature"]);
    write(f.at("README"), "readme, stashed change\n");
    git(&["stash", "-q"]);
    write(f.at("README"), "readme, staged change\n");
    git(&["add", "README"]);
    write(f.at("src/lib.rs"), "fn main() { /* unstaged */ }\n");
    write(f.at("notes.txt"), "untracked\n");

    let spy = format!("#!/bin/sh\ntouch '{}'\ncat\n", marker.display());
    for hook in HOOKS {
        let path = f.at(&format!(".git/hooks/{hook}"));
        write(&path, &spy);
        set_executable(&path, true);
    }
    let monitor = f.dir.path().join("fsmonitor.sh");
    write(&monitor, &spy);
    set_executable(&monitor, true);
    git(&["config", "core.fsmonitor", monitor.to_str().unwrap()]);
    git(&[
        "config",
        "filter.spy.clean",
        &format!("touch '{}'; cat", marker.display()),
    ]);
    git(&[
        "config",
        "filter.spy.smudge",
        &format!("touch '{}'; cat", marker.display()),
    ]);
    git(&["config", "core.hooksPath", ".git/hooks"]);

    let dot_git_before = listing(&f.at(".git"));
    let status = |args: &[&str]| {
        // Our own look must not write either: no optional locks, no fsmonitor.
        let mut all = vec!["-c", "core.fsmonitor=false"];
        all.extend_from_slice(args);
        let out = user_git_command(&ws, &home, &all)
            .env("GIT_OPTIONAL_LOCKS", "0")
            .output()
            .unwrap();
        assert!(out.status.success());
        out.stdout
    };
    let status_before = status(&["status", "--porcelain=v2", "--branch"]);
    let refs_before = status(&["for-each-ref"]);
    let stash_before = status(&["stash", "list"]);
    let _ = std::fs::remove_file(&marker);

    let first = f.ws.snapshot(&name("s/0"), None).unwrap();
    write(f.at("src/lib.rs"), "fn main() { /* the agent */ }\n");
    write(f.at("new/file.txt"), "agent's new file\n");
    std::fs::remove_file(f.at("notes.txt")).unwrap();
    let second = f.ws.snapshot(&name("s/1"), Some(&first.id)).unwrap();
    assert_eq!(second.changes.len(), 3, "{:?}", second.changes);
    f.ws.diff(&first.id, &second.id).unwrap();
    f.ws.plan_restore(&first.id, &[]).unwrap();
    let (undo, _) = restore(&f.ws, &first.id, "s/undo/0");
    restore(&f.ws, &undo, "s/undo/1");
    restore(&f.ws, &first.id, "s/undo/2");
    f.ws.prune(|n| n.as_str() != "s/1").unwrap();

    assert!(
        !marker.exists(),
        "a hook, filter or fsmonitor of the user's ran"
    );
    assert_eq!(
        listing(&f.at(".git")),
        dot_git_before,
        "something under .git changed"
    );
    assert_eq!(
        status(&["status", "--porcelain=v2", "--branch"]),
        status_before
    );
    assert_eq!(status(&["for-each-ref"]), refs_before);
    assert_eq!(status(&["stash", "list"]), stash_before);
    assert!(
        f.ws.ignored(100).unwrap().entries.is_empty(),
        ".git is not an ignored entry but no entry at all"
    );
    assert_eq!(first.files, 4, "the snapshot holds the work tree, not .git");
}

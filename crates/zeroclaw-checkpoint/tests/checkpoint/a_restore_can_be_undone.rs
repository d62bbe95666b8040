//! A restore snapshots what it finds first; restoring that snapshot (the undo) gives back
//! the tree as it was before the restore, including changes no earlier snapshot held.

#![cfg(unix)]

use crate::common::*;
use zeroclaw_checkpoint::{ChangeKind, Options};

#[test]
fn a_restore_can_be_undone() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    write(f.at("keep.txt"), "kept\n");
    write(f.at("edit.txt"), "before\n");
    write(f.at("gone.txt"), "will be deleted\n");
    let checkpoint = f.ws.snapshot(&name("s/0"), None).unwrap();

    write(f.at("edit.txt"), "after\n");
    std::fs::remove_file(f.at("gone.txt")).unwrap();
    write(f.at("new/dir/file.txt"), "new\n");
    symlink("keep.txt", f.at("new/link"));
    f.ws.snapshot(&name("s/1"), Some(&checkpoint.id)).unwrap();
    // A change after the last snapshot: only the restore's own snapshot holds it.
    write(f.at("edit.txt"), "after, edited again\n");
    let before_restore = listing(f.ws.path());

    let (undo, changes) = restore(&f.ws, &checkpoint.id, "s/undo/1");
    let by_path: Vec<(String, ChangeKind)> = changes
        .iter()
        .map(|c| (c.path.to_string_lossy().into_owned(), c.change))
        .collect();
    assert_eq!(
        by_path,
        vec![
            ("edit.txt".into(), ChangeKind::Modified),
            ("gone.txt".into(), ChangeKind::Added),
            ("new/dir/file.txt".into(), ChangeKind::Deleted),
            ("new/link".into(), ChangeKind::Deleted),
        ]
    );
    assert!(
        !f.at("new").exists(),
        "the directories the restore emptied stay behind"
    );
    assert_eq!(
        std::fs::read_to_string(f.at("edit.txt")).unwrap(),
        "before\n"
    );

    let (_, undone) = restore(&f.ws, &undo, "s/undo/2");
    assert_eq!(undone.len(), 4);
    assert_eq!(listing(f.ws.path()), before_restore);
    let refs: Vec<String> =
        f.ws.snapshots()
            .unwrap()
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
    assert_eq!(refs, ["s/0", "s/1", "s/undo/1", "s/undo/2"]);
}

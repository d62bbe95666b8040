//! `diff` lists every path that differs between two snapshots, sorted: content, mode and
//! type changes (file to symlink) are modifications.

#![cfg(unix)]

use crate::common::*;
use zeroclaw_checkpoint::{Change, ChangeKind, Options};

#[test]
fn diff_lists_added_modified_and_deleted_paths() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    for file in ["content", "mode", "kind", "deleted", "same"] {
        write(f.at(&format!("d/{file}")), file);
    }
    let a = f.ws.snapshot(&name("s/a"), None).unwrap();
    write(f.at("d/content"), "new content");
    set_executable(f.at("d/mode"), true);
    std::fs::remove_file(f.at("d/kind")).unwrap();
    symlink("same", f.at("d/kind"));
    std::fs::remove_file(f.at("d/deleted")).unwrap();
    write(f.at("d/e/added"), "");
    let b = f.ws.snapshot(&name("s/b"), Some(&a.id)).unwrap();

    let expected: Vec<Change> = [
        ("d/content", ChangeKind::Modified),
        ("d/deleted", ChangeKind::Deleted),
        ("d/e/added", ChangeKind::Added),
        ("d/kind", ChangeKind::Modified),
        ("d/mode", ChangeKind::Modified),
    ]
    .into_iter()
    .map(|(p, change)| Change {
        path: p.into(),
        change,
    })
    .collect();
    assert_eq!(b.changes, expected);
    assert_eq!(f.ws.diff(&a.id, &b.id).unwrap(), expected);
    let back: Vec<ChangeKind> =
        f.ws.diff(&b.id, &a.id)
            .unwrap()
            .iter()
            .map(|c| c.change)
            .collect();
    assert_eq!(
        back,
        [
            ChangeKind::Modified,
            ChangeKind::Added,
            ChangeKind::Deleted,
            ChangeKind::Modified,
            ChangeKind::Modified
        ]
    );
    assert!(f.ws.diff(&a.id, &a.id).unwrap().is_empty());
}

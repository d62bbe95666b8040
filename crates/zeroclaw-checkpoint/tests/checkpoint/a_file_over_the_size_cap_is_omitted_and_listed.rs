//! A file over `max_file_bytes` is left out of the snapshot and listed with its size; a
//! captured file that grows past the cap leaves the snapshot; a restore never touches
//! either.

use crate::common::*;
use zeroclaw_checkpoint::{Change, ChangeKind, LargeFile, Options};

#[test]
fn a_file_over_the_size_cap_is_omitted_and_listed() {
    let options = Options {
        max_file_bytes: 4096,
        ..Options::default()
    };
    let Some(f) = fixture(options) else { return };
    write(f.at("small.txt"), "small\n");
    write(f.at("grows.txt"), "small for now\n");
    write(f.at("data/huge.bin"), noise(10_000, 3));
    let first = f.ws.snapshot(&name("s/0"), None).unwrap();
    assert_eq!(
        first.omitted.too_large,
        vec![LargeFile {
            path: "data/huge.bin".into(),
            bytes: 10_000
        }]
    );
    assert_eq!(first.files, 2);

    write(f.at("grows.txt"), noise(5000, 4));
    write(f.at("small.txt"), "changed\n");
    let second = f.ws.snapshot(&name("s/1"), Some(&first.id)).unwrap();
    assert_eq!(second.files, 1);
    assert_eq!(
        second.changes,
        vec![
            Change {
                path: "grows.txt".into(),
                change: ChangeKind::Deleted
            },
            Change {
                path: "small.txt".into(),
                change: ChangeKind::Modified
            },
        ]
    );
    assert_eq!(second.omitted.too_large.len(), 2);

    // Back to the first: small.txt is reverted; the large files are another matter
    // (grows.txt is reported, see a_file_no_snapshot_holds_is_never_overwritten_silently).
    let third_huge = noise(10_000, 5);
    write(f.at("data/huge.bin"), &third_huge);
    let plan = f.ws.plan_restore(&first.id, &[]).unwrap();
    assert_eq!(
        plan.changes,
        vec![
            Change {
                path: "grows.txt".into(),
                change: ChangeKind::Added
            },
            Change {
                path: "small.txt".into(),
                change: ChangeKind::Modified
            },
        ]
    );
    assert_eq!(std::fs::read(f.at("data/huge.bin")).unwrap(), third_huge);
}

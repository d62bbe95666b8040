//! Snapshots are content-addressed: an unchanged workspace gives the same id and adds
//! nothing to the store but its ref, and a change of one file in many adds about that file's size.

use crate::common::*;
use zeroclaw_checkpoint::Options;

#[test]
fn an_unchanged_workspace_snapshots_to_the_same_id() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    for i in 0..300 {
        write(
            f.at(&format!("d{}/f{i}.txt", i % 10)),
            format!("file {i}\n").repeat(20),
        );
    }
    let first = f.ws.snapshot(&name("s/0"), None).unwrap();
    let bytes = f.ws.store_bytes();
    let again = f.ws.snapshot(&name("s/1"), Some(&first.id)).unwrap();
    assert_eq!(again.id, first.id);
    assert!(again.changes.is_empty());
    // Only the new ref's file (the id and a newline).
    assert_eq!(f.ws.store_bytes(), bytes + 41);

    write(f.at("d3/f3.txt"), noise(20_000, 9));
    let changed = f.ws.snapshot(&name("s/2"), Some(&first.id)).unwrap();
    assert_ne!(changed.id, first.id);
    assert_eq!(changed.changes.len(), 1);
    let grown = f.ws.store_bytes() - bytes;
    // The new blob (about 20 KB, incompressible) and two new trees.
    assert!((20_000..40_000).contains(&grown), "grew by {grown} bytes");
}

//! `snapshot_many` captures the workspace once for several asks: every name points at the
//! one snapshot, each ask gets its own changes since its own parent, and a parent the store
//! does not hold fails only the ask that named it.

use crate::common::*;
use zeroclaw_checkpoint::{Error, Options, SnapshotId};

#[test]
fn many_asks_share_one_capture() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    write(f.at("a"), "1");
    let first = f.ws.snapshot(&name("s1/c/start"), None).unwrap();
    write(f.at("b"), "2");
    let second = f.ws.snapshot(&name("s2/c/start"), None).unwrap();
    write(f.at("c"), "3");

    let unknown = SnapshotId::parse("0123456789abcdef0123456789abcdef01234567").unwrap();
    let asks = [
        (name("s1/c/end"), Some(first.id.clone())),
        (name("s2/c/end"), Some(second.id.clone())),
        (name("s3/c/start"), None),
        (name("s4/c/end"), Some(unknown)),
    ];
    let answers = f.ws.snapshot_many(&asks).unwrap();
    assert_eq!(answers.len(), asks.len());

    let paths = |i: usize| -> Vec<String> {
        let snapshot = answers[i].as_ref().unwrap();
        snapshot
            .changes
            .iter()
            .map(|c| c.path.to_string_lossy().into_owned())
            .collect()
    };
    assert_eq!(paths(0), ["b", "c"], "changes since the first ask's parent");
    assert_eq!(paths(1), ["c"], "changes since the second ask's parent");
    assert!(paths(2).is_empty(), "no parent, no changes");
    assert!(
        matches!(answers[3], Err(Error::UnknownSnapshot { .. })),
        "{:?}",
        answers[3]
    );

    // One capture: every ask's snapshot is the same, and every name points at it (the
    // unknown parent's too, as `snapshot` names a snapshot taken all the same).
    let id = answers[0].as_ref().unwrap().id.clone();
    assert!(answers[..3].iter().all(|a| a.as_ref().unwrap().id == id));
    let refs = f.ws.snapshots().unwrap();
    for wanted in ["s1/c/end", "s2/c/end", "s3/c/start", "s4/c/end"] {
        let (_, at) = refs
            .iter()
            .find(|(n, _)| n.as_str() == wanted)
            .unwrap_or_else(|| panic!("{wanted} was not set: {refs:?}"));
        assert_eq!(*at, id, "{wanted}");
    }
    // And it is the workspace as it is now.
    assert_eq!(f.ws.snapshot(&name("s5/c/start"), None).unwrap().id, id);
}

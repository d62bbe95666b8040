//! A snapshot id the store does not hold (pruned, another workspace's) or a malformed one,
//! and a ref name git would misread, are refused with errors that say so.

use crate::common::*;
use zeroclaw_checkpoint::{Error, Options, RefName, SnapshotId};

#[test]
fn unknown_and_malformed_ids_are_clear_errors() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    let unknown = SnapshotId::parse(&"1".repeat(40)).unwrap();
    // No store yet.
    assert!(matches!(
        f.ws.diff(&unknown, &unknown),
        Err(Error::UnknownSnapshot { .. })
    ));
    write(f.at("a"), "a");
    let snap = f.ws.snapshot(&name("s/0"), None).unwrap();
    let err = f.ws.diff(&snap.id, &unknown).unwrap_err();
    assert!(
        matches!(&err, Error::UnknownSnapshot { id, .. } if *id == unknown),
        "{err:?}"
    );
    assert!(err.to_string().contains("is not in the checkpoint store"));
    let err = f.ws.snapshot(&name("s/1"), Some(&unknown)).unwrap_err();
    assert!(matches!(err, Error::UnknownSnapshot { .. }));
    assert!(SnapshotId::parse("HEAD").is_err());
    let err = RefName::new("../../heads/main").unwrap_err();
    assert!(
        err.to_string().starts_with("invalid checkpoint ref name"),
        "{err}"
    );
}

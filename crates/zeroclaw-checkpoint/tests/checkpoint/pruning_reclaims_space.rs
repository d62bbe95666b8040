//! Snapshots live as long as their refs: pruning the refs of a session reclaims the bytes
//! only they held, and pruning the last one deletes the workspace's store.

use crate::common::*;
use zeroclaw_checkpoint::Options;

#[test]
fn pruning_reclaims_space() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    write(f.at("keep.txt"), "kept\n");
    f.ws.snapshot(&name("kept/0"), None).unwrap();
    for turn in 0..3u64 {
        write(f.at("big.bin"), noise(2 << 20, turn + 10));
        f.ws.snapshot(&name(&format!("old/{turn}")), None).unwrap();
    }
    std::fs::remove_file(f.at("big.bin")).unwrap();
    f.ws.snapshot(&name("kept/1"), None).unwrap();
    let full = f.ws.store_bytes();
    assert!(
        full > 6 << 20,
        "three 2 MiB versions should be stored: {full}"
    );

    let pruned = f.ws.prune(|n| n.as_str().starts_with("kept/")).unwrap();
    assert_eq!((pruned.refs_removed, pruned.refs_kept), (3, 2));
    assert_eq!(pruned.bytes_before, full);
    assert!(
        pruned.bytes_after < 512 * 1024,
        "still {} bytes",
        pruned.bytes_after
    );
    assert_eq!(f.ws.store_bytes(), pruned.bytes_after);
    let names: Vec<String> =
        f.ws.snapshots()
            .unwrap()
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
    assert_eq!(names, ["kept/0", "kept/1"]);

    // What is kept still restores.
    write(f.at("keep.txt"), "changed\n");
    let kept0 = f.ws.snapshots().unwrap()[0].1.clone();
    restore(&f.ws, &kept0, "kept/undo");
    assert_eq!(std::fs::read_to_string(f.at("keep.txt")).unwrap(), "kept\n");

    let all = f.engine.prune_all(|_, _| false).unwrap();
    assert_eq!(
        (all.refs_removed, all.refs_kept, all.bytes_after),
        (3, 0, 0)
    );
    assert!(!f.ws.store_dir().exists());
    assert!(f.ws.snapshots().unwrap().is_empty());
    // And the workspace can start again.
    f.ws.snapshot(&name("new/0"), None).unwrap();
}

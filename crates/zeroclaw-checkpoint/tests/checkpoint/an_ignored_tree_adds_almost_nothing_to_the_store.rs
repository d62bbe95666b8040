//! A 50 MB tree that `.gitignore` names (a `node_modules/`) is neither read nor stored: the
//! snapshot is the same, the store grows by (almost) nothing, and the snapshot says what
//! it left out.

use crate::common::*;
use zeroclaw_checkpoint::{Ignored, Options};

#[test]
fn an_ignored_tree_adds_almost_nothing_to_the_store() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    write(f.at(".gitignore"), "node_modules/\n*.log\n");
    write(f.at("src/main.js"), "console.log('hi')\n");
    let before = f.ws.snapshot(&name("s/0"), None).unwrap();
    let bytes_before = f.ws.store_bytes();

    for i in 0..50 {
        write(
            f.at(&format!("node_modules/pkg{}/blob{i}.bin", i % 7)),
            noise(1 << 20, i + 1),
        );
    }
    write(f.at("debug.log"), "ignored too\n");
    let after = f.ws.snapshot(&name("s/1"), Some(&before.id)).unwrap();

    assert_eq!(after.id, before.id, "the ignored tree changed the snapshot");
    assert!(after.changes.is_empty());
    let grown = f.ws.store_bytes().saturating_sub(bytes_before);
    assert!(grown < 64 * 1024, "the store grew by {grown} bytes");
    let ignored = f.ws.ignored(100).unwrap();
    assert_eq!(
        ignored.entries,
        vec![
            Ignored {
                path: "debug.log".into(),
                directory: false
            },
            Ignored {
                path: "node_modules".into(),
                directory: true
            },
        ]
    );
    assert_eq!(ignored.unlisted, 0);
    let one = f.ws.ignored(1).unwrap();
    assert_eq!((one.entries.len(), one.unlisted), (1, 1));
}

//! A git killed mid-write (the daemon SIGKILLed during a snapshot) leaves `index.lock` in
//! the shadow repository; the next operation, holding the workspace's lock, knows no git
//! is running there and clears it.

use crate::common::*;
use zeroclaw_checkpoint::Options;

#[test]
fn a_killed_git_leaves_no_lock_behind() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    write(f.at("a.txt"), "a\n");
    f.ws.snapshot(&name("s/0"), None).unwrap();
    std::fs::write(f.ws.store_dir().join("index.lock"), b"").unwrap();
    write(f.at("a.txt"), "changed\n");
    let snap = f.ws.snapshot(&name("s/1"), None).unwrap();
    assert_eq!(snap.files, 1);
    assert!(!f.ws.store_dir().join("index.lock").exists());
}

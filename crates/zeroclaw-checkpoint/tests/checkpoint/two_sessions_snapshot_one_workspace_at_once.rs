//! Sessions in one workspace share its shadow repository; their operations take turns on
//! its lock, so eight threads snapshotting at the same moment all succeed and every ref
//! is there.

use std::sync::Barrier;

use crate::common::*;
use zeroclaw_checkpoint::Options;

#[test]
fn two_sessions_snapshot_one_workspace_at_once() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    write(f.at("shared.txt"), "shared\n");
    const THREADS: usize = 8;
    let barrier = Barrier::new(THREADS);
    std::thread::scope(|scope| {
        for i in 0..THREADS {
            let (f, barrier) = (&f, &barrier);
            scope.spawn(move || {
                write(f.at(&format!("session{i}.txt")), format!("{i}\n"));
                barrier.wait();
                // A handle of its own, as each session would have.
                let ws = f.engine.workspace(f.ws.path()).unwrap();
                ws.snapshot(&name(&format!("session{i}/0")), None).unwrap();
                ws.snapshot(&name(&format!("session{i}/1")), None).unwrap();
            });
        }
    });
    assert_eq!(f.ws.snapshots().unwrap().len(), 2 * THREADS);
    let last = f.ws.snapshot(&name("check/0"), None).unwrap();
    assert_eq!(last.files, THREADS + 1);
}

//! Where a restore would write over a file that the current state does not capture (here:
//! it grew past the size cap), it reports `NotCaptured` and waits for `force`; where it
//! would have to remove uncaptured content (a directory holding ignored files, or an
//! ignored symlink to a directory outside), it is `Blocked`, even when forced: nothing is
//! ever written through a symlink.

#![cfg(unix)]

use crate::common::*;
use zeroclaw_checkpoint::{Conflict, ConflictReason, Options, Restore, RestoreOutcome};

fn conflicts_of(outcome: RestoreOutcome) -> Vec<Conflict> {
    match outcome {
        RestoreOutcome::Refused { conflicts } => conflicts,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_file_no_snapshot_holds_is_never_overwritten_silently() {
    let options = Options {
        max_file_bytes: 1000,
        ..Options::default()
    };
    let Some(f) = fixture(options) else { return };
    write(f.at("log.txt"), "short\n");
    write(f.at("work"), "a file at the checkpoint\n");
    write(
        f.at("out/result.txt"),
        "in a real directory at the checkpoint\n",
    );
    let checkpoint = f.ws.snapshot(&name("s/0"), None).unwrap();

    write(f.at("log.txt"), "x".repeat(5000));
    let later = f.ws.snapshot(&name("s/1"), None).unwrap();
    assert_eq!(later.omitted.too_large.len(), 1);

    let request = Restore {
        target: checkpoint.id.clone(),
        undo_ref: name("s/undo"),
        gaps: Vec::new(),
        force: false,
    };
    assert_eq!(
        conflicts_of(f.ws.restore(&request).unwrap()),
        vec![Conflict {
            path: "log.txt".into(),
            reason: ConflictReason::NotCaptured
        }]
    );
    assert_eq!(std::fs::read(f.at("log.txt")).unwrap().len(), 5000);
    let forced =
        f.ws.restore(&Restore {
            force: true,
            ..request.clone()
        })
        .unwrap();
    assert!(matches!(forced, RestoreOutcome::Restored { .. }));
    assert_eq!(std::fs::read_to_string(f.at("log.txt")).unwrap(), "short\n");

    // Now `work` becomes a directory of ignored files, and `out` an ignored symlink to a
    // directory outside the workspace.
    let outside = f.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    write(f.at(".gitignore"), "*.tmp\n/out\n");
    std::fs::remove_file(f.at("work")).unwrap();
    write(f.at("work/scratch.tmp"), "ignored\n");
    std::fs::remove_dir_all(f.at("out")).unwrap();
    symlink(outside.to_str().unwrap(), f.at("out"));
    let blocked = vec![
        Conflict {
            path: "out/result.txt".into(),
            reason: ConflictReason::Blocked,
        },
        Conflict {
            path: "work".into(),
            reason: ConflictReason::Blocked,
        },
    ];
    for force in [false, true] {
        let before = listing(f.ws.path());
        let outcome =
            f.ws.restore(&Restore {
                force,
                ..request.clone()
            })
            .unwrap();
        assert_eq!(conflicts_of(outcome), blocked, "force: {force}");
        assert_eq!(listing(f.ws.path()), before);
        assert_eq!(
            std::fs::read_dir(&outside).unwrap().count(),
            0,
            "written through a symlink"
        );
    }
}

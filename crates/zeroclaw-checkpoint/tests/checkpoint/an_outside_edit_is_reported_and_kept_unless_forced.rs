//! The daemon snapshots before and after each turn; what changed between one turn's end
//! and the next turn's start (or the current state) was edited outside the agent. A restore
//! that would overwrite such an edit changes nothing and reports it; `force` overwrites it.

use crate::common::*;
use zeroclaw_checkpoint::{Conflict, ConflictReason, Gap, Options, Restore, RestoreOutcome};

#[test]
fn an_outside_edit_is_reported_and_kept_unless_forced() {
    let Some(f) = fixture(Options::default()) else {
        return;
    };
    for file in ["agent.txt", "between.txt", "after.txt", "untouched.txt"] {
        write(f.at(file), format!("{file} at the checkpoint\n"));
    }
    // Turn 1.
    let start1 = f.ws.snapshot(&name("s/1"), None).unwrap();
    write(f.at("agent.txt"), "the agent's edit\n");
    let end1 = f.ws.snapshot(&name("s/1-end"), None).unwrap();
    // The user, between the turns.
    write(f.at("between.txt"), "the user's edit between the turns\n");
    // Turn 2: the agent edits the same file again.
    let start2 = f.ws.snapshot(&name("s/2"), None).unwrap();
    write(f.at("between.txt"), "the agent's later edit\n");
    let end2 = f.ws.snapshot(&name("s/2-end"), None).unwrap();
    // The user, after the last turn.
    write(f.at("after.txt"), "the user's edit after the last turn\n");
    write(f.at("mine.txt"), "a file the user created\n");

    let gaps = vec![
        Gap {
            end: end1.id.clone(),
            next_start: Some(start2.id.clone()),
        },
        Gap {
            end: end2.id.clone(),
            next_start: None,
        },
    ];
    assert_eq!(
        f.ws.outside_edits(&gaps).unwrap(),
        ["after.txt", "between.txt", "mine.txt"].map(std::path::PathBuf::from)
    );
    let expected: Vec<Conflict> = ["after.txt", "between.txt", "mine.txt"]
        .into_iter()
        .map(|p| Conflict {
            path: p.into(),
            reason: ConflictReason::EditedOutside,
        })
        .collect();
    assert_eq!(
        f.ws.plan_restore(&start1.id, &gaps).unwrap().conflicts,
        expected
    );

    let before = listing(f.ws.path());
    let request = Restore {
        target: start1.id.clone(),
        undo_ref: name("s/undo/1"),
        gaps: gaps.clone(),
        force: false,
    };
    assert_eq!(
        f.ws.restore(&request).unwrap(),
        RestoreOutcome::Refused {
            conflicts: expected
        }
    );
    assert_eq!(
        listing(f.ws.path()),
        before,
        "a refused restore changed the workspace"
    );
    assert!(
        !f.ws
            .snapshots()
            .unwrap()
            .iter()
            .any(|(n, _)| n.as_str() == "s/undo/1"),
        "a refused restore left an undo ref"
    );

    let forced =
        f.ws.restore(&Restore {
            force: true,
            ..request
        })
        .unwrap();
    assert!(
        matches!(forced, RestoreOutcome::Restored { .. }),
        "{forced:?}"
    );
    for file in ["agent.txt", "between.txt", "after.txt", "untouched.txt"] {
        assert_eq!(
            std::fs::read_to_string(f.at(file)).unwrap(),
            format!("{file} at the checkpoint\n")
        );
    }
    assert!(!f.at("mine.txt").exists());
}

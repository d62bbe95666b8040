//! When the workspace contains the engine's own store or the daemon's data dir (a session
//! started in the home directory), neither is captured nor touched by a restore; a
//! workspace inside the store is refused.

use crate::common::*;
use zeroclaw_checkpoint::{Checkpoints, Error, Ignored, Options};

#[test]
fn the_store_and_the_data_dir_are_never_captured() {
    let dir = tempfile::tempdir().unwrap();
    let ws_path = dir.path().join("home");
    let data = ws_path.join(".zeroclaw/data");
    std::fs::create_dir_all(&data).unwrap();
    let options = Options {
        never_capture: vec![data.clone()],
        ..Options::default()
    };
    let engine = match Checkpoints::open(ws_path.join(".zeroclaw/data/checkpoints"), options) {
        Ok(engine) => engine,
        Err(Error::Unavailable { .. }) if cfg!(windows) => return,
        Err(e) => panic!("{e}"),
    };
    write(data.join("zeroclaw.db"), "the daemon's database\n");
    write(ws_path.join(".zeroclaw/config.toml"), "[provider]\n");
    write(ws_path.join("notes.txt"), "notes\n");
    let ws = engine.workspace(&ws_path).unwrap();
    let first = ws.snapshot(&name("s/0"), None).unwrap();
    assert_eq!(first.files, 2, "{:?}", first.omitted);
    assert_eq!(
        ws.ignored(100).unwrap().entries,
        vec![Ignored {
            path: ".zeroclaw/data".into(),
            directory: true
        }]
    );

    write(ws_path.join("notes.txt"), "changed\n");
    write(data.join("zeroclaw.db"), "the database moved on\n");
    restore(&ws, &first.id, "s/undo");
    assert_eq!(
        std::fs::read_to_string(ws_path.join("notes.txt")).unwrap(),
        "notes\n"
    );
    assert_eq!(
        std::fs::read_to_string(data.join("zeroclaw.db")).unwrap(),
        "the database moved on\n"
    );

    let err = engine
        .workspace(data.join("checkpoints/repos"))
        .unwrap_err();
    assert!(err.to_string().contains("never captured"), "{err}");
}

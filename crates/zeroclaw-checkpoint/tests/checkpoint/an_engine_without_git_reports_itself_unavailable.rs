//! Without a git to run, the engine does not open: it says checkpoints are unavailable and
//! why, and creates nothing. (Under Wine there is no git at all: the same outcome.)

use zeroclaw_checkpoint::{Checkpoints, Error, Options};

#[test]
fn an_engine_without_git_reports_itself_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let options = Options {
        git: dir.path().join("no-such-git"),
        ..Options::default()
    };
    let err = Checkpoints::open(&root, options).unwrap_err();
    assert!(matches!(err, Error::Unavailable { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("checkpoints are unavailable: git was not found"),
        "{message}"
    );
    assert!(message.contains("install git"), "{message}");
    assert!(!root.exists());
}

//! Windows and macOS: the sandbox is not implemented yet. The probe says so, a sandboxed
//! mode is refused with that reason, and `full` runs the command as before.

use std::process::Command;

use zeroclaw_sandbox::{Error, Mode, NOT_IMPLEMENTED, Policy, Support};

#[test]
fn the_sandbox_is_reported_unavailable_and_only_full_mode_runs() {
    let support = Support::probe();
    assert!(!support.is_available());
    assert_eq!(support.unavailable_reason(), Some(NOT_IMPLEMENTED));
    assert_eq!(support.mechanism(), "unavailable");
    assert_eq!(
        support.to_string(),
        format!("unavailable: {NOT_IMPLEMENTED}")
    );

    let dir = tempfile::tempdir().unwrap();
    for mode in [Mode::ReadOnly, Mode::WorkspaceWrite] {
        let err = Policy::new(mode, dir.path()).prepare(&support).unwrap_err();
        assert!(matches!(err, Error::Unavailable(_)), "{err}");
        assert_eq!(
            err.to_string(),
            format!("the sandbox is unavailable: {NOT_IMPLEMENTED}")
        );
    }
    let prepared = Policy::new(Mode::Full, dir.path())
        .prepare(&support)
        .unwrap();
    let mut cmd = if cfg!(windows) {
        let mut c = Command::new("cmd");
        c.args(["/C", "echo ran"]);
        c
    } else {
        let mut c = Command::new("sh");
        c.args(["-c", "echo ran"]);
        c
    };
    prepared.install(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("ran"));
}

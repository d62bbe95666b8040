//! A sandbox that cannot be applied in the child stops the command before it runs (never
//! runs it unconfined) and the spawn's error names the step that failed.

use std::process::{Command, Stdio};

use zeroclaw_sandbox::Mode;

use crate::common::{Fixture, variants};

#[test]
fn a_sandbox_that_fails_in_the_child_stops_the_spawn_and_names_the_step() {
    let Some((_, support)) = variants().into_iter().find(|(v, _)| *v == "userns") else {
        return;
    };
    let fx = Fixture::new();
    let doomed = fx.root.join("doomed");
    std::fs::create_dir(&doomed).unwrap();
    let prepared = fx
        .policy(Mode::WorkspaceWrite)
        .hide(&doomed)
        .prepare(&support)
        .unwrap();
    // Gone between prepare and spawn: its cover cannot be mounted.
    std::fs::remove_dir(&doomed).unwrap();
    let marker = fx.cwd.join("ran");
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("echo ran > '{}'", marker.display()))
        .stdin(Stdio::null());
    prepared.install(&mut cmd);
    let err = cmd
        .spawn()
        .map_err(|e| prepared.spawn_error(e))
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("the sandbox could not be applied to the command")
            && text.contains(&format!("covering the hidden path {}", doomed.display())),
        "{text}"
    );
    assert!(!marker.exists(), "the command ran anyway");
}

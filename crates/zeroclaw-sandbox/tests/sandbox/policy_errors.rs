//! Policies that cannot be enforced are refused before anything runs, each with what is
//! wrong and what to do.

use zeroclaw_sandbox::{Error, Mode, Policy};

use crate::common::{Fixture, support};

fn refused(policy: &Policy) -> Error {
    policy.prepare(&support()).unwrap_err()
}

#[test]
fn a_working_directory_inside_the_daemons_files_is_refused() {
    let fx = Fixture::new();
    let mut policy = fx.policy(Mode::ReadOnly);
    policy.cwd = fx.data_dir.clone();
    assert!(matches!(refused(&policy), Error::CwdHidden { .. }));
    let mut policy = fx.policy(Mode::WorkspaceWrite);
    policy.writable_roots.push(fx.config_dir.clone());
    let err = refused(&policy);
    assert!(matches!(err, Error::WritableHidden { .. }), "{err}");
}

#[test]
fn a_missing_hidden_path_a_command_could_create_is_refused() {
    let fx = Fixture::new();
    // A config dir that does not exist yet, inside the workspace.
    let policy = fx
        .policy(Mode::WorkspaceWrite)
        .hide(fx.cwd.join(".zeroclaw"));
    let err = refused(&policy);
    assert!(matches!(err, Error::HiddenCreatable { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("create it before running commands"),
        "{err}"
    );
    // Where no command can write, a missing hidden path is simply skipped.
    let policy = fx
        .policy(Mode::WorkspaceWrite)
        .hide(fx.outside.join("nothing-here"));
    policy.prepare(&support()).unwrap();
    let policy = fx.policy(Mode::ReadOnly).hide(fx.cwd.join(".zeroclaw"));
    policy.prepare(&support()).unwrap();
}

#[test]
fn system_directories_can_never_be_made_writable() {
    let fx = Fixture::new();
    for dir in ["/", "/dev", "/proc", "/sys/kernel"] {
        let policy = Policy::new(Mode::WorkspaceWrite, dir);
        let err = refused(&policy);
        assert!(matches!(err, Error::TooWide { .. }), "{dir}: {err}");
        let policy = Policy::new(Mode::WorkspaceWrite, &fx.cwd).writable_root(dir);
        assert!(matches!(refused(&policy), Error::TooWide { .. }), "{dir}");
    }
    // Read-only from the root is fine.
    Policy::new(Mode::ReadOnly, "/")
        .prepare(&support())
        .unwrap();
}

#[test]
fn relative_and_missing_paths_are_refused() {
    let fx = Fixture::new();
    let err = refused(&Policy::new(Mode::ReadOnly, "work"));
    assert!(
        matches!(
            err,
            Error::NotAbsolute {
                what: "working directory",
                ..
            }
        ),
        "{err}"
    );
    let err = refused(&fx.policy(Mode::ReadOnly).hide("data"));
    assert!(
        matches!(
            err,
            Error::NotAbsolute {
                what: "hidden path",
                ..
            }
        ),
        "{err}"
    );
    let err = refused(&Policy::new(Mode::ReadOnly, fx.root.join("gone")));
    assert!(matches!(err, Error::Cwd { .. }), "{err}");
    let err = refused(
        &fx.policy(Mode::WorkspaceWrite)
            .writable_root(fx.root.join("gone")),
    );
    assert!(matches!(err, Error::WritableRoot { .. }), "{err}");
    let err = refused(&Policy::new(Mode::ReadOnly, fx.outside.join("victim.txt")));
    assert!(matches!(err, Error::Cwd { .. }), "{err}");
}

//! `explain` blames the sandbox only for what the sandbox did: ordinary failures of a
//! sandboxed command are left unexplained.

use std::os::unix::fs::PermissionsExt;

use zeroclaw_sandbox::Mode;

use crate::common::{Fixture, run, variants};

#[test]
fn an_ordinary_failure_is_not_blamed_on_the_sandbox() {
    for (variant, support) in variants() {
        for mode in [Mode::ReadOnly, Mode::WorkspaceWrite] {
            let fx = Fixture::new();
            let policy = fx.policy(mode);
            for script in [
                "exit 3",
                "cat /no/such/file",
                "ls no-such-dir",
                "cd /no/such/dir",
                r#"cat "$OUT""#,
                "false",
                "grep -q nothing /etc/passwd",
            ] {
                let what = format!("{variant}, {mode}: {script}");
                let r = run(&fx, &policy, &support, script);
                r.assert_failed(&what);
                assert_eq!(
                    r.prepared.explain(&r.output()),
                    None,
                    "{what}\n{}",
                    r.output()
                );
            }
        }
    }
}

#[test]
fn a_file_its_permissions_forbid_is_not_blamed_on_the_sandbox() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED: needs root to give a file to another user");
        return;
    }
    for (variant, support) in variants() {
        let fx = Fixture::new();
        let private = fx.outside.join("private.txt");
        std::fs::write(&private, "someone else's\n").unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::chown(&private, Some(12345), Some(12345)).unwrap();
        // The daemon (root) could read it; the command, without capabilities, cannot.
        let r = run(
            &fx,
            &fx.policy(Mode::WorkspaceWrite),
            &support,
            r#"cat "$OUT/private.txt""#,
        );
        r.assert_failed(variant);
        assert!(
            r.output().contains("Permission denied"),
            "{variant}: {}",
            r.output()
        );
        assert_eq!(r.prepared.explain(&r.output()), None, "{variant}");
    }
}

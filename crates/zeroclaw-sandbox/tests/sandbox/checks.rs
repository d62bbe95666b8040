//! The file tools' in-process checks: the same paths the kernel refuses a sandboxed
//! command, refused with the same words (`Refusal`'s text, which `explain` also gives).

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use zeroclaw_sandbox::{Mode, Refusal};

use crate::common::{Fixture, run, variants};

#[test]
fn the_checks_refuse_the_paths_the_kernel_refuses_with_the_same_words() {
    for (variant, support) in variants() {
        for mode in [Mode::ReadOnly, Mode::WorkspaceWrite] {
            let fx = Fixture::new();
            symlink(&fx.outside, fx.cwd.join("planted")).unwrap();
            symlink(&fx.data_dir, fx.cwd.join("to-data")).unwrap();
            symlink(fx.outside.join("new.txt"), fx.cwd.join("dangling")).unwrap();
            std::fs::write(fx.cwd.join("inside.txt"), "inside\n").unwrap();
            let mut outside = Command::new("sleep")
                .arg("1000")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let policy = fx.policy(mode);
            let checker = policy.checker();
            let paths: Vec<PathBuf> = vec![
                fx.victim(),
                "../outside/victim.txt".into(),
                "planted/victim.txt".into(),
                "dangling".into(),
                "inside.txt".into(),
                "sub-new.txt".into(),
                fx.extra.join("x.txt"),
                fx.data_dir.join("zeroclaw.db"),
                "to-data/zeroclaw.db".into(),
                fx.config_dir.join("config.toml"),
                PathBuf::from(format!("/proc/self/root{}", fx.victim().display())),
                "/etc/passwd".into(),
                "/dev/ptmx".into(),
                "/dev/null".into(),
                PathBuf::from(format!("/proc/{}/environ", outside.id())),
            ];
            for path in &paths {
                for (access, script) in [
                    ("read", format!("cat '{}' > /dev/null", path.display())),
                    ("write", format!("echo x >> '{}'", path.display())),
                ] {
                    let what = format!("{variant}, {mode}: {access} {}", path.display());
                    let check = match access {
                        "read" => checker.check_read(path),
                        _ => checker.check_write(path),
                    };
                    let r = run(&fx, &policy, &support, &script);
                    // A read of a file that does not exist fails for that reason alone.
                    let missing =
                        access == "read" && !checker.resolve(path).exists() && check.is_ok();
                    if missing {
                        continue;
                    }
                    assert_eq!(
                        r.status.success(),
                        check.is_ok(),
                        "{what}: kernel and check disagree: {check:?}\n{}",
                        r.output()
                    );
                    if let Err(refusal) = check {
                        assert_eq!(
                            r.prepared.explain(&r.output()).map(|e| e.to_string()),
                            Some(refusal.to_string()),
                            "{what}\n{}",
                            r.output()
                        );
                    }
                }
            }
            let _ = outside.kill();
            let _ = outside.wait();
            // The victim was appended to only if a check let it through: it must be intact.
            fx.assert_victim_intact(&format!("{variant}, {mode}"));
        }
    }
}

#[test]
fn the_checks_refuse_the_daemons_own_process_files_which_commands_may_read_for_themselves() {
    let fx = Fixture::new();
    let policy = fx.policy(Mode::WorkspaceWrite);
    for path in [
        "/proc/self/environ",
        "/proc/self/mem",
        "/proc/thread-self/status",
    ] {
        let refusal = policy.check_read(Path::new(path)).unwrap_err();
        assert!(
            matches!(refusal, Refusal::Process { path: Some(_) }),
            "{path}: {refusal}"
        );
        assert!(
            refusal.to_string().starts_with("blocked by the sandbox: "),
            "{refusal}"
        );
    }
    assert!(policy.check_read(Path::new("/proc/cpuinfo")).is_ok());
}

#[test]
fn read_only_refuses_every_write_and_full_refuses_nothing() {
    let fx = Fixture::new();
    let read_only = fx.policy(Mode::ReadOnly);
    let err = read_only.check_write(&fx.cwd.join("a.txt")).unwrap_err();
    assert_eq!(
        err,
        Refusal::Write {
            path: fx.cwd.join("a.txt"),
            mode: Mode::ReadOnly
        }
    );
    assert!(err.to_string().contains("read-only"), "{err}");
    assert!(read_only.check_read(&fx.cwd.join("a.txt")).is_ok());

    let full = fx.policy(Mode::Full);
    for path in [
        fx.victim(),
        fx.data_dir.join("zeroclaw.db"),
        "/proc/self/environ".into(),
    ] {
        assert!(full.check_read(&path).is_ok());
        assert!(full.check_write(&path).is_ok());
    }
}

#[test]
fn a_relative_path_is_taken_from_the_working_directory_and_returned_resolved() {
    let fx = Fixture::new();
    std::fs::create_dir(fx.cwd.join("sub")).unwrap();
    symlink("sub", fx.cwd.join("alias")).unwrap();
    let policy = fx.policy(Mode::WorkspaceWrite);
    assert_eq!(
        policy.check_write(Path::new("alias/new.txt")).unwrap(),
        fx.cwd.join("sub/new.txt")
    );
    assert_eq!(
        policy.check_write(Path::new("sub/../x")).unwrap(),
        fx.cwd.join("x")
    );
    assert_eq!(
        policy
            .check_write(Path::new("sub/../../outside/v"))
            .unwrap_err(),
        Refusal::Write {
            path: fx.outside.join("v"),
            mode: Mode::WorkspaceWrite
        }
    );
}

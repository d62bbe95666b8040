//! Processes outside the sandbox: a sandboxed command can neither signal nor trace nor
//! inspect them; inside, it keeps its own children, and it holds no capability and no way
//! to gain privileges.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use zeroclaw_sandbox::{Mode, Refusal};

use crate::common::{Fixture, helper, helper_result, run, variants};

const PROCESS_SECRET: &str = "secret-in-the-environment";

#[test]
fn a_process_outside_the_sandbox_can_be_neither_signalled_nor_traced_nor_read() {
    for (variant, support) in variants() {
        for mode in [Mode::ReadOnly, Mode::WorkspaceWrite] {
            let fx = Fixture::new();
            let policy = fx.policy(mode);
            let what = format!("{variant}, {mode}");
            // The test's own child, outside the sandbox, same user.
            let mut outside = Outside::start();
            let pid = outside.0.id();

            let r = run(&fx, &policy, &support, &format!("kill -TERM {pid}"));
            r.assert_failed(&format!("{what}: kill"));
            assert_eq!(
                r.prepared.explain(&r.output()),
                Some(Refusal::Process { path: None }),
                "{what}: {}",
                r.output()
            );
            let r = run(&fx, &policy, &support, &helper(&format!("ptrace {pid}")));
            assert_eq!(
                helper_result(&r.output()),
                Err(libc::EPERM),
                "{what}: ptrace"
            );
            for file in ["environ", "mem", "maps"] {
                let r = run(&fx, &policy, &support, &format!("cat /proc/{pid}/{file}"));
                r.assert_failed(&format!("{what}: /proc/{pid}/{file}"));
                assert!(!r.output().contains(PROCESS_SECRET), "{what}: {file}");
            }
            let r = run(
                &fx,
                &policy,
                &support,
                &format!("ls /proc/{pid}/root/ /proc/{pid}/cwd/"),
            );
            r.assert_failed(&format!("{what}: /proc/{pid}/root"));

            // Still alive, and it dies of the test's SIGKILL, not of the command's SIGTERM.
            outside.0.kill().unwrap();
            let status = outside.0.wait().unwrap();
            assert_eq!(status.signal(), Some(libc::SIGKILL), "{what}: {status}");
        }
    }
}

#[test]
fn a_command_can_signal_and_wait_for_its_own_children() {
    for (variant, support) in variants() {
        let fx = Fixture::new();
        let r = run(
            &fx,
            &fx.policy(Mode::ReadOnly),
            &support,
            "sleep 1000 & kill -TERM $! && wait $!; echo status=$?",
        );
        assert!(r.stdout.contains("status=143"), "{variant}: {}", r.output());
    }
}

#[test]
fn a_sandboxed_command_holds_no_capability_and_cannot_gain_one() {
    for (variant, support) in variants() {
        let fx = Fixture::new();
        let r = run(
            &fx,
            &fx.policy(Mode::WorkspaceWrite),
            &support,
            "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status",
        );
        r.assert_ok(variant);
        for line in r.stdout.lines() {
            let (name, value) = line.split_once(':').unwrap();
            let value = value.trim();
            match name {
                "NoNewPrivs" => assert_eq!(value, "1", "{variant}: {line}"),
                "Seccomp" => assert_eq!(value, "2", "{variant}: {line}"),
                _ => assert!(value.chars().all(|c| c == '0'), "{variant}: {line}"),
            }
        }
        assert_eq!(r.stdout.lines().count(), 7, "{variant}: {}", r.stdout);
    }
}

/// A process outside the sandbox (the test's own child, same user), killed if the test
/// fails before it does.
struct Outside(std::process::Child);

impl Outside {
    fn start() -> Outside {
        Outside(
            Command::new("sleep")
                .arg("1000")
                .env("OUTSIDE_SECRET", PROCESS_SECRET)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        )
    }
}

impl Drop for Outside {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

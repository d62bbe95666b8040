//! Mode `full` applies nothing: the command runs as the daemon would run it.

use std::net::TcpListener;

use zeroclaw_sandbox::{Mode, Support};

use crate::common::{DB_SECRET, Fixture, helper, helper_result, run};

#[test]
fn full_mode_applies_nothing_to_the_command() {
    let fx = Fixture::new();
    let policy = fx.policy(Mode::Full).network(false);
    let support = crate::common::support();
    let prepared = policy.prepare(&support).unwrap();
    assert_eq!(prepared.mechanism(), "none");
    assert!(prepared.temp_dir().is_none());
    assert!(
        prepared.network(),
        "network is never restricted in full mode"
    );

    let r = run(
        &fx,
        &policy,
        &support,
        r#"echo changed > "$VICTIM"; cat "$DATA/zeroclaw.db""#,
    );
    r.assert_ok("full");
    assert_eq!(r.stdout, DB_SECRET);
    assert_eq!(std::fs::read_to_string(fx.victim()).unwrap(), "changed\n");
    assert_eq!(
        r.prepared
            .explain("touch: cannot touch '/etc/x': Permission denied"),
        None
    );

    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    let r = run(
        &fx,
        &policy,
        &support,
        &helper(&format!("connect-tcp {}", tcp.local_addr().unwrap())),
    );
    assert_eq!(helper_result(&r.output()), Ok(()));
    let r = run(
        &fx,
        &policy,
        &support,
        "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status",
    );
    assert!(
        r.stdout.contains("NoNewPrivs:\t0") && r.stdout.contains("Seccomp:\t0"),
        "{}",
        r.stdout
    );
}

#[test]
fn full_mode_runs_where_there_is_no_sandbox_and_nothing_else_does() {
    let fx = Fixture::new();
    let none = Support::unavailable("switched off for this test");
    let r = run(&fx, &fx.policy(Mode::Full), &none, "echo ran");
    assert_eq!(r.stdout, "ran\n");
    for mode in [Mode::ReadOnly, Mode::WorkspaceWrite] {
        let err = fx.policy(mode).prepare(&none).unwrap_err().to_string();
        assert_eq!(
            err,
            "the sandbox is unavailable: switched off for this test"
        );
    }
}

//! `status.sandbox`: the configured policy and the mechanism in force, or why there is
//! none; with `require = true` and no sandbox, tools refuse instead of running unconfined.

use crate::common::*;
use serde_json::json;

#[test]
fn status_reports_the_policy_and_the_mechanism() {
    // Absolute on the platform the test runs on (a TOML literal string: no escapes).
    let root = if cfg!(windows) { r"C:\srv\x" } else { "/srv/x" };
    let env = Env::new(
        "",
        &format!("[sandbox]\nmode = \"read-only\"\nnetwork = true\nwritable_roots = ['{root}']"),
    );
    let status = env.daemon.client().call("status", json!({}));
    let sandbox = &status["sandbox"];
    assert_eq!(sandbox["mode"], "read-only", "{status}");
    assert_eq!(sandbox["network"], true);
    assert_eq!(sandbox["writableRoots"], json!([root]));
    assert_eq!(sandbox["require"], false);
    if cfg!(target_os = "linux") {
        // This project's CI kernels have Landlock and seccomp (docs/sandbox.md).
        assert_eq!(sandbox["available"], true, "{sandbox}");
        let mechanism = sandbox["mechanism"].as_str().unwrap();
        assert!(mechanism.starts_with("landlock(abi "), "{mechanism}");
        assert!(sandbox["landlockAbi"].as_u64().unwrap() >= 3);
    } else {
        assert_eq!(sandbox["available"], false, "{sandbox}");
        assert_eq!(sandbox["mechanism"], "unavailable");
        assert_eq!(
            sandbox["reason"],
            "the sandbox is not implemented on this platform yet"
        );
        env.daemon
            .wait_for_log("sandbox unavailable: the sandbox is not implemented");
    }
}

#[test]
fn a_relative_writable_root_stops_the_daemon_naming_it() {
    let dir = TestDir::new();
    dir.write_config("[sandbox]\nwritable_roots = [\"build\"]\n");
    let out = dir.command(&["daemon", "--no-gateway"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sandbox.writable_roots[0] must be an absolute path"),
        "{err}"
    );
}

/// Where the sandbox is unavailable (Windows, under Wine in CI), `require = true` refuses
/// the command with the reason; nothing runs.
#[cfg(not(target_os = "linux"))]
#[test]
fn a_required_sandbox_that_is_unavailable_refuses_bash() {
    let env = Env::new("", &format!("{BASH_ALLOWED}\n[sandbox]\nrequire = true"));
    let made = env.work.join("made");
    env.fake.push(bash_call("c1", &touch_command(&made), 1));
    env.fake
        .push(zeroclaw_testkit::openai::text(&["refused, as it should"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "go", no_questions);
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    let text = output(result);
    assert!(
        text.contains("must run in the sandbox") && text.contains("not implemented"),
        "{text}"
    );
    assert!(!made.exists(), "nothing ran");
}

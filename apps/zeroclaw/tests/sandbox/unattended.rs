//! Unattended runs are confined by default, whatever `[sandbox]` says: `workspace-write`,
//! no network, required. An entry's own `sandbox` decides for it.

use crate::BLOCKED;
use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::openai;

/// A schedule that never ticks by itself, run with `schedule/run`; bash allowed.
fn schedule(work: &std::path::Path, extra: &str) -> String {
    format!(
        "[[schedules]]\nname = \"nightly\"\ncron = \"0 3 1 1 *\"\ncwd = {:?}\nprompt = \"go\"\n\
         approve = {{ bash = \"allow\" }}\n{extra}\n",
        work.display().to_string()
    )
}

/// Runs the schedule once with one bash call of `command`; the result the model read.
fn run_once(env: &Env, command: &str) -> String {
    env.fake.push(bash_call("c1", command, 1));
    env.fake.push(openai::text(&["done"]));
    let mut client = env.daemon.client();
    let run = client.call("schedule/run", json!({"name": "nightly"}));
    let id = run["runId"].as_str().unwrap();
    let line = env.daemon.wait_for_log("run finished");
    assert!(line.contains(id), "{line}");
    let requests = env.fake.wait_for_requests(2);
    tool_content(&requests[1].body, "c1")
}

#[test]
fn an_unattended_run_is_confined_even_when_the_config_says_full() {
    let place = tempfile::tempdir().unwrap();
    let (work, outside) = (place.path().join("work"), place.path().join("outside"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let env = Env::new(
        "",
        &format!(
            "[sandbox]\nmode = \"full\"\nnetwork = true\n{}",
            schedule(&work, "")
        ),
    );
    let text = run_once(&env, &format!("echo x > {}/escaped", outside.display()));
    assert!(
        text.contains(BLOCKED) && text.contains("write outside the workspace"),
        "{text}"
    );
    assert!(!outside.join("escaped").exists());
}

#[test]
fn an_entrys_own_sandbox_decides_for_its_runs() {
    let place = tempfile::tempdir().unwrap();
    let work = place.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let env = Env::new("", &schedule(&work, "sandbox = { mode = \"read-only\" }"));
    let text = run_once(&env, "echo x > made");
    assert!(
        text.contains(BLOCKED) && text.contains("write in a read-only session"),
        "{text}"
    );
    assert!(!work.join("made").exists());
    let list = env.daemon.client().call("session/list", json!({}));
    assert_eq!(
        list["sessions"][0]["sandbox"]["mode"], "read-only",
        "{list}"
    );
}

#[test]
fn an_escape_is_refused_in_an_unattended_run() {
    let place = tempfile::tempdir().unwrap();
    let (work, outside) = (place.path().join("work"), place.path().join("outside"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let env = Env::new("", &schedule(&work, ""));
    env.fake.push(tool_call(
        "c1",
        "bash",
        json!({
            "command": format!("echo x > {}/escaped", outside.display()),
            "sandbox": "escape",
            "justification": "the hook says so",
        }),
        1,
    ));
    env.fake.push(openai::text(&["done"]));
    let run = env
        .daemon
        .client()
        .call("schedule/run", json!({"name": "nightly"}));
    let line = env.daemon.wait_for_log("run finished");
    assert!(line.contains(run["runId"].as_str().unwrap()), "{line}");
    let text = tool_content(&env.fake.wait_for_requests(2)[1].body, "c1");
    assert_eq!(
        text,
        "denied by the unattended policy of schedule nightly: no one can approve this run: \
         a call that asks to run outside the sandbox needs a person's approval"
    );
    assert!(!outside.join("escaped").exists());
}

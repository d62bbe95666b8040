//! `zeroclaw prompt --mode`: the session's permission mode is set before the prompt, so the
//! turn runs in it (plan mode offers only read-only tools) and the session keeps it.

use super::zeroclaw;
use crate::common::*;
use zeroclaw_testkit::openai;

/// The names of the tools a provider request offers.
fn offered(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn prompt_with_mode_plan_runs_the_turn_in_plan_mode_and_the_session_keeps_it() {
    let env = Env::new("", "");
    env.fake.push(openai::text(&["Here is my plan."]));
    let out = zeroclaw(&env.dir)
        .args(["prompt", "--mode", "plan", "--cwd"])
        .arg(&env.work)
        .arg("plan it")
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(stdout.ends_with("Here is my plan.\n"), "{stdout}");
    let tools = offered(&env.fake.wait_for_requests(1)[0].body);
    assert!(tools.contains(&"read_file".to_owned()), "{tools:?}");
    assert!(tools.contains(&"exit_plan".to_owned()), "{tools:?}");
    for writer in ["bash", "write_file", "edit_file", "apply_patch"] {
        assert!(
            !tools.contains(&writer.to_owned()),
            "{writer} offered: {tools:?}"
        );
    }
    let listed = zeroclaw(&env.dir)
        .args(["sessions", "--json"])
        .assert()
        .code(0);
    let listed: serde_json::Value = serde_json::from_slice(&listed.get_output().stdout).unwrap();
    let sessions = listed.as_array().or(listed["sessions"].as_array()).unwrap();
    assert_eq!(sessions[0]["mode"], "plan", "{listed}");
}

#[test]
fn an_unknown_mode_is_refused_naming_the_modes() {
    let env = Env::new("", "");
    let out = zeroclaw(&env.dir)
        .args(["prompt", "--mode", "yolo", "hi"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(stderr.contains("accept-edits"), "{stderr}");
}

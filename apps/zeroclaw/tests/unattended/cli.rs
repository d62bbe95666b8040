//! `zeroclaw runs`, `zeroclaw schedules`, `zeroclaw schedules run NAME --wait`, and the
//! REST routes `GET /api/v1/runs[/{id}]`.

use crate::harness::*;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

fn stdout(hooks: &Hooks, args: &[&str]) -> String {
    let out = hooks.dir.command(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_cli_lists_runs_and_schedules_and_runs_one_to_its_end() {
    let hooks = Hooks::start(
        |work| {
            format!(
                "{}[[schedules]]\nname = \"nightly\"\ncron = \"0 2 * * *\"\ncwd = \"{work}\"\nprompt = \"tidy up\"\n",
                hook(work, "")
            )
        },
        &[],
    );
    hooks.fake.push(openai::text(&["hooked"]));
    let (_, answer) = hooks.deliver("ci", r#"{"ref":"main"}"#, "c-1");
    let hook_run = answer["runId"].as_str().unwrap();
    hooks.wait_finished(hook_run);

    let runs: Value = serde_json::from_str(&stdout(&hooks, &["runs", "ci", "--json"])).unwrap();
    assert_eq!(runs[0]["runId"], hook_run);
    assert_eq!(runs[0]["status"], "done");
    let table = stdout(&hooks, &["runs"]);
    assert!(
        table.contains(hook_run) && table.contains("webhook"),
        "{table}"
    );

    let schedules: Value = serde_json::from_str(&stdout(&hooks, &["schedules", "--json"])).unwrap();
    assert_eq!(schedules[0]["name"], "nightly");
    assert!(
        schedules[0]["nextRun"]
            .as_str()
            .unwrap()
            .contains("T02:00:00"),
        "{schedules}"
    );

    hooks.fake.push(openai::text(&["tidied"]));
    let out = stdout(&hooks, &["schedules", "run", "nightly", "--wait"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[1], "done");
    assert_eq!(hooks.run(lines[0])["source"], "schedule");
}

#[test]
fn rest_lists_runs_and_reads_one() {
    let hooks = Hooks::start(|work| hook(work, ""), &[]);
    hooks.fake.push(openai::text(&["ok"]));
    let (_, answer) = hooks.deliver("ci", r#"{"ref":"main"}"#, "r-1");
    let id = answer["runId"].as_str().unwrap();
    let run = hooks.wait_finished(id);
    let token = hooks
        .daemon
        .client()
        .call("token/create", json!({"name": "dash", "scope": "read"}))["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let url = hooks.url.clone();
    let (list, one, missing) = block(async move {
        let client = reqwest::Client::new();
        let get = |path: String| {
            client
                .get(format!("{url}/api/v1{path}"))
                .bearer_auth(&token)
                .send()
        };
        let list: Value = get("/runs?source=webhook".into())
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let one: Value = get(format!("/runs/{id}"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let missing = get("/runs/nope".into()).await.unwrap().status().as_u16();
        (list, one, missing)
    });
    assert_eq!(list, json!({ "runs": [run.clone()] }));
    assert_eq!(one, run);
    assert_eq!(missing, 404);
}

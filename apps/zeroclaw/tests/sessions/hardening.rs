//! What a hostile model or client tries against the tools and sessions (issue 11): the
//! provider's key kept from tools and out of the history, the daemon's own files asked
//! about whatever the policy, writes confined to the cwd, approvals that name the real
//! target, and the bounds on titles, model names and tool calls per step.

use crate::common::*;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

const KEY: &str = "sk-zc-test-secret-4242";
const OTHER_KEY: &str = "sk-zc-other-secret-1717";

#[test]
#[cfg(unix)]
fn the_provider_key_is_kept_from_tools_and_the_daemons_own_files_are_asked_about() {
    let env = Env::with_env(
        "api_key_env = \"ZC_TEST_PROVIDER_KEY\"",
        BASH_ALLOWED,
        &[
            ("ZC_TEST_PROVIDER_KEY", KEY),
            ("ZC_OTHER_API_KEY", OTHER_KEY),
        ],
    );
    let data_dir = env.dir.config_dir().join("data");
    let config_file = env.dir.config_dir().join("config.toml");
    let reads = [
        (
            "read_file",
            json!({"path": "/proc/self/environ"}),
            "process files",
        ),
        ("list_dir", json!({"path": data_dir}), "data directory"),
        (
            "read_file",
            json!({"path": config_file}),
            "configuration file",
        ),
    ];
    for (i, (tool, args, _)) in reads.iter().enumerate() {
        env.fake
            .push(tool_call(&format!("call_{i}"), tool, args.clone(), 1));
    }
    // The environment bash gets.
    env.fake.push(bash_call(
        "call_bash",
        "printenv ZC_TEST_PROVIDER_KEY ZC_OTHER_API_KEY; echo PATH=${PATH:+set}; env",
        1,
    ));
    env.fake.push(openai::text(&["done"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "find the key", decide_all("reject"));
    assert_eq!(turn.result()["stopReason"], "end_turn");

    // Each read of the daemon's own files was asked about (read_file and list_dir are
    // `allow` by default), saying why, and the model was told it was refused.
    let asked = turn.of_type("approval_request");
    assert_eq!(asked.len(), reads.len(), "{:#?}", turn.events);
    for (ask, (_, _, why)) in asked.iter().zip(&reads) {
        let reason = ask["reason"].as_str().unwrap_or_default();
        assert!(reason.contains(why), "{ask}");
    }
    let results = turn.of_type("tool_result");
    for result in &results[..reads.len()] {
        assert_eq!(result["isError"], true, "{result}");
        assert!(output(result).contains("rejected"), "{result}");
    }
    let bash = output(results[reads.len()]);
    assert!(bash.contains("PATH=set"), "{bash}");
    assert!(!bash.contains(KEY) && !bash.contains(OTHER_KEY), "{bash}");

    // Neither the history nor anything sent to the model holds the key.
    let history = serde_json::to_string(&client.messages(&session)).unwrap();
    assert!(!history.contains(KEY), "the key is in the history");
    for request in env.fake.wait_for_requests(reads.len() + 2) {
        assert!(!request.body.to_string().contains(KEY), "sent to the model");
    }
}

#[test]
fn titles_and_model_names_over_their_bounds_are_refused() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    let cwd = env.work.to_str().unwrap();
    for (params, member) in [
        (json!({"cwd": cwd, "title": "t".repeat(1025)}), "title"),
        (json!({"cwd": cwd, "model": "m".repeat(257)}), "model"),
    ] {
        let error = client.fail("session/new", params);
        assert_eq!(error["code"], -32602, "{error}");
        assert!(
            error["message"].as_str().unwrap().contains(member),
            "{error}"
        );
    }
    let session = client.call(
        "session/new",
        json!({"cwd": cwd, "title": "t".repeat(1024), "model": "m".repeat(256)}),
    )["sessionId"]
        .clone();
    let error = client.fail(
        "session/rename",
        json!({"sessionId": session, "title": "x".repeat(1025)}),
    );
    assert_eq!(error["code"], -32602, "{error}");
    client.call(
        "session/rename",
        json!({"sessionId": session, "title": "x".repeat(1024)}),
    );
    let listed = client.call("session/list", json!({}));
    assert_eq!(listed["sessions"][0]["title"], "x".repeat(1024), "{listed}");
}

#[test]
fn tool_calls_beyond_the_per_step_bound_get_an_error_result_and_do_not_run() {
    let env = Env::new("", "[agent]\nmax_tool_calls_per_step = 2");
    let mut step = openai::Builder::new();
    for i in 0..3 {
        let args = json!({"path": format!("f{i}.txt"), "content": "x"}).to_string();
        step = step.tool_call(i, &format!("call_{i}"), "write_file", &args, 1);
    }
    env.fake.push(step.build());
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "three at once", decide_all("allow_once"));
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert_eq!(turn.of_type("approval_request").len(), 2);
    let results = turn.of_type("tool_result");
    assert_eq!(results.len(), 3);
    assert_eq!(results[1]["isError"], false, "{}", results[1]);
    assert_eq!(results[2]["isError"], true);
    assert!(
        output(results[2]).contains("max_tool_calls_per_step"),
        "{}",
        results[2]
    );
    assert!(env.work.join("f1.txt").exists());
    assert!(!env.work.join("f2.txt").exists(), "the third call ran");
    let body = &env.fake.wait_for_requests(2)[1].body;
    assert!(tool_content(body, "call_2").contains("at most 2 run per step"));
}

#[test]
fn calls_with_invalid_arguments_get_their_error_without_an_approval_request() {
    let env = Env::new("", "");
    env.fake
        .push(tool_call("call_1", "bash", json!({"command": "  "}), 1));
    env.fake.push(tool_call(
        "call_2",
        "bash",
        json!({"command": "touch ran.txt", "cwd": "/"}),
        1,
    ));
    env.fake.push(tool_call(
        "call_3",
        "edit_file",
        json!({"path": "a.txt", "old_text": "", "new_text": "x"}),
        1,
    ));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    // `no_questions` fails the test on any approval request.
    let turn = client.prompt(&session, "bad calls", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let results = turn.of_type("tool_result");
    for (result, want) in results.iter().zip([
        "invalid arguments for bash: `command` must not be empty",
        "invalid arguments for bash: unknown argument `cwd`",
        "invalid arguments for edit_file: `old_text` must not be empty",
    ]) {
        assert_eq!(result["isError"], true, "{result}");
        assert!(output(result).starts_with(want), "{result}");
    }
    assert!(!env.work.join("ran.txt").exists());
}

/// A `work/link` to a directory beside the working directory, and that directory.
#[cfg(unix)]
fn link_out(env: &Env) -> std::path::PathBuf {
    let outside = env.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, env.work.join("link")).unwrap();
    outside.canonicalize().unwrap()
}

fn write(id: &str, path: &str) -> zeroclaw_testkit::Reply {
    tool_call(id, "write_file", json!({"path": path, "content": "x"}), 1)
}

#[test]
#[cfg(unix)]
fn writes_outside_the_cwd_are_refused_without_asking_by_default() {
    let env = Env::new("", "");
    let outside = link_out(&env);
    env.fake.push(write("call_1", "../outside/a.txt"));
    env.fake.push(write("call_2", "link/b.txt"));
    env.fake.push(tool_call(
        "call_3",
        "edit_file",
        json!({"path": outside.join("c.txt"), "old_text": "a", "new_text": "b"}),
        1,
    ));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "write outside", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let results = turn.of_type("tool_result");
    assert_eq!(results.len(), 3);
    for result in results {
        assert_eq!(result["isError"], true, "{result}");
        let text = output(result);
        assert!(text.contains("tools.confine_to_cwd"), "{text}");
        assert!(text.contains(outside.to_str().unwrap()), "{text}");
    }
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}

#[test]
#[cfg(unix)]
fn an_approval_request_names_the_resolved_target_and_whether_it_leaves_the_cwd() {
    let env = Env::new("", "[tools]\nconfine_to_cwd = false");
    let outside = link_out(&env);
    let work = env.work.canonicalize().unwrap();
    env.fake.push(write("call_1", "link/b.txt"));
    env.fake.push(write("call_2", "sub/../in.txt"));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "write twice", |frame: &Value| {
        let outside_cwd = frame["target"]["outsideCwd"].as_bool();
        Act::Decide(if outside_cwd == Some(false) {
            "allow_once"
        } else {
            "reject"
        })
    });
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let asked = turn.of_type("approval_request");
    assert_eq!(
        asked[0]["target"],
        json!({"path": outside.join("b.txt"), "outsideCwd": true})
    );
    assert_eq!(
        asked[1]["target"],
        json!({"path": work.join("in.txt"), "outsideCwd": false})
    );
    assert!(asked[0].get("reason").is_none(), "{}", asked[0]);
    assert!(!outside.join("b.txt").exists());
    assert_eq!(std::fs::read_to_string(work.join("in.txt")).unwrap(), "x");
}

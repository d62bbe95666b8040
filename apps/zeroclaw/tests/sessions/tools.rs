//! Tool calls the model gets wrong (arguments that are not JSON, a tool that does not
//! exist) get error results; a model that never stops calling tools is stopped by
//! `agent.max_steps`.

use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn a_tool_call_with_unparsable_arguments_or_an_unknown_tool_gets_an_error_result() {
    let env = Env::new("", "");
    env.fake.push(
        openai::Builder::new()
            .tool_call(0, "call_1", "read_file", "{\"path\": ", 2)
            .tool_call(1, "call_2", "frobnicate", "{}", 1)
            .build(),
    );
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "go", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let calls = turn.of_type("tool_call");
    assert_eq!(calls[0]["rawInput"], "{\"path\": ");
    let results = turn.of_type("tool_result");
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["isError"], true);
    assert!(output(results[0]).contains("not valid JSON"));
    assert_eq!(results[1]["isError"], true);
    assert!(output(results[1]).contains("frobnicate"));
    let body = &env.fake.wait_for_requests(2)[1].body;
    tool_message(body, "call_1");
    tool_message(body, "call_2");

    // The next turn's conversation, rebuilt from the store: one assistant message with both
    // calls, then both results, in order.
    env.fake.push(openai::text(&["next"]));
    client.prompt(&session, "next", no_questions).result();
    let body = &env.fake.wait_for_requests(3)[2].body;
    assert_eq!(
        roles(body),
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "user"
        ]
    );
    let messages = body["messages"].as_array().unwrap();
    let ids: Vec<&str> = messages[2]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_1", "call_2"]);
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"],
        "{\"path\": "
    );
    assert_eq!(messages[3]["tool_call_id"], "call_1");
    assert_eq!(messages[4]["tool_call_id"], "call_2");
    assert_eq!(messages[5]["content"], "ok");
}

#[test]
fn max_steps_stops_a_model_that_keeps_calling_tools_with_max_turns() {
    let env = Env::new("", "[agent]\nmax_steps = 2");
    for i in 0..3 {
        env.fake.push(tool_call(
            &format!("call_{i}"),
            "list_dir",
            json!({"path": "."}),
            1,
        ));
    }
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "loop forever", no_questions);
    assert_eq!(turn.result()["stopReason"], "max_turns");
    assert_eq!(turn.of_type("tool_result").len(), 2);
    assert_eq!(turn.events.last().unwrap()["stopReason"], "max_turns");
    assert_eq!(env.fake.request_count(), 2);
    assert_eq!(env.fake.pending_replies(), 1);
}

#[test]
fn grep_runs_without_approval_and_finds_lines_under_the_session_cwd() {
    let env = Env::new("", "");
    std::fs::create_dir_all(env.work.join("src")).unwrap();
    std::fs::write(env.work.join("src/lib.rs"), "fn main() {}\n// TODO: tidy\n").unwrap();
    std::fs::write(env.work.join("notes.txt"), "nothing here\n").unwrap();
    env.fake.push(tool_call(
        "call_1",
        "grep",
        json!({"pattern": "TODO", "glob": "*.rs"}),
        1,
    ));
    env.fake.push(tool_call(
        "call_2",
        "grep",
        json!({"pattern": "x", "path": "../"}),
        1,
    ));
    env.fake.push(openai::text(&["found it"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    // `no_questions` fails the test on any approval request: grep only reads.
    let turn = client.prompt(&session, "find the todos", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let results = turn.of_type("tool_result");
    assert_eq!(results[0]["isError"], false, "{}", results[0]);
    assert!(
        output(results[0]).contains("src/lib.rs:2: // TODO: tidy"),
        "{}",
        output(results[0])
    );
    assert_eq!(
        results[1]["isError"], true,
        "a path outside the cwd is refused"
    );
}

#[cfg(unix)]
#[test]
fn a_100_mb_output_is_cut_in_the_result_and_saved_whole_until_the_session_goes() {
    let env = Env::new("", "[approvals]\nbash = \"allow\"");
    let command = "head -c 100000000 /dev/zero | tr '\\0' x; echo; echo done >&2";
    env.fake.push(
        openai::Builder::new()
            .tool_call(
                0,
                "call_1",
                "bash",
                &json!({ "command": command }).to_string(),
                1,
            )
            .build(),
    );
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "print a lot", no_questions);
    let result = output(turn.one("tool_result"));
    assert!(
        result.len() < 40 * 1024,
        "the result is cut: {} bytes",
        result.len()
    );
    assert!(result.contains(" bytes cut ...]"), "{result}");
    let (_, rest) = result
        .split_once("[the whole output (")
        .unwrap_or_else(|| panic!("no saved-output note: {result}"));
    let (size, rest) = rest.split_once(" bytes) is saved in ").unwrap();
    let path = std::path::PathBuf::from(rest.split_once(';').unwrap().0);
    // 100,000,000 x, a newline, and "done\n" on stderr.
    assert_eq!(size, "100000006");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 100_000_006);
    assert!(
        path.starts_with(env.dir.path()),
        "under the data dir: {}",
        path.display()
    );

    client.call("session/delete", json!({"sessionId": session}));
    assert!(!path.exists(), "removed with its session");
}

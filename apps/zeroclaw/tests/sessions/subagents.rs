//! Subagents: a `task` call runs a child session with its profile's tools and prompt and
//! returns its answer; the child's events reach the parent's client tagged with the call,
//! its approvals are answered there, a cancel of the parent stops it, two `task` calls of
//! one step run at the same time, and the child session is listed only when asked.

use crate::common::*;
use serde_json::{Value, json};
use zeroclaw_testkit::{Gate, openai};

/// The names of the tools a provider request offers.
fn offered(body: &Value) -> Vec<String> {
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

/// The system prompt of a provider request.
fn system(body: &Value) -> String {
    body["messages"][0]["content"].as_str().unwrap().to_owned()
}

fn task_call(id: &str, args: Value) -> zeroclaw_testkit::Reply {
    tool_call(id, "task", args, 2)
}

/// Writes an agent profile into the project (the work dir: it has no `.git` above it).
fn profile(env: &Env, name: &str, text: &str) {
    let dir = env.work.join(".zeroclaw").join("agents");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.md")), text).unwrap();
}

/// The `session/update`s that carry `parentToolCallId`.
fn tagged<'a>(turn: &'a TurnLog, call: &str) -> Vec<&'a Value> {
    turn.events
        .iter()
        .filter(|e| e["parentToolCallId"] == call)
        .collect()
}

#[test]
fn a_task_call_runs_its_profile_with_only_its_tools_and_returns_the_childs_answer() {
    let env = Env::new("", "");
    profile(
        &env,
        "reader",
        "---\ndescription: Reads files for you\ntools: read_file, list_dir\n---\nYou are the READER profile.\n",
    );
    env.fake.push(task_call(
        "call_task",
        json!({"description": "Read the notes", "prompt": "CHILD-PROMPT: read notes.txt", "agent": "reader"}),
    ));
    env.fake.push(openai::text(&["child ", "answer"]));
    env.fake.push(openai::text(&["all done"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "look into it", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert_eq!(turn.result()["text"], "all done");

    let requests = env.fake.wait_for_requests(3);
    // The parent is offered `task`, which names the profiles, the built-in one included.
    let parent_tools = offered(&requests[0].body);
    assert!(
        parent_tools.contains(&"task".to_owned()),
        "{parent_tools:?}"
    );
    let task_def = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "task")
        .unwrap()["function"]
        .clone();
    let description = task_def["description"].as_str().unwrap();
    assert!(
        description.contains("- reader: Reads files for you")
            && description.contains("- explore: "),
        "{description}"
    );
    // The child: its profile's tools only, its prompt, the call's prompt as the user's.
    let child = &requests[1].body;
    assert_eq!(offered(child), ["read_file", "list_dir"]);
    assert!(
        system(child).starts_with("You are the READER profile."),
        "{}",
        system(child)
    );
    let messages = child["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "a fresh context: {messages:#?}");
    assert_eq!(messages[1]["content"], "CHILD-PROMPT: read notes.txt");
    // Its answer is the call's result.
    assert_eq!(tool_content(&requests[2].body, "call_task"), "child answer");
    let result = turn.one("tool_result");
    assert_eq!(result["toolCallId"], "call_task");
    assert_eq!(output(result), "child answer");

    // Its events reached the parent's client tagged with the call, in the parent's turn;
    // its `turn_complete` did not.
    let child_events = tagged(&turn, "call_task");
    assert_eq!(
        child_events
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["agent_message_chunk", "agent_message_chunk"]
    );
    let child_id = child_events[0]["childSessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(child_id, session);
    for event in &child_events {
        assert_eq!(event["sessionId"], session.as_str());
        assert_eq!(event["turnId"], turn.result()["turnId"]);
    }
    assert_eq!(turn.of_type("turn_complete").len(), 1);
}

#[test]
fn the_child_session_is_listed_only_with_the_filter_and_names_its_parent() {
    let env = Env::new("", "");
    env.fake.push(task_call(
        "call_task",
        json!({"description": "Count files", "prompt": "count them"}),
    ));
    env.fake.push(openai::text(&["three"]));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "go", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let child_id = tagged(&turn, "call_task")[0]["childSessionId"]
        .as_str()
        .unwrap()
        .to_owned();

    let listed = client.call("session/list", json!({}));
    let ids: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [session.as_str()]);
    assert!(listed["sessions"][0].get("parentSessionId").is_none());

    let all = client.call("session/list", json!({"includeChildren": true}));
    let child = all["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionId"] == child_id.as_str())
        .expect("the child is listed with includeChildren")
        .clone();
    assert_eq!(child["parentSessionId"], session.as_str());
    assert_eq!(child["parentToolCallId"], "call_task");
    assert_eq!(child["title"], "Count files");
    assert_eq!(child["cwd"], all["sessions"][0]["cwd"]);

    // Loadable like any session: its history is the call's prompt and its answer.
    let messages = client.messages(&child_id);
    assert_eq!(kinds(&messages), ["user", "assistant"]);
    assert_eq!(messages[0]["text"], "count them");
    assert_eq!(messages[1]["text"], "three");
    let (replayed, summary) = client.load_with_replay(&child_id);
    assert_eq!(summary["parentSessionId"], session.as_str());
    assert!(!replayed.is_empty());
}

#[test]
fn the_explore_profile_is_offered_read_only_tools_only() {
    let env = Env::new("", "");
    env.fake.push(task_call(
        "call_x",
        json!({"description": "Explore", "prompt": "where is main?", "agent": "explore"}),
    ));
    env.fake.push(openai::text(&["in src/main.rs"]));
    env.fake.push(openai::text(&["found it"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "find main", no_questions);
    assert_eq!(turn.result()["text"], "found it");
    let requests = env.fake.wait_for_requests(3);
    let child = &requests[1].body;
    let tools = offered(child);
    for read_only in ["read_file", "list_dir", "grep"] {
        assert!(tools.contains(&read_only.to_owned()), "{tools:?}");
    }
    for writes in ["bash", "write_file", "edit_file", "task", "ask_user"] {
        assert!(
            !tools.contains(&writes.to_owned()),
            "{writes} offered: {tools:?}"
        );
    }
    assert!(
        system(child).contains("read-only investigator"),
        "{}",
        system(child)
    );
    assert_eq!(output(turn.one("tool_result")), "in src/main.rs");
}

#[test]
fn an_unknown_agent_is_an_error_naming_the_available_ones() {
    let env = Env::new("", "");
    profile(&env, "reviewer", "---\ndescription: Reviews\n---\nReview.");
    env.fake.push(task_call(
        "call_1",
        json!({"description": "Nope", "prompt": "do it", "agent": "nope"}),
    ));
    env.fake.push(openai::text(&["sorry"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "go", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    assert_eq!(
        output(result),
        "task: there is no agent \"nope\"; the agents are: reviewer, explore"
    );
    // No child ran: the next request is the parent's.
    assert_eq!(env.fake.wait_for_requests(2).len(), 2);
    let all = client.call("session/list", json!({"includeChildren": true}));
    assert_eq!(all["sessions"].as_array().unwrap().len(), 1);
}

#[test]
fn a_child_is_not_offered_task_and_its_call_of_it_is_refused() {
    let env = Env::new("", "");
    env.fake.push(task_call(
        "call_parent",
        json!({"description": "Nest", "prompt": "try to nest"}),
    ));
    env.fake.push(task_call(
        "call_child",
        json!({"description": "Deeper", "prompt": "deeper"}),
    ));
    env.fake.push(openai::text(&["could not nest"]));
    env.fake.push(openai::text(&["done"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let turn = client.prompt(&session, "go", no_questions);
    assert_eq!(turn.result()["text"], "done");
    let requests = env.fake.wait_for_requests(4);
    let child_tools = offered(&requests[1].body);
    assert!(!child_tools.contains(&"task".to_owned()), "{child_tools:?}");
    assert!(child_tools.contains(&"bash".to_owned()), "{child_tools:?}");
    let refusal = tool_content(&requests[2].body, "call_child");
    assert!(
        refusal.contains("there is no tool named \"task\""),
        "{refusal}"
    );
    assert_eq!(
        tool_content(&requests[3].body, "call_parent"),
        "could not nest"
    );
    // The child's refused call reached the parent's client, tagged.
    let nested: Vec<&str> = tagged(&turn, "call_parent")
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(nested, ["tool_call", "tool_result", "agent_message_chunk"]);
}

#[test]
fn a_childs_approval_is_asked_of_the_parents_client_and_its_answer_lets_it_proceed() {
    let env = Env::new("", "");
    profile(
        &env,
        "runner",
        "---\ndescription: Runs commands\ntools:\n  - bash\n---\nRun what you are told.",
    );
    env.fake.push(task_call(
        "call_task",
        json!({"description": "Run", "prompt": "run echo", "agent": "runner"}),
    ));
    env.fake.push(bash_call("call_bash", "echo child-ran", 1));
    env.fake.push(openai::text(&["it printed child-ran"]));
    env.fake.push(openai::text(&["done"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let mut asked = Vec::new();
    let turn = client.prompt(&session, "go", |frame: &Value| {
        asked.push(frame.clone());
        Act::Decide("allow_once")
    });
    assert_eq!(turn.result()["text"], "done");
    assert_eq!(asked.len(), 1);
    let ask = &asked[0];
    assert_eq!(ask["type"], "approval_request");
    assert_eq!(ask["name"], "bash");
    assert_eq!(ask["toolCallId"], "call_bash");
    assert_eq!(ask["parentToolCallId"], "call_task");
    assert_eq!(ask["sessionId"], session.as_str());
    let requests = env.fake.wait_for_requests(4);
    let ran = tool_content(&requests[2].body, "call_bash");
    assert!(ran.contains("child-ran"), "{ran}");
    assert_eq!(
        tool_content(&requests[3].body, "call_task"),
        "it printed child-ran"
    );
}

#[test]
fn cancelling_the_parent_stops_the_child_and_both_record_it() {
    let env = Env::new("", "");
    env.fake.push(task_call(
        "call_task",
        json!({"description": "Slow", "prompt": "take your time"}),
    ));
    env.fake
        .push(openai::Builder::new().text("child partial").stall().build());
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "go");
    let chunk = client.wait_for(|f| {
        is_update(f)
            && f["params"]["parentToolCallId"] == "call_task"
            && f["params"]["text"] == "child partial"
    });
    let child_id = chunk["params"]["childSessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let cancel = client.call("session/cancel", json!({"sessionId": session}));
    assert_eq!(cancel, json!({"cancelled": true}));
    let turn = client.drive(&prompt, no_questions);
    assert_eq!(turn.result()["stopReason"], "cancelled");
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    assert!(output(result).contains("cancelled"), "{result}");
    // The child's partial answer is stored, marked cancelled, and its turn is over.
    let messages = client.messages(&child_id);
    assert_eq!(kinds(&messages), ["user", "assistant"]);
    assert_eq!(messages[1]["text"], "child partial");
    assert_eq!(messages[1]["cancelled"], true);
    let all = client.call("session/list", json!({"includeChildren": true}));
    for s in all["sessions"].as_array().unwrap() {
        assert_eq!(s["running"], false, "{s}");
    }
    // Only the parent's first request and the child's were made.
    assert_eq!(env.fake.request_count(), 2);
}

#[test]
fn two_task_calls_in_one_step_run_at_the_same_time() {
    let env = Env::new("", "");
    env.fake.push(
        openai::Builder::new()
            .tool_call(
                0,
                "call_a",
                "task",
                &json!({"description": "A", "prompt": "CHILD-A"}).to_string(),
                1,
            )
            .tool_call(
                1,
                "call_b",
                "task",
                &json!({"description": "B", "prompt": "CHILD-B"}).to_string(),
                1,
            )
            .usage(5, 2)
            .build(),
    );
    env.fake.push(openai::text(&["both answered"]));
    // Each child's request is held until both have arrived: run one after the other, the
    // second would never come.
    let gate = Gate::new();
    for (needle, answer) in [("CHILD-A", "answer A"), ("CHILD-B", "answer B")] {
        env.fake.answer_when(
            &format!("\"content\":\"{needle}\""),
            openai::Builder::new().wait_for(&gate).text(answer).build(),
        );
    }
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "two at once");
    let arrived = env
        .fake
        .try_wait_for_requests(3, std::time::Duration::from_secs(60))
        .expect("both children's requests arrive while neither is answered");
    assert_eq!(arrived.len(), 3);
    gate.open();
    let turn = client.drive(&prompt, no_questions);
    assert_eq!(turn.result()["text"], "both answered");
    let requests = env.fake.wait_for_requests(4);
    assert_eq!(tool_content(&requests[3].body, "call_a"), "answer A");
    assert_eq!(tool_content(&requests[3].body, "call_b"), "answer B");
    // The results went back in the order of the calls.
    let results: Vec<&str> = requests[3].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(results, ["call_a", "call_b"]);
}

#[test]
fn a_child_asks_as_its_parents_mode_does() {
    let env = Env::new("", "");
    profile(
        &env,
        "writer",
        "---\ndescription: Writes files\ntools: write_file, bash\n---\nWrite what you are told.",
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    client.call(
        "session/set_mode",
        json!({"sessionId": session, "mode": "accept-edits"}),
    );
    env.fake.push(task_call(
        "call_task",
        json!({"description": "Write", "prompt": "write notes", "agent": "writer"}),
    ));
    env.fake.push(tool_call(
        "call_w",
        "write_file",
        json!({"path": "notes.txt", "content": "by the child"}),
        2,
    ));
    env.fake.push(bash_call(
        "call_b",
        &touch_command(&env.work.join("ran")),
        1,
    ));
    env.fake.push(openai::text(&["wrote it"]));
    env.fake.push(openai::text(&["done"]));
    let turn = client.prompt(&session, "go", |frame: &Value| {
        // The edit went through as the parent's would; bash is still asked about.
        assert_eq!(frame["name"], "bash", "only bash is asked about: {frame}");
        assert_eq!(frame["parentToolCallId"], "call_task");
        Act::Decide("reject")
    });
    assert_eq!(turn.result()["text"], "done");
    assert_eq!(turn.of_type("approval_request").len(), 1);
    assert_eq!(
        std::fs::read_to_string(env.work.join("notes.txt")).unwrap(),
        "by the child"
    );
    assert!(!env.work.join("ran").exists(), "the rejected command ran");
    // The child session is stored in that mode.
    let listed = client.call("session/list", json!({"includeChildren": true}));
    let child = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["parentSessionId"] == session.as_str())
        .unwrap()
        .clone();
    assert_eq!(child["mode"], "accept-edits");
}

#[test]
fn a_client_that_loads_the_parent_while_a_childs_approval_waits_is_sent_it_tagged() {
    let env = Env::new("", "");
    profile(
        &env,
        "runner",
        "---\ndescription: Runs commands\ntools: bash\n---\nRun what you are told.",
    );
    env.fake.push(task_call(
        "call_task",
        json!({"description": "Run", "prompt": "run echo", "agent": "runner"}),
    ));
    env.fake.push(bash_call("call_bash", "echo child-ran", 1));
    env.fake.push(openai::text(&["it printed child-ran"]));
    env.fake.push(openai::text(&["done"]));
    let mut a = env.daemon.client();
    let session = a.new_session(&env.work);
    let prompt = a.start_prompt(&session, "go");
    let ask = a.wait_event("approval_request");
    assert_eq!(ask["parentToolCallId"], "call_task");

    // The parent session counts as waiting, and a connection that loads it now is sent
    // the child's pending request again, tagged as it was.
    let mut b = env.daemon.client();
    let listed = b.call("session/list", json!({}));
    let parent = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionId"] == session.as_str())
        .unwrap()
        .clone();
    assert_eq!(parent["waiting"], true, "{parent}");
    let loaded = b.call("session/load", json!({"sessionId": session}));
    assert_eq!(loaded["running"], true);
    let resent = b.wait_event("approval_request");
    assert_eq!(resent["requestId"], ask["requestId"]);
    assert_eq!(resent["parentToolCallId"], "call_task");
    assert_eq!(resent["childSessionId"], ask["childSessionId"]);

    // Answered from the loading connection, on the parent session.
    b.call(
        "session/approve",
        json!({"sessionId": session, "requestId": ask["requestId"], "decision": "allow_once"}),
    );
    let turn = a.drive(&prompt, ignore_all);
    assert_eq!(turn.result()["text"], "done");
}

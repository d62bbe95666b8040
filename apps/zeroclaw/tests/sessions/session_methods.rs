//! The session methods outside a turn's flow: `session/new`, `list`, `messages` (paging),
//! `delete` and `status`; and the error codes for a busy session, a connection that is not
//! attached, unknown ids, and the running-turn limit.

use crate::common::*;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

#[test]
fn session_new_checks_its_cwd_and_takes_a_model_override() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    let created = client.call("session/new", json!({"cwd": env.work}));
    assert_eq!(created["model"], "fake");
    assert_eq!(created["cwd"], json!(env.work));
    assert!(created["createdAt"].as_str().unwrap().ends_with('Z'));
    for cwd in [json!("relative/dir"), json!(env.work.join("missing"))] {
        let error = client.fail("session/new", json!({ "cwd": cwd }));
        assert_eq!(error["code"], -32602, "{error}");
    }
    let session = client.call(
        "session/new",
        json!({"cwd": env.work, "model": "other-model"}),
    );
    assert_eq!(session["model"], "other-model");
    env.fake.push(openai::text(&["hi"]));
    let id = session["sessionId"].as_str().unwrap().to_owned();
    client.prompt(&id, "hi", no_questions).result();
    assert_eq!(env.fake.requests()[0].body["model"], "other-model");
}

#[test]
fn list_and_status_count_sessions_and_delete_cancels_a_running_turn() {
    let env = Env::new("", "");
    env.fake.push(openai::text(&["idle now"]));
    env.fake
        .push(openai::Builder::new().text("busy").stall().build());
    let mut client = env.daemon.client();
    let idle = client.new_session(&env.work);
    let busy = client.new_session(&env.work);
    client.prompt(&idle, "first", no_questions).result();
    let prompt = client.start_prompt(&busy, "second");
    client.wait_event("agent_message_chunk");

    let list = client.call("session/list", json!({}));
    let sessions = list["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2);
    let find = |id: &str| {
        sessions
            .iter()
            .find(|s| s["sessionId"] == id)
            .unwrap()
            .clone()
    };
    let (i, b) = (find(&idle), find(&busy));
    assert_eq!(i["messageCount"], 2, "{i}");
    assert_eq!(i["running"], false);
    assert_eq!(i["title"], "test");
    assert_eq!(i["cwd"], json!(env.work));
    assert!(i["createdAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(b["messageCount"], 1, "{b}");
    assert_eq!(b["running"], true);
    let status = client.call("status", json!({}));
    assert_eq!(
        status["sessions"],
        json!({"total": 2, "running": 1, "loaded": 2})
    );

    let deleted = client.call("session/delete", json!({"sessionId": busy}));
    assert_eq!(deleted, json!({"deleted": true}));
    let turn = client.drive(&prompt, no_questions);
    assert_eq!(turn.result()["stopReason"], "cancelled");
    for method in ["session/load", "session/messages"] {
        let error = client.fail(method, json!({"sessionId": busy}));
        assert_eq!(error["code"], -32000, "{method}: {error}");
    }
    let error = client.fail("session/prompt", json!({"sessionId": busy, "prompt": "hi"}));
    assert_eq!(error["code"], -32000, "{error}");
    let status = client.call("status", json!({}));
    assert_eq!(
        status["sessions"],
        json!({"total": 1, "running": 0, "loaded": 1})
    );
    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(list["sessions"][0]["sessionId"], json!(idle));
    let again = client.call("session/delete", json!({"sessionId": busy}));
    assert_eq!(again, json!({"deleted": false}));
}

#[test]
fn messages_pages_back_through_history_with_limit_and_before() {
    let env = Env::new("", "");
    for i in 0..3 {
        env.fake.push(openai::text(&[&format!("answer {i}")]));
    }
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    for i in 0..3 {
        client
            .prompt(&session, &format!("question {i}"), no_questions)
            .result();
    }
    let page = client.call(
        "session/messages",
        json!({"sessionId": session, "limit": 2}),
    );
    assert_eq!(page["total"], 6);
    let texts = |page: &Value| -> Vec<String> {
        page["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["text"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(texts(&page), ["question 2", "answer 2"]);
    let before = page["messages"][0]["id"].clone();
    let page = client.call(
        "session/messages",
        json!({"sessionId": session, "limit": 3, "before": before}),
    );
    assert_eq!(texts(&page), ["answer 0", "question 1", "answer 1"]);
    // The model gets the whole conversation.
    let body = &env.fake.wait_for_requests(3)[2].body;
    let contents: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        contents,
        [
            "question 0",
            "answer 0",
            "question 1",
            "answer 1",
            "question 2"
        ]
    );
}

#[test]
fn busy_sessions_foreign_connections_and_unknown_ids_get_their_error_codes() {
    let env = Env::new("", "");
    env.fake
        .push(openai::Builder::new().text("working").stall().build());
    let mut a = env.daemon.client();
    let session = a.new_session(&env.work);
    let prompt = a.start_prompt(&session, "first");
    let chunk = a.wait_event("agent_message_chunk");

    let busy = a.fail(
        "session/prompt",
        json!({"sessionId": session, "prompt": "second"}),
    );
    assert_eq!(busy["code"], -32002, "{busy}");
    assert_eq!(busy["data"]["turnId"], chunk["turnId"], "{busy}");
    // The connection is not blocked by its running prompt.
    let status = a.call("status", json!({}));
    assert_eq!(status["sessions"]["running"], 1);

    // Not attached.
    let mut b = env.daemon.client();
    for (method, params) in [
        (
            "session/prompt",
            json!({"sessionId": session, "prompt": "mine"}),
        ),
        ("session/cancel", json!({"sessionId": session})),
        (
            "session/approve",
            json!({"sessionId": session, "requestId": "nope", "decision": "allow_once"}),
        ),
    ] {
        let error = b.fail(method, params);
        assert_eq!(error["code"], -32003, "{method}: {error}");
    }

    // Unknown session.
    let unknown = "00000000-0000-0000-0000-000000000000";
    for (method, params) in [
        ("session/load", json!({"sessionId": unknown})),
        (
            "session/prompt",
            json!({"sessionId": unknown, "prompt": "hi"}),
        ),
        ("session/messages", json!({"sessionId": unknown})),
        ("session/cancel", json!({"sessionId": unknown})),
    ] {
        let error = b.fail(method, params);
        assert_eq!(error["code"], -32000, "{method}: {error}");
    }

    // Unknown approval request; bad decision; empty prompt.
    let error = a.fail(
        "session/approve",
        json!({"sessionId": session, "requestId": "nope", "decision": "allow_once"}),
    );
    assert_eq!(error["code"], -32602, "{error}");
    assert_eq!(error["data"]["requestId"], "nope");
    let error = a.fail(
        "session/approve",
        json!({"sessionId": session, "requestId": "nope", "decision": "maybe"}),
    );
    assert_eq!(error["code"], -32602, "{error}");

    // The running turn was not disturbed by any of it.
    assert_eq!(
        a.call("session/cancel", json!({"sessionId": session}))["cancelled"],
        true
    );
    let turn = a.drive(&prompt, no_questions);
    assert_eq!(turn.result()["stopReason"], "cancelled");
    assert_eq!(turn.result()["text"], "working");
    let error = a.fail(
        "session/prompt",
        json!({"sessionId": session, "prompt": "  "}),
    );
    assert_eq!(error["code"], -32602, "{error}");
}

#[test]
fn with_one_turn_slot_a_busy_session_is_still_busy_and_another_session_hits_the_limit() {
    let env = Env::new("", "[agent]\nmax_running_turns = 1");
    env.fake
        .push(openai::Builder::new().text("working").stall().build());
    let mut client = env.daemon.client();
    let first = client.new_session(&env.work);
    let second = client.new_session(&env.work);
    let prompt = client.start_prompt(&first, "one");
    let chunk = client.wait_event("agent_message_chunk");
    let busy = client.fail(
        "session/prompt",
        json!({"sessionId": first, "prompt": "two"}),
    );
    assert_eq!(busy["code"], -32002, "{busy}");
    assert_eq!(busy["data"]["turnId"], chunk["turnId"]);
    let limit = client.fail(
        "session/prompt",
        json!({"sessionId": second, "prompt": "three"}),
    );
    assert_eq!(limit["code"], -32001, "{limit}");
    assert_eq!(limit["data"]["limit"], 1);
    client.call("session/cancel", json!({"sessionId": first}));
    assert_eq!(
        client.drive(&prompt, no_questions).result()["stopReason"],
        "cancelled"
    );
    // The slot is free again.
    env.fake.push(openai::text(&["free"]));
    let turn = client.prompt(&second, "four", no_questions);
    assert_eq!(turn.result()["text"], "free");
}

#[test]
fn session_rename_sets_and_clears_a_title_without_an_attachment() {
    let env = Env::new("", "");
    let mut owner = env.daemon.client();
    let session = owner.new_session(&env.work);
    let title = |client: &mut Client| {
        let list = client.call("session/list", json!({}));
        let updated = list["sessions"][0]["updatedAt"].clone();
        (list["sessions"][0]["title"].clone(), updated)
    };
    let (_, updated_before) = title(&mut owner);

    // Another connection, never attached, renames it; the title is trimmed.
    let mut other = env.daemon.client();
    let renamed = other.call(
        "session/rename",
        json!({"sessionId": session, "title": "  release notes  "}),
    );
    assert_eq!(renamed, json!({}));
    let (renamed_title, updated_after) = title(&mut owner);
    assert_eq!(renamed_title, "release notes");
    assert_eq!(updated_after, updated_before, "renaming is not activity");

    for cleared in [json!(null), json!("   ")] {
        other.call(
            "session/rename",
            json!({"sessionId": session, "title": cleared}),
        );
        assert_eq!(title(&mut owner).0, Value::Null, "{cleared}");
    }

    let error = other.fail(
        "session/rename",
        json!({"sessionId": "no-such-session", "title": "x"}),
    );
    assert_eq!(error["code"], -32000, "{error}");
    let error = other.fail("session/rename", json!({"sessionId": session}));
    assert_eq!(error["code"], -32602, "the title is required: {error}");
}

#[test]
fn session_list_cwd_gives_exactly_one_directorys_sessions_in_full_pages() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    let below = env.work.join("below");
    std::fs::create_dir_all(&below).unwrap();
    let mut here = Vec::new();
    for n in 0..7 {
        // Sessions of another directory in between, and one below this one: a filter
        // applied to each page after the fact would give short or empty pages.
        client.new_session(&below);
        let title = format!("in {}", env.work.display());
        let made = client.call("session/new", json!({"cwd": env.work, "title": title}));
        if n != 3 {
            here.push(made["sessionId"].as_str().unwrap().to_owned());
        } else {
            client.call("session/delete", json!({"sessionId": made["sessionId"]}));
        }
    }
    let cwd = env.work.display().to_string();
    let mut found = Vec::new();
    let mut params = json!({"cwd": cwd, "limit": 2});
    loop {
        let page = client.call("session/list", params.clone());
        let sessions = page["sessions"].as_array().unwrap();
        for s in sessions {
            assert_eq!(s["cwd"], cwd.as_str(), "{s}");
            found.push(s["sessionId"].as_str().unwrap().to_owned());
        }
        match page.get("nextCursor") {
            Some(cursor) => {
                assert_eq!(sessions.len(), 2, "a page before the last is full: {page}");
                params["cursor"] = cursor.clone();
            }
            None => break,
        }
    }
    found.sort();
    here.sort();
    assert_eq!(found, here);
    // With a search too, both hold; a directory nobody used: an empty page, no cursor.
    let both = client.call(
        "session/list",
        json!({"cwd": below.display().to_string(), "search": "in "}),
    );
    assert_eq!(both, json!({"sessions": []}));
    let error = client.fail("session/list", json!({"cwd": "x".repeat(4097)}));
    assert_eq!(error["code"], -32602, "{error}");
}

#[test]
fn session_list_finds_sessions_by_title_or_cwd_in_any_case_across_pages() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    let other = env.dir.path().join("Other-Project");
    std::fs::create_dir_all(&other).unwrap();
    let mut wanted = Vec::new();
    for n in 0..6 {
        let title = if n % 2 == 0 {
            "Fix the Parser"
        } else {
            "chores"
        };
        let made = client.call(
            "session/new",
            json!({"cwd": env.work, "title": format!("{title} {n}")}),
        );
        if n % 2 == 0 {
            wanted.push(made["sessionId"].as_str().unwrap().to_owned());
        }
    }
    let by_cwd = client.call("session/new", json!({"cwd": other}));

    // By title, two to a page: the three parser sessions, each once, newest first.
    let mut found = Vec::new();
    let mut params = json!({"search": "PARSER", "limit": 2});
    loop {
        let page = client.call("session/list", params.clone());
        for s in page["sessions"].as_array().unwrap() {
            found.push(s["sessionId"].as_str().unwrap().to_owned());
        }
        match page.get("nextCursor") {
            Some(cursor) => params["cursor"] = cursor.clone(),
            None => break,
        }
    }
    // Newest first, ties (sessions made in the same millisecond) by id: the paged walk
    // must give exactly the one-page order, each session once.
    let whole = client.call("session/list", json!({"search": "PARSER", "limit": 100}));
    let whole: Vec<String> = whole["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(found, whole);
    let mut sorted = found.clone();
    sorted.sort();
    wanted.sort();
    assert_eq!(sorted, wanted);

    // By cwd.
    let page = client.call("session/list", json!({"search": "other-project"}));
    let ids: Vec<&Value> = page["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["sessionId"])
        .collect();
    assert_eq!(ids, [&by_cwd["sessionId"]]);

    // Nothing matches: an empty page, no cursor. Too long: invalid params.
    let none = client.call("session/list", json!({"search": "no such thing"}));
    assert_eq!(none, json!({"sessions": []}));
    let error = client.fail("session/list", json!({"search": "x".repeat(1025)}));
    assert_eq!(error["code"], -32602);

    // The CLI passes it on.
    let out = env
        .dir
        .command(&["sessions", "--search", "parser"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(table.matches("Fix the Parser").count(), 3, "{table}");
    assert!(!table.contains("chores"), "{table}");
}

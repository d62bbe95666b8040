//! Plan mode: the model is offered only the read-only tools (and `exit_plan`) and told it
//! is planning; a write called anyway is refused by the daemon and nothing changes; an
//! approved `exit_plan` switches the session to `default` (`mode_changed`) and the same
//! turn then carries the plan out; a rejected one keeps the session planning.

use crate::common::*;
use serde_json::{Value, json};
use zeroclaw_testkit::openai;

/// The names of the tools a request offered.
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

/// The system message of a request.
fn system(body: &Value) -> String {
    body["messages"][0]["content"].as_str().unwrap().to_owned()
}

/// Sets the mode; the caller's own `mode_changed` is taken (it comes before the answer).
fn set_mode(client: &mut Client, session: &str, mode: &str) -> Value {
    let set = client.call(
        "session/set_mode",
        json!({"sessionId": session, "mode": mode}),
    );
    let events = client.take_events();
    assert_eq!(types(&events), ["mode_changed"], "{events:#?}");
    set
}

#[test]
fn plan_mode_offers_only_read_only_tools_and_refuses_a_write_called_anyway() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let set = set_mode(&mut client, &session, "plan");
    assert_eq!(set, json!({"mode": "plan", "previous": "default"}));

    env.fake.push(tool_call(
        "call_w",
        "write_file",
        json!({"path": "planned.txt", "content": "too early"}),
        2,
    ));
    env.fake.push(openai::text(&["I will plan first."]));
    // Nothing is asked: the refusal is the daemon's, not a person's.
    let turn = client.prompt(&session, "change things", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true, "{result}");
    let said = output(result);
    assert!(
        said.contains("plan mode") && said.contains("exit_plan") && said.contains("did not run"),
        "{said}"
    );
    assert!(!env.work.join("planned.txt").exists(), "the write ran");

    let requests = env.fake.wait_for_requests(2);
    for request in &requests {
        assert_eq!(
            offered(&request.body),
            [
                "read_file",
                "list_dir",
                "grep",
                "ask_user",
                "todo_write",
                "glob",
                "web_fetch",
                "exit_plan"
            ]
        );
        assert!(system(&request.body).contains("You are in plan mode"));
    }

    // Back in `default`, every tool is offered again and the prompt says nothing of plans.
    set_mode(&mut client, &session, "default");
    env.fake.push(openai::text(&["ok"]));
    client.prompt(&session, "again", no_questions);
    let requests = env.fake.wait_for_requests(3);
    let all = offered(&requests[2].body);
    assert!(all.iter().any(|t| t == "write_file") && all.iter().any(|t| t == "bash"));
    assert!(!all.iter().any(|t| t == "exit_plan"), "{all:?}");
    assert!(!system(&requests[2].body).contains("plan mode"));
}

#[test]
fn an_approved_exit_plan_switches_to_default_and_the_edit_then_proceeds() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    // A second client, attached, hears of the change too.
    let mut other = env.daemon.client();
    other.call("session/load", json!({"sessionId": session}));
    set_mode(&mut client, &session, "plan");
    assert_eq!(other.wait_event("mode_changed")["mode"], "plan");

    let plan = "1. write done.txt";
    env.fake
        .push(tool_call("call_p", "exit_plan", json!({"plan": plan}), 2));
    env.fake.push(tool_call(
        "call_w",
        "write_file",
        json!({"path": "done.txt", "content": "carried out"}),
        2,
    ));
    env.fake.push(openai::text(&["Done."]));
    let turn = client.prompt(&session, "plan, then do it", |frame: &Value| {
        assert_eq!(frame["type"], "approval_request", "{frame}");
        Act::Decide("allow_once")
    });
    assert_eq!(turn.result()["stopReason"], "end_turn");

    let asks = turn.of_type("approval_request");
    assert_eq!(asks.len(), 2, "{:#?}", turn.events);
    let exit = asks[0];
    assert_eq!(exit["name"], "exit_plan");
    assert_eq!(exit["rawInput"]["plan"], plan);
    assert!(
        exit["reason"]
            .as_str()
            .unwrap()
            .contains("start with this plan?")
    );
    // About this plan only: never "always".
    assert_eq!(exit["options"], json!(["allow_once", "reject"]));
    assert_eq!(asks[1]["name"], "write_file");

    // The mode changed between the plan's approval and the edit, in the turn.
    let types = turn.types();
    let changed = types.iter().position(|t| *t == "mode_changed").unwrap();
    let calls: Vec<usize> = types
        .iter()
        .enumerate()
        .filter(|(_, t)| **t == "tool_call")
        .map(|(i, _)| i)
        .collect();
    assert!(calls[0] < changed && changed < calls[1], "{types:?}");
    let event = turn.one("mode_changed");
    assert_eq!(event["mode"], "default");
    assert_eq!(event["previous"], "plan");
    assert!(event["turnId"].is_string(), "{event}");
    assert_eq!(other.wait_event("mode_changed")["mode"], "default");

    assert_eq!(
        std::fs::read_to_string(env.work.join("done.txt")).unwrap(),
        "carried out"
    );
    let requests = env.fake.wait_for_requests(3);
    let content = tool_content(&requests[1].body, "call_p");
    assert!(content.contains("accepted"), "{content}");
    assert!(offered(&requests[1].body).iter().any(|t| t == "write_file"));
    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["mode"], "default");
}

#[test]
fn a_rejected_exit_plan_keeps_the_session_planning() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    set_mode(&mut client, &session, "plan");
    env.fake.push(tool_call(
        "call_p",
        "exit_plan",
        json!({"plan": "delete everything"}),
        1,
    ));
    env.fake.push(openai::text(&["I will think again."]));
    let turn = client.prompt(&session, "plan", decide_all("reject"));
    assert!(
        turn.of_type("mode_changed").is_empty(),
        "{:#?}",
        turn.events
    );
    let result = turn.one("tool_result");
    assert_eq!(result["isError"], true);
    let said = output(result);
    assert!(said.contains("stays in plan mode"), "{said}");
    let requests = env.fake.wait_for_requests(2);
    assert!(!offered(&requests[1].body).iter().any(|t| t == "write_file"));
    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["mode"], "plan");
}

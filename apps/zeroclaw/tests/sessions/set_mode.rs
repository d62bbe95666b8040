//! `session/set_mode`: the mode is in `SessionInfo` and `SessionSummary`, every attached
//! client hears `mode_changed`, it survives a restart; `auto` is refused where the sandbox
//! does not confine the tools unless the config opts in; bad values and unattached callers
//! get clear errors.

use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn a_sessions_mode_is_announced_to_every_client_and_survives_a_restart() {
    let mut env = Env::new("", "");
    let mut client = env.daemon.client();
    let info = client.call("session/new", json!({"cwd": env.work}));
    assert_eq!(info["mode"], "default");
    let session = info["sessionId"].as_str().unwrap().to_owned();
    let mut other = env.daemon.client();
    let loaded = other.call("session/load", json!({"sessionId": session}));
    assert_eq!(loaded["mode"], "default");

    let set = client.call(
        "session/set_mode",
        json!({"sessionId": session, "mode": "accept-edits"}),
    );
    assert_eq!(set, json!({"mode": "accept-edits", "previous": "default"}));
    for c in [&mut client, &mut other] {
        let event = c.wait_event("mode_changed");
        assert_eq!(event["sessionId"], json!(session));
        assert_eq!(event["mode"], "accept-edits");
        assert_eq!(event["previous"], "default");
        assert!(event.get("turnId").is_none(), "{event}");
    }
    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["mode"], "accept-edits");

    drop((client, other));
    env.kill_and_restart();
    let mut client = env.daemon.client();
    let (_, loaded) = client.load_with_replay(&session);
    assert_eq!(loaded["mode"], "accept-edits");
    // And it still decides: the edit runs without asking.
    env.fake.push(tool_call(
        "call_w",
        "write_file",
        json!({"path": "after.txt", "content": "x"}),
        1,
    ));
    env.fake.push(openai::text(&["ok"]));
    client.prompt(&session, "write", no_questions);
    assert!(env.work.join("after.txt").exists());
}

#[test]
fn auto_is_refused_where_the_sandbox_does_not_confine_the_tools() {
    let env = Env::new("", "[sandbox]\nmode = \"full\"");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let error = client.fail(
        "session/set_mode",
        json!({"sessionId": session, "mode": "auto"}),
    );
    assert_eq!(error["code"], -32003, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("`full`") && message.contains("allow_auto_without_sandbox"),
        "{message}"
    );
    assert_eq!(error["data"]["sandboxMode"], "full");
    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["mode"], "default");
}

#[test]
fn auto_runs_every_call_without_asking_once_the_config_opts_in() {
    let env = Env::new(
        "",
        "[sandbox]\nmode = \"full\"\n\n[approvals]\nallow_auto_without_sandbox = true",
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let set = client.call(
        "session/set_mode",
        json!({"sessionId": session, "mode": "auto"}),
    );
    assert_eq!(set["mode"], "auto");
    env.fake.push(bash_call(
        "call_b",
        &touch_command(&env.work.join("ran")),
        1,
    ));
    env.fake.push(openai::text(&["ran"]));
    let turn = client.prompt(&session, "run it", no_questions);
    assert_eq!(turn.one("tool_result")["isError"], false);
    assert!(env.work.join("ran").exists());
}

#[test]
fn set_mode_refuses_unknown_modes_unknown_sessions_and_unattached_callers() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let error = client.fail(
        "session/set_mode",
        json!({"sessionId": session, "mode": "yolo"}),
    );
    assert_eq!(error["code"], -32602, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("accept-edits"),
        "{error}"
    );
    let error = client.fail(
        "session/set_mode",
        json!({"sessionId": "no-such-session", "mode": "plan"}),
    );
    assert_eq!(error["code"], -32000, "{error}");
    let mut other = env.daemon.client();
    let error = other.fail(
        "session/set_mode",
        json!({"sessionId": session, "mode": "plan"}),
    );
    assert_eq!(error["code"], -32003, "{error}");
}

//! The daemon stopped mid-turn: by SIGKILL (the completed steps survive, the turn is marked
//! interrupted, an unfinished tool call is answered for the model) or by SIGTERM (the turn
//! ends as cancelled, its history kept). The session goes on after a restart.

use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn a_daemon_killed_mid_turn_restarts_with_the_completed_steps_and_the_turn_interrupted() {
    let mut env = Env::new("", BASH_ALLOWED);
    env.fake.push(bash_call("call_1", "echo step-one-done", 3));
    env.fake
        .push(openai::Builder::new().text("never stored").stall().build());
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "do two things");
    // The second model call starts only after the first step's result is stored.
    env.fake.wait_for_requests(2);
    let chunk = client.wait_event("agent_message_chunk");
    let turn_id = chunk["turnId"].clone();
    let _ = prompt;
    drop(client);
    env.kill_and_restart();
    // The store marks the turn left running as interrupted when it opens (before
    // "listening"). The protocol has no field for a turn's status, so the log is the
    // observable here.
    let line = env.daemon.wait_for_log("interrupted");
    assert!(line.contains("turns=1"), "{line}");

    let mut client = env.daemon.client();
    let (replay, loaded) = client.load_with_replay(&session);
    assert_eq!(loaded["sessionId"], json!(session));
    assert!(loaded.get("turnId").is_none(), "{loaded}");
    assert_eq!(
        types(&replay),
        ["user_message_chunk", "tool_call", "tool_result"]
    );
    for event in &replay {
        assert_eq!(event["turnId"], turn_id, "{event}");
        assert_eq!(event["sessionId"], json!(session));
    }
    assert_eq!(replay[0]["text"], "do two things");
    assert_eq!(replay[1]["toolCallId"], "call_1");
    assert_eq!(
        replay[1]["rawInput"],
        json!({"command": "echo step-one-done"})
    );
    assert!(output(&replay[2]).contains("step-one-done"));
    assert_eq!(replay[2]["isError"], false);
    assert_eq!(
        kinds(&client.messages(&session)),
        ["user", "tool_call", "tool_result"]
    );
    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["running"], false);

    // The session continues, and the model is sent the surviving history.
    env.fake.push(openai::text(&["resumed"]));
    let turn = client.prompt(&session, "continue", no_questions);
    assert_eq!(turn.result()["text"], "resumed");
    let body = &env.fake.wait_for_requests(3)[2].body;
    assert!(tool_content(body, "call_1").contains("step-one-done"));
    assert_eq!(roles(body), ["system", "user", "assistant", "tool", "user"]);
}

#[test]
#[cfg(unix)]
fn sigterm_mid_turn_ends_it_as_cancelled_with_its_history_kept() {
    let mut env = Env::new("", "");
    env.fake.push(
        openai::Builder::new()
            .text("half an answer")
            .stall()
            .build(),
    );
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let prompt = client.start_prompt(&session, "talk");
    client.wait_event("agent_message_chunk");
    env.daemon.signal(rustix::process::Signal::TERM);
    // The client still hears how its turn ended before the daemon disconnects it.
    let complete = client.wait_event("turn_complete");
    assert_eq!(complete["stopReason"], "cancelled");
    let answer = client.wait_for(|f| f["id"] == prompt);
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    assert_eq!(answer["result"]["text"], "half an answer");
    assert!(env.daemon.wait_exit().success());
    drop(client);
    env.daemon = env.dir.start(&[]);
    assert!(
        !env.daemon.log_text().contains("interrupted"),
        "{}",
        env.daemon.log_text()
    );
    let mut client = env.daemon.client();
    let messages = client.messages(&session);
    assert_eq!(messages.len(), 2, "{messages:#?}");
    assert_eq!(messages[1]["text"], "half an answer");
    assert_eq!(messages[1]["cancelled"], true);
}

#[test]
#[cfg(unix)]
fn a_daemon_killed_while_a_tool_runs_answers_the_unfinished_call_for_the_model_after_restart() {
    let mut env = Env::new("", BASH_ALLOWED);
    env.fake.push(bash_call(
        "call_1",
        "echo $$ > pid.tmp && mv pid.tmp pid && exec sleep 60",
        2,
    ));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let _prompt = client.start_prompt(&session, "sleep");
    let pid = wait_for_pid_file(&env.work.join("pid"));
    drop(client);
    env.kill_and_restart();
    // A SIGKILLed daemon cannot stop what it started; end the orphan ourselves.
    #[cfg(unix)]
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::KILL,
    );
    let mut client = env.daemon.client();
    client.call("session/load", json!({"sessionId": session}));
    assert_eq!(kinds(&client.messages(&session)), ["user", "tool_call"]);
    env.fake.push(openai::text(&["ok"]));
    client
        .prompt(&session, "what happened?", no_questions)
        .result();
    let body = &env.fake.wait_for_requests(2)[1].body;
    assert_eq!(roles(body), ["system", "user", "assistant", "tool", "user"]);
    let content = tool_content(body, "call_1");
    assert!(content.contains("not run"), "{content}");
}

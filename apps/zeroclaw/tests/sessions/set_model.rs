//! `session/set_model`: the model of a session's next turns, stored so it survives a
//! restart; a running turn keeps the model it started with; bad values and unknown or
//! unattached sessions get clear errors.

use crate::common::*;
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn set_model_applies_from_the_next_turn_and_survives_a_restart() {
    let mut env = Env::new("", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);

    // A turn waiting for approval when the model changes finishes with its own model.
    env.fake.push(bash_call("call_1", "echo hi", 0));
    env.fake.push(openai::text(&["done with the old one"]));
    let prompt = client.start_prompt(&session, "first");
    client.wait_event("approval_request");
    let set = client.call(
        "session/set_model",
        json!({"sessionId": session, "model": "bigger-model"}),
    );
    assert_eq!(set, json!({"model": "bigger-model", "previous": "fake"}));
    // The queued approval request is answered now.
    let turn = client.drive(&prompt, decide_all("reject"));
    assert_eq!(turn.result()["text"], "done with the old one");
    let models = |env: &Env, n: usize| -> Vec<String> {
        env.fake
            .wait_for_requests(n)
            .iter()
            .map(|r| r.body["model"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(models(&env, 2), ["fake", "fake"]);

    // The next turn asks for the new model, and the lists show it.
    env.fake.push(openai::text(&["hello from the bigger one"]));
    client.prompt(&session, "second", no_questions);
    assert_eq!(models(&env, 3)[2], "bigger-model");
    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["model"], "bigger-model");

    // After a restart the stored model is the session's.
    drop(client);
    env.kill_and_restart();
    let mut client = env.daemon.client();
    let (_, loaded) = client.load_with_replay(&session);
    assert_eq!(loaded["model"], "bigger-model");
    env.fake.push(openai::text(&["still the bigger one"]));
    client.prompt(&session, "third", no_questions);
    assert_eq!(models(&env, 4)[3], "bigger-model");
}

#[test]
fn set_model_refuses_bad_models_unknown_sessions_and_unattached_callers() {
    let env = Env::new("", "");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let set = |client: &mut Client, model: serde_json::Value| {
        client.fail(
            "session/set_model",
            json!({"sessionId": session, "model": model}),
        )
    };
    let long = "m".repeat(257);
    for (model, says) in [
        (json!(""), "`model` is blank"),
        (json!("   "), "`model` is blank"),
        (json!(long), "`model` is 257 bytes; at most 256 are allowed"),
        (json!("two\nlines"), "control character"),
        (json!(7), "invalid type"),
    ] {
        let error = set(&mut client, model.clone());
        assert_eq!(error["code"], -32602, "{model}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(says), "{model}: {message}");
    }
    let error = client.fail("session/set_model", json!({"sessionId": session}));
    assert_eq!(error["code"], -32602, "the model is required: {error}");

    // 256 bytes is allowed; nothing refused was stored.
    let longest = "m".repeat(256);
    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["model"], "fake");
    client.call(
        "session/set_model",
        json!({"sessionId": session, "model": longest}),
    );
    let list = client.call("session/list", json!({}));
    assert_eq!(list["sessions"][0]["model"], json!(longest));

    let error = client.fail(
        "session/set_model",
        json!({"sessionId": "no-such-session", "model": "x"}),
    );
    assert_eq!(error["code"], -32000, "{error}");
    assert_eq!(error["data"]["sessionId"], "no-such-session");

    let mut other = env.daemon.client();
    let error = other.fail(
        "session/set_model",
        json!({"sessionId": session, "model": "x"}),
    );
    assert_eq!(error["code"], -32003, "{error}");
}

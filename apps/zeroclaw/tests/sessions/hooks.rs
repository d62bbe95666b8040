//! Hooks (docs/project.md): commands configured for the agent's events get the event as
//! JSON on stdin and decide with their exit code or JSON on stdout, as Claude Code's do.
//! Real shell scripts written into the test's dir, the real daemon, the fake provider
//! recording every request; each run is a `hook_result` event, stored and replayed. A
//! project's own hooks run only once `zeroclaw trust` (the real CLI) has trusted it.

use crate::common::*;
use serde_json::{Value, json};
use std::path::Path;
use zeroclaw_testkit::openai;

/// A daemon whose config has `hooks` (TOML tables) after bash allowed, and a script dir:
/// hooks run in the session's cwd (`env.work`), so a command names its script as
/// `../hooks/NAME.sh` and its files as `../NAME`.
fn env_with(hooks: &str) -> Env {
    let env = Env::new("", &format!("{BASH_ALLOWED}\n{hooks}"));
    std::fs::create_dir_all(env.dir.path().join("hooks")).unwrap();
    env
}

/// Writes the script `hooks/NAME.sh` of the test's dir.
fn script(env: &Env, name: &str, body: &str) {
    std::fs::write(
        env.dir.path().join("hooks").join(format!("{name}.sh")),
        body,
    )
    .unwrap();
}

/// A file the hooks wrote beside `work`, as JSON.
fn json_file(env: &Env, name: &str) -> Value {
    let path = env.dir.path().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

/// The text of the last user message of an OpenAI request body.
fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no user message in {body:#}"))
        .to_owned()
}

fn system(body: &Value) -> String {
    body["messages"][0]["content"].as_str().unwrap().to_owned()
}

fn exists(path: &Path) -> bool {
    path.exists()
}

#[test]
fn a_pre_tool_use_hook_that_exits_2_blocks_bash_and_the_model_reads_its_stderr() {
    let env = env_with(
        "[[hooks.PreToolUse]]\nmatcher = \"bash|write_file\"\ncommand = \"sh ../hooks/guard.sh\"\n",
    );
    script(
        &env,
        "guard",
        "cat > ../pre_input.json\necho 'guard: no touching here' >&2\nexit 2\n",
    );
    let marker = env.work.join("marker");
    env.fake
        .push(bash_call("call_1", &touch_command(&marker), 2));
    env.fake.push(openai::text(&["understood"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);

    let turn = client.prompt(&session, "touch the marker", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert!(!exists(&marker), "the blocked command ran");
    let sent = tool_content(&env.fake.wait_for_requests(2)[1].body, "call_1");
    assert!(sent.contains("guard: no touching here"), "{sent}");
    assert!(sent.contains("blocked this call"), "{sent}");

    let input = json_file(&env, "pre_input.json");
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["session_id"], json!(session));
    assert_eq!(input["cwd"], json!(env.work.display().to_string()));
    assert_eq!(input["tool_name"], "bash");
    assert_eq!(
        input["tool_input"]["command"],
        json!(touch_command(&marker))
    );
    assert_eq!(input["tool_use_id"], "call_1");

    // The run is an event between the call and its result, and stays in the history.
    let types = turn.types();
    let at = |t: &str| types.iter().position(|x| *x == t).unwrap();
    assert!(at("tool_call") < at("hook_result") && at("hook_result") < at("tool_result"));
    let hook = turn.one("hook_result");
    assert_eq!(hook["event"], "PreToolUse");
    assert_eq!(hook["command"], "sh ../hooks/guard.sh");
    assert_eq!(hook["source"], "user");
    assert_eq!(hook["exitCode"], 2);
    assert_eq!(hook["outcome"], "block");
    assert_eq!(hook["toolCallId"], "call_1");
    assert_eq!(hook["message"], "guard: no touching here");
    assert!(hook["durationMs"].is_u64());

    let mut other = env.daemon.client();
    let (replay, _) = other.load_with_replay(&session);
    let replayed: Vec<&Value> = replay
        .iter()
        .filter(|e| e["type"] == "hook_result")
        .collect();
    assert_eq!(replayed.len(), 1, "{replay:#?}");
    assert_eq!(replayed[0]["outcome"], "block");
    assert_eq!(replayed[0]["exitCode"], 2);
    let messages = other.messages(&session);
    assert!(kinds(&messages).contains(&"hook"), "{messages:#?}");
}

#[test]
fn a_permission_decision_deny_on_stdout_refuses_the_call_with_its_reason() {
    let env = env_with("[[hooks.PreToolUse]]\ncommand = \"sh ../hooks/deny.sh\"\n");
    script(
        &env,
        "deny",
        r#"cat > /dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on Fridays"}}'
"#,
    );
    let marker = env.work.join("marker");
    env.fake
        .push(bash_call("call_1", &touch_command(&marker), 2));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);

    let turn = client.prompt(&session, "touch it", no_questions);
    assert!(!exists(&marker), "the denied command ran");
    let sent = tool_content(&env.fake.wait_for_requests(2)[1].body, "call_1");
    assert!(sent.contains("not on Fridays"), "{sent}");
    let hook = turn.one("hook_result");
    assert_eq!(hook["exitCode"], 0);
    assert_eq!(hook["outcome"], "deny");
}

#[test]
fn a_permission_decision_ask_asks_although_the_policy_allows() {
    let env = env_with("[[hooks.PreToolUse]]\ncommand = \"sh ../hooks/ask.sh\"\n");
    script(
        &env,
        "ask",
        "echo '{\"hookSpecificOutput\":{\"permissionDecision\":\"ask\"}}'\n",
    );
    let marker = env.work.join("marker");
    env.fake
        .push(bash_call("call_1", &touch_command(&marker), 2));
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);

    let turn = client.prompt(&session, "touch it", decide_all("reject"));
    assert_eq!(turn.of_type("approval_request").len(), 1);
    assert!(!exists(&marker), "the rejected command ran");
}

#[test]
fn a_post_tool_use_hook_receives_the_calls_input_and_output() {
    let env =
        env_with("[[hooks.PostToolUse]]\nmatcher = \"bash\"\ncommand = \"sh ../hooks/post.sh\"\n");
    script(&env, "post", "cat > ../post_input.json\n");
    env.fake
        .push(bash_call("call_1", "echo hello-from-bash", 2));
    env.fake.push(openai::text(&["done"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);

    let turn = client.prompt(&session, "say hello", no_questions);
    assert_eq!(turn.one("hook_result")["outcome"], "continue");
    let input = json_file(&env, "post_input.json");
    assert_eq!(input["hook_event_name"], "PostToolUse");
    assert_eq!(input["tool_name"], "bash");
    assert_eq!(input["tool_input"]["command"], "echo hello-from-bash");
    let output = input["tool_response"]["output"].as_str().unwrap();
    assert!(output.contains("hello-from-bash"), "{input:#}");
    assert_eq!(input["tool_response"]["is_error"], false);
}

#[test]
fn a_user_prompt_submit_hooks_stdout_reaches_the_model_with_the_prompt() {
    let env = env_with("[[hooks.UserPromptSubmit]]\ncommand = \"sh ../hooks/context.sh\"\n");
    script(
        &env,
        "context",
        "cat > ../prompt_input.json\necho 'CONTEXT: the branch is main'\n",
    );
    env.fake.push(openai::text(&["first"]));
    env.fake.push(openai::text(&["second"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);

    client.prompt(&session, "what branch?", no_questions);
    let first = last_user_text(&env.fake.wait_for_requests(1)[0].body);
    assert!(first.starts_with("what branch?"), "{first}");
    assert!(first.contains("CONTEXT: the branch is main"), "{first}");
    let input = json_file(&env, "prompt_input.json");
    assert_eq!(input["hook_event_name"], "UserPromptSubmit");
    assert_eq!(input["prompt"], "what branch?");

    // The next turn's request has the first prompt with its context, from the history.
    client.prompt(&session, "and now?", no_questions);
    let body = &env.fake.wait_for_requests(2)[1].body;
    let first_again = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(first_again, first);
}

#[test]
fn a_user_prompt_submit_hook_that_exits_2_rejects_the_prompt_without_a_model_call() {
    let env = env_with("[[hooks.UserPromptSubmit]]\ncommand = \"sh ../hooks/reject.sh\"\n");
    script(&env, "reject", "echo 'no secrets in prompts' >&2\nexit 2\n");
    env.fake.push(openai::text(&["after"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);

    let turn = client.prompt(&session, "my password is hunter2", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let text = turn.result()["text"].as_str().unwrap();
    assert!(text.contains("no secrets in prompts"), "{text}");
    assert_eq!(turn.one("hook_result")["outcome"], "block");

    // The rejected prompt is never sent, not even with the next one.
    std::fs::write(env.dir.path().join("hooks/reject.sh"), "exit 0\n").unwrap();
    client.prompt(&session, "hello", no_questions);
    let requests = env.fake.wait_for_requests(1);
    assert_eq!(requests.len(), 1);
    assert!(!requests[0].body.to_string().contains("hunter2"));
}

#[test]
fn a_stop_hook_that_exits_2_once_makes_the_agent_take_one_more_step() {
    let env = env_with("[[hooks.Stop]]\ncommand = \"sh ../hooks/stop.sh\"\n");
    script(
        &env,
        "stop",
        "cat > ../stop_input_$(ls .. | grep -c stop_input).json\n\
         if [ -e ../stopped ]; then exit 0; fi\n\
         touch ../stopped\n\
         echo 'run the tests before you stop' >&2\n\
         exit 2\n",
    );
    env.fake.push(openai::text(&["done"]));
    env.fake.push(openai::text(&["tests pass, now done"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);

    let turn = client.prompt(&session, "fix it", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    let requests = env.fake.wait_for_requests(2);
    let feedback = last_user_text(&requests[1].body);
    assert!(
        feedback.contains("run the tests before you stop"),
        "{feedback}"
    );
    let outcomes: Vec<&Value> = turn
        .of_type("hook_result")
        .iter()
        .map(|h| &h["outcome"])
        .collect();
    assert_eq!(outcomes, [&json!("block"), &json!("continue")]);
    assert_eq!(
        json_file(&env, "stop_input_0.json")["stop_hook_active"],
        false
    );
    assert_eq!(
        json_file(&env, "stop_input_1.json")["stop_hook_active"],
        true
    );

    // The next turn's history has the step the hook asked for.
    env.fake.push(openai::text(&["ok"]));
    client.prompt(&session, "thanks", no_questions);
    let body = env.fake.wait_for_requests(3)[2].body.to_string();
    assert!(body.contains("run the tests before you stop"), "{body}");
    assert_eq!(env.fake.requests().len(), 3, "no step more than asked");
}

#[test]
fn a_hook_that_hangs_is_killed_at_its_timeout_and_the_turn_goes_on() {
    let env =
        env_with("[[hooks.PreToolUse]]\ncommand = \"sh ../hooks/hang.sh\"\ntimeout_secs = 1\n");
    // The hook's shell and a child of it, both in its process group.
    script(
        &env,
        "hang",
        "sleep 300 &\necho $! > ../child.pid.tmp && mv ../child.pid.tmp ../child.pid\nwait\n",
    );
    let marker = env.work.join("marker");
    env.fake
        .push(bash_call("call_1", &touch_command(&marker), 2));
    env.fake.push(openai::text(&["went on"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);

    let turn = client.prompt(&session, "touch it", no_questions);
    assert_eq!(turn.result()["stopReason"], "end_turn");
    assert!(exists(&marker), "a timed-out hook does not block");
    let hook = turn.one("hook_result");
    assert_eq!(hook["outcome"], "error");
    assert_eq!(hook["timedOut"], true);
    assert!(hook.get("exitCode").is_none(), "{hook}");
    let message = hook["message"].as_str().unwrap();
    assert!(message.contains("timeout of 1 s"), "{message}");
    #[cfg(target_os = "linux")]
    {
        let child = wait_for_pid_file(&env.dir.path().join("child.pid"));
        poll_until("the hook's child to be killed", || process_gone(child));
    }
}

#[test]
fn a_session_start_hooks_stdout_reaches_the_system_prompt() {
    let env = env_with(
        "[[hooks.SessionStart]]\nmatcher = \"startup\"\ncommand = \"echo SESSION-FACT: tests use make check\"\n",
    );
    env.fake.push(openai::text(&["ok"]));
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    let started = client.wait_event("hook_result");
    assert_eq!(started["event"], "SessionStart");
    assert_eq!(started["context"], "SESSION-FACT: tests use make check");

    client.prompt(&session, "hi", no_questions);
    let system = system(&env.fake.wait_for_requests(1)[0].body);
    assert!(
        system.contains("SESSION-FACT: tests use make check"),
        "{system}"
    );
}

#[test]
fn an_untrusted_projects_hooks_do_not_run_until_zeroclaw_trust_and_not_after_revoke() {
    let env = env_with("");
    std::fs::create_dir_all(env.work.join(".git")).unwrap();
    std::fs::create_dir_all(env.work.join(".zeroclaw")).unwrap();
    std::fs::write(
        env.work.join(".zeroclaw/hooks.toml"),
        "[[hooks.UserPromptSubmit]]\ncommand = \"echo PROJECT-HOOK-RAN\"\n",
    )
    .unwrap();
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);

    let context = client.call("session/context", json!({"sessionId": session}));
    assert_eq!(context["projectTrusted"], false);
    let hook = &context["hooks"][0];
    assert_eq!(hook["event"], "UserPromptSubmit");
    assert_eq!(hook["source"], "project");
    assert!(
        hook["skipped"].as_str().unwrap().contains("zeroclaw trust"),
        "{context:#}"
    );

    let ask = |client: &mut Client, n: usize| {
        env.fake.push(openai::text(&["ok"]));
        let turn = client.prompt(&session, &format!("prompt {n}"), no_questions);
        let text = last_user_text(&env.fake.wait_for_requests(n)[n - 1].body);
        (turn, text)
    };
    let (turn, text) = ask(&mut client, 1);
    assert!(!text.contains("PROJECT-HOOK-RAN"), "{text}");
    assert!(turn.of_type("hook_result").is_empty());

    let trust = |args: &[&str]| {
        let out = env.dir.command(args).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let work = env.work.display().to_string();
    let said = trust(&["trust", &work]);
    assert!(said.starts_with("trusted "), "{said}");
    let context = client.call("session/context", json!({"sessionId": session}));
    assert_eq!(context["projectTrusted"], true);
    assert!(context["hooks"][0].get("skipped").is_none(), "{context:#}");
    let (turn, text) = ask(&mut client, 2);
    assert!(text.contains("PROJECT-HOOK-RAN"), "{text}");
    assert_eq!(turn.one("hook_result")["source"], "project");

    let said = trust(&["trust", "--revoke", &work]);
    assert!(said.starts_with("no longer trusted"), "{said}");
    let (turn, text) = ask(&mut client, 3);
    assert!(!text.contains("PROJECT-HOOK-RAN"), "{text}");
    assert!(turn.of_type("hook_result").is_empty());
}

#[test]
fn a_bad_hook_in_config_toml_stops_the_daemon_with_the_entry_named() {
    let dir = TestDir::new();
    dir.write_config("[[hooks.PreToolUse]]\nmatcher = \"(\"\ncommand = \"true\"\n");
    let mut daemon = dir.spawn_with(&[], &[]);
    assert!(!daemon.wait_exit().success());
    let log = daemon.log_text();
    assert!(log.contains("config.toml is not valid"), "{log}");
    assert!(log.contains("hooks.PreToolUse[0]"), "{log}");
    assert!(log.contains("not a regular expression"), "{log}");
}

#[test]
fn a_pre_compact_hook_runs_before_session_compact_with_its_trigger() {
    let env = env_with(
        "[[hooks.PreCompact]]\nmatcher = \"manual\"\ncommand = \"sh ../hooks/compact.sh\"\n",
    );
    script(&env, "compact", "cat > ../compact_input.json\n");
    let mut client = env.daemon.client();
    let session = client.new_session(&env.work);
    for n in 0..2 {
        env.fake.push(openai::text(&[&format!("answer {n}")]));
        client.prompt(&session, &format!("prompt {n}"), no_questions);
    }
    env.fake.push(openai::text(&["SUMMARY."]));
    let result = client.call("session/compact", json!({"sessionId": session}));
    assert_eq!(result["messagesFolded"], 2, "{result}");

    let input = json_file(&env, "compact_input.json");
    assert_eq!(input["hook_event_name"], "PreCompact");
    assert_eq!(input["trigger"], "manual");
    let events = client.take_events();
    let hook = events
        .iter()
        .find(|e| e["type"] == "hook_result")
        .unwrap_or_else(|| panic!("{events:#?}"));
    assert_eq!(hook["event"], "PreCompact");
    assert!(hook.get("turnId").is_none(), "{hook}");
}

//! `session/list` and `session/load`: the daemon's sessions, whoever made them; a load
//! replays the history as ACP updates before its answer, tool calls as on the live path.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ListSessionsRequest, LoadSessionRequest, StopReason, ToolCallStatus,
};
use serde_json::json;
use zeroclaw_testkit::openai;

#[test]
fn a_session_made_by_the_cli_loads_with_its_history_replayed_first() {
    let env = Env::new("", BASH_ALLOWED);
    env.fake.push(bash_call("call_1", "echo from-the-cli", 2));
    env.fake.push(openai::text(&["Done on the command line."]));
    let cli = env
        .dir
        .command(&["prompt", "--cwd", env.work.to_str().unwrap(), "run echo"])
        .output()
        .unwrap();
    assert!(
        cli.status.success(),
        "{}",
        String::from_utf8_lossy(&cli.stderr)
    );
    env.fake.push(openai::text(&["And now from the editor."]));

    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await?;
        let list = cx
            .send_request(ListSessionsRequest::new())
            .block_task()
            .await?;
        assert_eq!(list.sessions.len(), 1);
        let session = list.sessions[0].session_id.clone();
        assert_eq!(list.sessions[0].cwd, env.work);
        cx.send_request(LoadSessionRequest::new(session.clone(), &env.work))
            .block_task()
            .await?;
        // The replay came before the load's answer; the session's title (the CLI's) after.
        let replayed = editor
            .seen()
            .kinds()
            .iter()
            .take_while(|kind| *kind != "session_info_update")
            .count();
        assert!(replayed > 0);
        let answer = cx
            .send_request(text_prompt(&session.0, "and again"))
            .block_task()
            .await?;
        Ok((replayed, answer.stop_reason))
    }));
    let (replayed, stop) = exit.outcome.unwrap();
    assert_eq!(stop, StopReason::EndTurn);
    let seen = editor.seen();
    let kinds = seen.kinds();
    assert_eq!(
        kinds[..replayed],
        [
            "user_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_message_chunk"
        ]
    );
    let updates = seen.json();
    assert_eq!(updates[0]["content"]["text"], "run echo");
    assert_eq!(updates[1]["toolCallId"], "call_1");
    assert_eq!(seen.status(1), Some(ToolCallStatus::Pending));
    assert_eq!(updates[1]["kind"], "execute");
    assert_eq!(updates[1]["title"], "bash: `echo from-the-cli`");
    assert_eq!(updates[2]["status"], "completed");
    assert!(
        updates[2]["rawOutput"].to_string().contains("from-the-cli"),
        "{}",
        updates[2]
    );
    assert_eq!(updates[3]["content"]["text"], "Done on the command line.");
    assert_eq!(updates[4]["sessionUpdate"], "session_info_update");
    assert_eq!(updates[4]["title"], "run echo");
    assert_eq!(
        seen.text_of("agent_message_chunk"),
        "Done on the command line.And now from the editor."
    );
    // The model got the whole conversation with the new prompt.
    let body = &env.fake.wait_for_requests(3)[2].body;
    assert_eq!(
        roles(body),
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
}

#[test]
fn load_of_an_unknown_session_is_an_error_with_our_code() {
    let env = Env::new("", "");
    let exit = runtime().block_on(run(&env.dir, Editor::new(Permission::Hold), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await?;
        Ok(cx
            .send_request(LoadSessionRequest::new("no-such-session", &env.work))
            .block_task()
            .await)
    }));
    let error = exit.outcome.unwrap().unwrap_err();
    assert_eq!(i32::from(error.code), -32000, "{error:?}");
}

#[test]
fn list_shows_every_session_or_those_of_one_cwd() {
    let env = Env::new("", "");
    let other = env.work.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let mut client = env.daemon.client();
    let here = client.new_session(&env.work);
    let there = client.new_session(&other);
    client.call(
        "session/rename",
        json!({"sessionId": there, "title": "elsewhere"}),
    );
    let exit = runtime().block_on(run(&env.dir, Editor::new(Permission::Hold), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await?;
        let all = cx
            .send_request(ListSessionsRequest::new())
            .block_task()
            .await?;
        let filtered = cx
            .send_request(ListSessionsRequest::new().cwd(other.clone()))
            .block_task()
            .await?;
        Ok((all, filtered))
    }));
    let (all, filtered) = exit.outcome.unwrap();
    let mut ids: Vec<String> = all
        .sessions
        .iter()
        .map(|s| s.session_id.0.to_string())
        .collect();
    ids.sort();
    let mut want = vec![here.clone(), there.clone()];
    want.sort();
    assert_eq!(ids, want);
    assert_eq!(filtered.sessions.len(), 1);
    assert_eq!(filtered.sessions[0].session_id.0.as_ref(), there);
    assert_eq!(filtered.sessions[0].title.as_deref(), Some("elsewhere"));
    assert_eq!(filtered.sessions[0].cwd, other);
    assert!(filtered.sessions[0].updated_at.is_some());
    assert!(all.next_cursor.is_none());
}

#[test]
fn a_load_asking_another_cwd_keeps_the_stored_one_and_says_so() {
    let env = Env::new("", "");
    let session = env.daemon.client().new_session(&env.work);
    let elsewhere = tempfile::tempdir().unwrap();
    let exit = runtime().block_on(run(&env.dir, Editor::new(Permission::Hold), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await?;
        cx.send_request(LoadSessionRequest::new(session.clone(), elsewhere.path()))
            .block_task()
            .await?;
        let list = cx
            .send_request(ListSessionsRequest::new())
            .block_task()
            .await?;
        Ok(list.sessions[0].cwd.clone())
    }));
    assert_eq!(exit.outcome.unwrap(), env.work, "the stored cwd stays");
    assert!(
        exit.stderr
            .contains("session/load: the session keeps its stored working directory"),
        "{}",
        exit.stderr
    );
}

#[test]
fn list_by_cwd_gives_full_pages_and_follows_next_cursor() {
    let env = Env::new("", "");
    let other = env.work.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let mut client = env.daemon.client();
    // More than the daemon's page of 200 here, with sessions of another directory among
    // them: filtered after paging, the first page would come short.
    let mut here = Vec::new();
    for n in 0..205 {
        if n % 10 == 0 {
            client.new_session(&other);
        }
        here.push(client.new_session(&env.work));
    }
    let exit = runtime().block_on(run(&env.dir, Editor::new(Permission::Hold), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await?;
        let first = cx
            .send_request(ListSessionsRequest::new().cwd(env.work.clone()))
            .block_task()
            .await?;
        let cursor = first.next_cursor.clone().expect("a second page");
        let second = cx
            .send_request(
                ListSessionsRequest::new()
                    .cwd(env.work.clone())
                    .cursor(cursor),
            )
            .block_task()
            .await?;
        Ok((first, second))
    }));
    let (first, second) = exit.outcome.unwrap();
    assert_eq!(first.sessions.len(), 200, "a full page");
    assert_eq!(second.sessions.len(), 5);
    assert!(second.next_cursor.is_none());
    let mut ids: Vec<String> = first
        .sessions
        .iter()
        .chain(&second.sessions)
        .inspect(|s| assert_eq!(s.cwd, env.work))
        .map(|s| s.session_id.0.to_string())
        .collect();
    ids.sort();
    here.sort();
    assert_eq!(ids, here);
}

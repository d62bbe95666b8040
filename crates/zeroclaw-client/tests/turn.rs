//! The turn stream against a real daemon: the daemon crate's in-memory daemon (its real method
//! table, sessions, turns and tools) over an in-memory stream, whose provider is the
//! testkit's fake LLM, a real HTTP server on 127.0.0.1. Steps are ordered by the events
//! the daemon sends, never by sleeping.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use tempfile::TempDir;
use tokio::sync::broadcast::error::RecvError;
use zeroclaw_client::{
    Client, ClientOptions, Decision, EVENT_BUFFER, NewSession, Turn, TurnEvent, Update,
};
use zeroclaw_daemon::config::{AgentSettings, Config, ProviderConfig};
use zeroclaw_daemon::testing::InMemoryDaemon;
use zeroclaw_testkit::{FakeProvider, HANG_GUARD, Reply, openai};

struct Setup {
    client: Client,
    session: String,
    dir: TempDir,
    daemon: InMemoryDaemon,
    _fake: FakeProvider,
}

/// A daemon whose model answers with `replies`, a client over an in-memory stream, and a
/// session in a fresh directory.
async fn setup(replies: Vec<Reply>) -> Setup {
    let fake = FakeProvider::start().await.unwrap();
    fake.push_all(replies);
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        agent: Arc::new(AgentSettings {
            provider: ProviderConfig {
                base_url: fake.base_url(),
                max_retries: 0,
                ..ProviderConfig::default()
            },
            ..AgentSettings::default()
        }),
        ..Config::default()
    };
    let daemon = InMemoryDaemon::start(config, dir.path()).unwrap();
    let client = connect(&daemon).await;
    let session = client
        .session_new(NewSession {
            cwd: Some(dir.path().to_string_lossy().into_owned()),
            ..NewSession::default()
        })
        .await
        .unwrap()
        .session_id;
    Setup {
        client,
        session,
        dir,
        daemon,
        _fake: fake,
    }
}

async fn connect(daemon: &InMemoryDaemon) -> Client {
    Client::from_stream(daemon.connect(), "memory", ClientOptions::default())
        .await
        .unwrap()
}

/// The model asks to run `command` with bash.
fn bash_call(command: &str) -> Reply {
    let args = serde_json::json!({ "command": command }).to_string();
    openai::Builder::new()
        .tool_call(0, "call_1", "bash", &args, 2)
        .build()
}

async fn next(turn: &mut Turn) -> Option<TurnEvent> {
    tokio::time::timeout(HANG_GUARD, turn.next())
        .await
        .expect("the turn stream hung")
}

/// One line per event, for comparing whole turns.
fn describe(event: &TurnEvent) -> String {
    match event {
        TurnEvent::Update(Update::AgentMessageChunk { text }) => format!("text {text}"),
        TurnEvent::Update(Update::ToolResult {
            raw_output,
            is_error,
            ..
        }) => {
            let output = raw_output.as_str().unwrap_or_default();
            let first_line = output.lines().next().unwrap_or_default();
            format!("tool_result error={is_error} {first_line}")
        }
        TurnEvent::Update(Update::TurnComplete { stop_reason, .. }) => {
            format!("turn_complete {stop_reason:?}")
        }
        // The turn stream passes each model call's usage through.
        TurnEvent::Update(Update::UsageUpdate(usage)) if usage.estimated => {
            "usage estimated".into()
        }
        TurnEvent::Update(Update::UsageUpdate(usage)) => {
            format!("usage {} {}", usage.input_tokens, usage.output_tokens)
        }
        TurnEvent::Update(update) => update.kind().to_owned(),
        TurnEvent::Approval(request) => format!("approval {}", request.name),
        TurnEvent::Lagged(_) => "lagged".into(),
        TurnEvent::Done(Ok(result)) => format!("done {:?} {}", result.stop_reason, result.text),
        TurnEvent::Done(Err(e)) => format!("failed {e}"),
    }
}

/// Streams the turn to its end, answering every approval request with `decision`.
async fn run(turn: &mut Turn, decision: Decision) -> Vec<String> {
    let mut seen = Vec::new();
    while let Some(event) = next(turn).await {
        seen.push(describe(&event));
        if let TurnEvent::Approval(request) = event {
            request.answer(decision).await.unwrap();
        }
    }
    seen
}

#[tokio::test]
async fn events_arrive_in_order_and_the_answer_comes_last() {
    let s = setup(vec![openai::text(&["Hel", "lo ", "there"])]).await;
    let mut turn = s.client.turn(&s.session, "hi");
    assert_eq!(
        run(&mut turn, Decision::Reject).await,
        [
            "text Hel",
            "text lo ",
            "text there",
            "usage 10 3",
            "turn_complete EndTurn",
            "done EndTurn Hello there",
        ]
    );
    assert!(turn.next().await.is_none(), "nothing follows the answer");
}

/// A turn whose model asks to make a file with bash, answered with `decision`: every
/// event, and whether the file was made.
async fn decide_a_bash_call(decision: Decision, answer: &str) -> (Vec<String>, bool) {
    let s = setup(vec![
        bash_call(if cfg!(windows) {
            "type nul > made-by-the-tool && echo ran"
        } else {
            "touch made-by-the-tool && echo ran"
        }),
        openai::text(&[answer]),
    ])
    .await;
    let mut turn = s.client.turn(&s.session, "make a file");
    let seen = run(&mut turn, decision).await;
    (seen, s.dir.path().join("made-by-the-tool").exists())
}

#[tokio::test]
async fn an_allowed_approval_runs_the_tool() {
    let (seen, made) = decide_a_bash_call(Decision::AllowOnce, "It ran.").await;
    assert_eq!(
        seen,
        [
            "usage estimated",
            "tool_call",
            "approval bash",
            "approval_resolved",
            "tool_result error=false ran",
            "text It ran.",
            "usage 10 1",
            "turn_complete EndTurn",
            "done EndTurn It ran.",
        ]
    );
    assert!(made);
}

#[tokio::test]
async fn a_rejected_approval_refuses_the_call() {
    let (seen, made) = decide_a_bash_call(Decision::Reject, "Understood.").await;
    assert_eq!(
        seen,
        [
            "usage estimated",
            "tool_call",
            "approval bash",
            "approval_resolved",
            "tool_result error=true the user rejected this bash call; it did not run. Do not retry it unchanged; ask the user or try another approach",
            "text Understood.",
            "usage 10 1",
            "turn_complete EndTurn",
            "done EndTurn Understood.",
        ]
    );
    assert!(!made);
}

#[tokio::test]
async fn a_followed_turn_yields_its_pending_approval_and_ends_at_its_turn_complete() {
    let s = setup(vec![bash_call("echo ran"), openai::text(&["It ran."])]).await;
    let mut turn = s.client.turn(&s.session, "run it");
    let _unanswered = loop {
        if let TurnEvent::Approval(request) = next(&mut turn).await.unwrap() {
            break request;
        }
    };
    // Another client loads the session mid-turn: the load re-sends the pending request.
    let other = connect(&s.daemon).await;
    let mut events = other.subscribe(&s.session);
    assert!(other.session_load(&s.session, true).await.unwrap().running);
    let mut pending = Vec::new();
    while let Ok(event) = events.try_recv() {
        if matches!(event.update, Update::ApprovalRequest { .. }) {
            pending.push(event);
        }
    }
    let mut followed = other.follow(&s.session, events, pending);
    assert_eq!(
        run(&mut followed, Decision::AllowOnce).await,
        [
            "approval bash",
            "approval_resolved",
            "tool_result error=false ran",
            "text It ran.",
            "usage 10 1",
            "turn_complete EndTurn",
        ]
    );
    assert_eq!(
        run(&mut turn, Decision::Reject).await.last().unwrap(),
        "done EndTurn It ran."
    );
}

#[tokio::test]
async fn cancel_ends_the_turn_with_stop_reason_cancelled() {
    // The model sends one chunk, then nothing more: only a cancel ends this turn.
    let s = setup(vec![openai::Builder::new().text("partial").stall().build()]).await;
    let mut turn = s.client.turn(&s.session, "go on forever");
    loop {
        let event = next(&mut turn).await.unwrap();
        if describe(&event) == "text partial" {
            break;
        }
    }
    assert!(turn.cancel().await.unwrap(), "a turn was running");
    let rest = run(&mut turn, Decision::Reject).await;
    assert_eq!(
        rest,
        ["turn_complete Cancelled", "done Cancelled partial"],
        "{rest:?}"
    );
}

#[tokio::test]
async fn a_lagged_subscriber_is_told_how_much_it_lost_and_still_gets_the_answer() {
    let chunks = EVENT_BUFFER + 100;
    let s = setup(vec![openai::many_chunks(chunks, "x")]).await;
    let mut watcher = s.client.subscribe(&s.session);
    let mut turn = s.client.turn(&s.session, "flood");
    // Read nothing of the turn until its turn_complete is queued: by then the turn's
    // subscriber has fallen behind by more than its buffer.
    loop {
        match watcher.recv().await {
            Ok(event) if matches!(event.update, Update::TurnComplete { .. }) => break,
            Ok(_) | Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => panic!("the connection closed"),
        }
    }
    let Some(TurnEvent::Lagged(lost)) = next(&mut turn).await else {
        panic!("the turn's first event is not the loss report");
    };
    let mut seen = Vec::new();
    while let Some(event) = next(&mut turn).await {
        seen.push(describe(&event));
    }
    let (last, rest) = seen.split_last().unwrap();
    assert!(last.starts_with("done EndTurn xxx"), "{last:.40}");
    assert_eq!(rest.last().unwrap(), "turn_complete EndTurn");
    let shown = rest.iter().filter(|e| *e == "text x").count();
    let usage = rest.iter().filter(|e| e.starts_with("usage ")).count();
    // Every event the daemon sent (the chunks, the call's usage_update, then
    // turn_complete) was lost or shown.
    assert!(lost > 0);
    assert_eq!(lost as usize + shown + usage + 1, chunks + 2);
}

#[tokio::test]
async fn next_tagged_says_which_events_are_a_subagents_and_from_which_call() {
    let args = serde_json::json!({"description": "Look", "prompt": "look around"}).to_string();
    let s = setup(vec![
        openai::Builder::new()
            .tool_call(0, "call_task", "task", &args, 2)
            .build(),
        openai::text(&["child answer"]),
        openai::text(&["parent answer"]),
    ])
    .await;
    let mut turn = s.client.turn(&s.session, "go");
    let mut seen = Vec::new();
    loop {
        let tagged = tokio::time::timeout(HANG_GUARD, turn.next_tagged())
            .await
            .expect("the turn stream hung");
        let Some(tagged) = tagged else { break };
        let tag = match &tagged.subagent {
            Some(subagent) => {
                assert!(subagent.child_session_id.is_some(), "{subagent:?}");
                assert_ne!(
                    subagent.child_session_id.as_deref(),
                    Some(s.session.as_str())
                );
                format!("[{}] ", subagent.parent_tool_call_id)
            }
            None => String::new(),
        };
        seen.push(format!("{tag}{}", describe(&tagged.event)));
    }
    // The child's text comes, tagged: not the turn's answer (`next` leaves it out); so
    // does its usage, which is the child session's (the parent's first call reported
    // none: estimated).
    assert_eq!(
        seen,
        [
            "usage estimated",
            "tool_call",
            "[call_task] text child answer",
            "[call_task] usage 10 1",
            "tool_result error=false child answer",
            "text parent answer",
            "usage 10 1",
            "turn_complete EndTurn",
            "done EndTurn parent answer",
        ]
    );
}

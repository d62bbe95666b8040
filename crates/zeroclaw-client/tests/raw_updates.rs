//! `ClientOptions::raw_updates` against a real daemon (the runtime's in-memory daemon, its
//! provider the testkit's fake LLM on 127.0.0.1): the events as the daemon wrote them, in
//! order and before the answer, and a reader that stops taking them holds the connection
//! back until the daemon lets it go, losing nothing before that point. Ordered by the
//! daemon's answers and the connection's end, never by sleeping.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use tokio::sync::mpsc;
use zeroclaw_client::{Client, ClientOptions, NewSession, RawUpdate, SessionUpdate, Update};
use zeroclaw_daemon::config::{AgentSettings, Config, DaemonConfig, ProviderConfig};
use zeroclaw_daemon::testing::InMemoryDaemon;
use zeroclaw_testkit::{FakeProvider, HANG_GUARD, Reply, openai};

/// The daemon, its provider, and the test's own directory: the daemon's and the sessions'
/// cwd (a turn snapshots its cwd, so it must not be a shared directory such as /tmp).
async fn daemon(
    replies: Vec<Reply>,
    daemon: DaemonConfig,
) -> (InMemoryDaemon, FakeProvider, tempfile::TempDir) {
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
        daemon,
        ..Config::default()
    };
    let daemon = InMemoryDaemon::start(config, dir.path()).unwrap();
    (daemon, fake, dir)
}

async fn connect(daemon: &InMemoryDaemon, raw: Option<mpsc::Sender<RawUpdate>>) -> Client {
    let options = ClientOptions {
        raw_updates: raw,
        ..ClientOptions::default()
    };
    Client::from_stream(daemon.connect(), "memory", options)
        .await
        .unwrap()
}

async fn new_session(client: &Client, cwd: &tempfile::TempDir) -> String {
    let cwd = cwd.path().to_string_lossy().into_owned();
    let session = client.session_new(NewSession {
        cwd: Some(cwd),
        ..NewSession::default()
    });
    session.await.unwrap().session_id
}

fn parse(raw: &RawUpdate) -> SessionUpdate {
    SessionUpdate::parse(&serde_json::from_str(raw.get()).unwrap()).unwrap()
}

#[tokio::test]
async fn raw_updates_are_the_turns_events_in_order_and_all_arrive_before_its_answer() {
    let (daemon, _fake, dir) =
        daemon(vec![openai::text(&["Hel", "lo"])], DaemonConfig::default()).await;
    let (tx, mut raw) = mpsc::channel(64);
    let tapped = connect(&daemon, Some(tx)).await;
    let id = new_session(&tapped, &dir).await;
    // A second connection, attached to the same session, parses the same events.
    let plain = connect(&daemon, None).await;
    let mut parsed = plain.subscribe(&id);
    plain.session_load(&id, false).await.unwrap();
    let diverted = tapped.subscribe(&id);

    let answer = tapped.session_prompt(&id, "hi").await.unwrap();
    assert_eq!(answer.text, "Hello");
    // Every event of the turn was queued before the answer was read.
    let mut got = Vec::new();
    while let Ok(update) = raw.try_recv() {
        got.push(parse(&update));
    }
    let mut expected = Vec::new();
    while expected.len() < got.len() {
        expected.push(parsed.recv().await.unwrap());
    }
    assert_eq!(got, expected);
    assert!(
        matches!(
            got.last().map(|u| &u.update),
            Some(Update::TurnComplete { .. })
        ),
        "{got:?}"
    );
    assert!(
        matches!(got.first().map(|u| &u.update), Some(Update::AgentMessageChunk { text }) if text == "Hel"),
        "{got:?}"
    );
    // They went to the queue, not to the connection's subscribers.
    assert!(diverted.is_empty());
}

#[tokio::test]
async fn a_reader_that_stops_taking_raw_updates_is_let_go_by_the_daemon_with_nothing_lost_before() {
    const CHUNKS: usize = 5_000;
    let numbers: Vec<String> = (0..CHUNKS).map(|n| n.to_string()).collect();
    let texts: Vec<&str> = numbers.iter().map(String::as_str).collect();
    let small = DaemonConfig {
        outbound_queue: 16,
        ..DaemonConfig::default()
    };
    let (daemon, _fake, dir) = daemon(vec![openai::text(&texts)], small).await;
    let (tx, mut raw) = mpsc::channel(1);
    let tapped = std::sync::Arc::new(connect(&daemon, Some(tx)).await);
    let id = new_session(&tapped, &dir).await;
    let watcher = connect(&daemon, None).await;
    let mut events = watcher.subscribe(&id);
    watcher.session_load(&id, false).await.unwrap();

    // Nothing is taken from the queue: the connection stops reading, the daemon's writes
    // to it back up, and the daemon detaches and closes it; the turn goes on without it.
    let prompt = tokio::spawn({
        let (tapped, id) = (tapped.clone(), id.clone());
        async move { tapped.session_prompt(&id, "count").await }
    });
    loop {
        let event = tokio::time::timeout(HANG_GUARD, events.recv()).await;
        let event = event.expect("the turn waited for the reader").unwrap();
        if matches!(event.update, Update::TurnComplete { .. }) {
            break;
        }
    }

    // What the connection had read, and what the daemon wrote before closing it, is all
    // there and in order: the turn's first chunks, with no gap, then the end.
    let mut got = Vec::new();
    while let Some(update) = tokio::time::timeout(HANG_GUARD, raw.recv()).await.unwrap() {
        match parse(&update).update {
            Update::AgentMessageChunk { text } => got.push(text.into_owned()),
            other => panic!("after {} chunks: {other:?}", got.len()),
        }
    }
    assert!(!got.is_empty() && got.len() < CHUNKS, "{}", got.len());
    assert_eq!(got, numbers[..got.len()]);
    // Its answer was written only if the turn ended within the daemon's grace at close.
    let _ = prompt.await.unwrap();
}

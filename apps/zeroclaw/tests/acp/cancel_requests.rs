//! `$/cancel_request` of a request that opens a session: `session/new`, `session/load`,
//! `session/fork` are answered `-32800` (request cancelled) at once, and what the daemon did
//! for them is undone: a session made for the request is deleted, one it attached is
//! detached.
//!
//! The daemon's part is held open while the editor cancels: by a `SessionStart` hook that
//! waits for the test (new, load), or by the test holding the database's write lock (fork,
//! which runs no hook). Unix: the hook is a shell loop.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ForkSessionRequest, LoadSessionRequest, NewSessionRequest,
};
use serde_json::json;
use std::path::PathBuf;

/// A `SessionStart` hook (for `source`) that says it started, then waits until released.
struct HeldHook {
    started: PathBuf,
    release: PathBuf,
    _dir: tempfile::TempDir,
}

impl HeldHook {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self {
            started: dir.path().join("started"),
            release: dir.path().join("release"),
            _dir: dir,
        }
    }

    /// The `[[hooks.SessionStart]]` table for sessions started as `source`.
    fn config(&self, source: &str) -> String {
        let command = format!(
            "touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done",
            self.started.display(),
            self.release.display()
        );
        format!("[[hooks.SessionStart]]\nmatcher = {source:?}\ncommand = {command:?}\n")
    }

    async fn wait_started(&self) {
        let started = self.started.clone();
        off_thread(move || {
            poll_until("the SessionStart hook to start", || started.exists());
        })
        .await;
    }

    fn release(&self) {
        std::fs::write(&self.release, "").unwrap();
    }
}

/// Runs `wait` (a blocking poll) on a thread of its own: the editor's connection runs on
/// the test's, and must go on meanwhile.
async fn off_thread<T: Send + 'static>(wait: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(wait).await.unwrap()
}

#[test]
fn a_cancelled_new_session_answers_cancelled_and_its_session_is_deleted() {
    let hook = HeldHook::new();
    let env = Env::new("", &hook.config("startup"));
    let exit = runtime().block_on(run(&env.dir, Editor::new(Permission::Hold), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await?;
        let new = cx.send_request(NewSessionRequest::new(&env.work));
        let withdraw = new.cancellation_handle();
        hook.wait_started().await;
        withdraw.cancel()?;
        let answer = guard("the cancelled session/new's answer", new.block_task()).await;
        hook.release();
        Ok(answer.map(|a| a.session_id))
    }));
    let error = exit.outcome.unwrap().unwrap_err();
    assert_eq!(i32::from(error.code), -32800, "{error:?}");
    // The bridge finishes its undoing before it exits: the session the daemon made is gone.
    assert!(exit.status.success(), "{}", exit.stderr);
    let listed = env.daemon.client().call("session/list", json!({}));
    assert_eq!(listed, json!({"sessions": []}));
}

#[test]
fn a_cancelled_load_answers_cancelled_and_detaches_the_session() {
    let hook = HeldHook::new();
    let env = Env::new("", &hook.config("resume"));
    let mut probe = env.daemon.client();
    let session = probe.new_session(&env.work);
    // Out of the daemon's memory, so the load brings it back and runs the hook.
    probe.call("session/close", json!({"sessionId": session}));
    // Moved to the polling thread when needed.
    let watcher = std::sync::Mutex::new(Some(probe));
    let exit = runtime().block_on(run(&env.dir, Editor::new(Permission::Hold), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await?;
        let load = cx.send_request(LoadSessionRequest::new(session.clone(), &env.work));
        let withdraw = load.cancellation_handle();
        hook.wait_started().await;
        withdraw.cancel()?;
        let answer = guard("the cancelled session/load's answer", load.block_task()).await;
        hook.release();
        // The load finishes in the daemon, attached, then the bridge detaches it: nobody
        // holds the session, so it leaves memory. (No event says so: the daemon's count.)
        let mut probe = watcher.lock().unwrap().take().unwrap();
        off_thread(move || {
            poll_until("the cut-off load to be detached", || {
                probe.call("status", json!({}))["sessions"]["loaded"] == 0
            });
        })
        .await;
        // And it is not open here.
        let prompt = cx
            .send_request(text_prompt(&session, "still there?"))
            .block_task()
            .await;
        Ok((answer.map(drop), prompt.map(drop)))
    }));
    let (answer, prompt) = exit.outcome.unwrap();
    let error = answer.unwrap_err();
    assert_eq!(i32::from(error.code), -32800, "{error:?}");
    assert_eq!(i32::from(prompt.unwrap_err().code), -32602);
}

#[test]
fn a_cancelled_fork_answers_cancelled_and_the_fork_is_deleted() {
    let env = Env::new("", "");
    let source = env.daemon.client().new_session(&env.work);
    let exit = runtime().block_on(run(&env.dir, Editor::new(Permission::Hold), async |cx| {
        initialize(&cx, ClientCapabilities::new()).await?;
        // The daemon's fork writes the new session: it waits while the test holds the
        // database's write lock (well within the store's 5 s busy time-out).
        let db = rusqlite::Connection::open(env.dir.data_dir().join("zeroclaw.db")).unwrap();
        db.execute_batch("BEGIN IMMEDIATE").unwrap();
        let fork = cx.send_request(ForkSessionRequest::new(source.clone(), &env.work));
        fork.cancellation_handle().cancel()?;
        let answer = guard("the cancelled session/fork's answer", fork.block_task()).await;
        db.execute_batch("ROLLBACK").unwrap();
        Ok(answer.map(|a| a.session_id))
    }));
    let error = exit.outcome.unwrap().unwrap_err();
    assert_eq!(i32::from(error.code), -32800, "{error:?}");
    assert!(exit.status.success(), "{}", exit.stderr);
    // Once the lock was let go the fork was made, then deleted: only the source is left.
    let listed = env.daemon.client().call("session/list", json!({}));
    let ids: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [source.as_str()]);
}

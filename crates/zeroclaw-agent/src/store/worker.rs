//! One thread that owns one SQLite connection and runs the jobs sent to it, one at a time,
//! in the order they were queued; the caller awaits the answer without blocking its
//! reactor thread.
//!
//! Queue: at most [`QUEUE_BOUND`] jobs wait for the thread. Overflow rule: a caller that
//! finds the queue full waits (asynchronously) for room; nothing is dropped or refused.
//! Callers are already bounded (turns by `agent.max_running_turns`, requests by
//! `daemon.max_requests_in_flight` per connection), so the wait pushes back on clients.

use super::db::Db;
use super::{Result, StoreError};
use std::panic::AssertUnwindSafe;
use tokio::sync::{mpsc, oneshot};

/// Jobs waiting for one store thread (see the module docs for the overflow rule).
pub const QUEUE_BOUND: usize = 64;

enum Job {
    Run(Box<dyn FnOnce(&mut Db) + Send>),
    /// Close the connection (after the jobs queued before this one) and end the thread;
    /// the sender learns when it is closed.
    Close(oneshot::Sender<()>),
}

#[derive(Clone)]
pub struct Worker {
    jobs: mpsc::Sender<Job>,
}

impl Worker {
    /// Starts the thread `name`, which owns `db` until [`Worker::close`] or until every
    /// handle is dropped.
    pub fn spawn(name: &str, mut db: Db) -> Result<Self> {
        let (jobs, mut queue) = mpsc::channel::<Job>(QUEUE_BOUND);
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                while let Some(job) = queue.blocking_recv() {
                    match job {
                        Job::Run(job) => {
                            // A job that panics drops its answer (its caller gets an
                            // error); the thread goes on: SQLite rolled back whatever it
                            // had open.
                            let ran = std::panic::catch_unwind(AssertUnwindSafe(|| job(&mut db)));
                            if ran.is_err() {
                                tracing::error!("a store job panicked");
                            }
                        }
                        Job::Close(closed) => {
                            if let Err(e) = db.close() {
                                tracing::error!(error = %e, "could not close the database");
                            }
                            let _ = closed.send(());
                            return;
                        }
                    }
                }
            })
            .map_err(StoreError::thread)?;
        Ok(Self { jobs })
    }

    /// Runs the jobs queued so far, then closes the connection and ends the thread. Jobs
    /// sent after this fail with "no answer". Returns once the connection is closed.
    pub async fn close(&self) {
        let (closed, done) = oneshot::channel();
        if self.jobs.send(Job::Close(closed)).await.is_ok() {
            let _ = done.await;
        }
    }

    /// Runs `job` on the thread and returns its answer.
    pub async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Db) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let (answer, answered) = oneshot::channel();
        let job = Job::Run(Box::new(move |db| {
            // The caller may have gone (its request was cancelled); the work is done anyway.
            let _ = answer.send(job(db));
        }));
        self.jobs
            .send(job)
            .await
            .map_err(|_| StoreError::no_answer())?;
        answered.await.map_err(|_| StoreError::no_answer())?
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use futures_util::FutureExt;
    use std::sync::mpsc as std_mpsc;

    fn worker() -> Worker {
        let (db, _) = Db::open_in_memory().unwrap();
        Worker::spawn("store-test", db).unwrap()
    }

    #[tokio::test]
    async fn a_burst_of_concurrent_callers_each_get_their_answers_in_order() {
        let worker = worker();
        worker
            .run(|db| db.create_session("s", None, "/", "m", None).map(drop))
            .await
            .unwrap();
        let mut callers = Vec::new();
        for caller in 0..8 {
            let worker = worker.clone();
            callers.push(tokio::spawn(async move {
                let mut ids = Vec::new();
                for n in 0..20 {
                    let text = format!("{caller}:{n}");
                    let id = worker
                        .run(move |db| {
                            let message = super::super::NewMessage {
                                text: Some(text),
                                ..Default::default()
                            };
                            db.append("s", zeroclaw_protocol::MessageKind::User, &message)
                        })
                        .await
                        .unwrap();
                    ids.push(id);
                }
                (caller, ids)
            }));
        }
        let mut all = Vec::new();
        for caller in callers {
            let (caller, ids) = caller.await.unwrap();
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "{caller}: {ids:?}");
            all.extend(ids);
        }
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 8 * 20);
        let history = worker.run(|db| db.history("s")).await.unwrap();
        for caller in 0..8 {
            let texts: Vec<String> = history
                .iter()
                .filter_map(|row| row.text.clone())
                .filter(|t| t.starts_with(&format!("{caller}:")))
                .collect();
            let want: Vec<String> = (0..20).map(|n| format!("{caller}:{n}")).collect();
            assert_eq!(texts, want);
        }
    }

    #[tokio::test]
    async fn a_full_queue_makes_the_next_caller_wait_until_the_thread_takes_a_job() {
        let worker = worker();
        let (release, blocked) = std_mpsc::channel::<()>();
        let (started, thread_busy) = tokio::sync::oneshot::channel();
        let blocker = {
            let worker = worker.clone();
            tokio::spawn(async move {
                worker
                    .run(move |_| {
                        let _ = started.send(());
                        blocked.recv().unwrap();
                        Ok(())
                    })
                    .await
            })
        };
        thread_busy.await.unwrap();
        // The thread is busy: the queue fills to its bound, and no further.
        let mut queued = Vec::new();
        for n in 0..QUEUE_BOUND {
            let mut call = Box::pin(worker.run(move |_| Ok(n)));
            assert!((&mut call).now_or_never().is_none());
            queued.push(call);
        }
        assert_eq!(worker.jobs.capacity(), 0);
        let mut waiting = Box::pin(worker.run(|_| Ok(QUEUE_BOUND)));
        assert!(
            (&mut waiting).now_or_never().is_none(),
            "queued past the bound"
        );
        assert_eq!(worker.jobs.capacity(), 0);
        release.send(()).unwrap();
        blocker.await.unwrap().unwrap();
        for (n, call) in queued.into_iter().enumerate() {
            assert_eq!(call.await.unwrap(), n);
        }
        assert_eq!(waiting.await.unwrap(), QUEUE_BOUND);
    }

    #[tokio::test]
    async fn a_failing_statement_returns_its_error_and_the_thread_goes_on() {
        let worker = worker();
        let failed = worker
            .run(|db| db.execute_batch("INSERT INTO no_such_table VALUES (1)"))
            .await
            .unwrap_err();
        assert!(failed.to_string().contains("no_such_table"), "{failed}");
        let panicked = worker.run(|_| -> Result<()> { panic!("a bug") }).await;
        assert!(panicked.unwrap_err().to_string().contains("did not answer"));
        assert_eq!(worker.run(|db| db.count_sessions()).await.unwrap(), 0);
    }
}

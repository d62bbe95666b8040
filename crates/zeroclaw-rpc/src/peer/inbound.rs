//! The inbound side: each frame read, classified by the envelope rules and dispatched —
//! requests to the [`Service`] (answered inline when the handler is ready at its first poll,
//! else from a task of their own, at most `max_in_flight` at once), notifications to it,
//! responses to the pending map.

use super::frame_cap::{reply, write_answer};
use super::shared::{Queue, Shared};
use super::{CallError, Service};
use crate::envelope::{Envelope, classify};
use crate::message::{Id, RpcError, codes};
use crate::outbox::Outbox;
use serde_json::{Value, json};
use std::sync::Arc;
use std::task::Poll;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub(super) struct Reader<S> {
    pub(super) shared: Arc<Shared>,
    pub(super) service: Arc<S>,
    pub(super) in_flight: Arc<Semaphore>,
    pub(super) max_in_flight: usize,
    /// Handlers running as their own tasks.
    pub(super) handlers: TaskTracker,
    /// Drops the handlers still running once the close grace is over.
    pub(super) abort: CancellationToken,
}

impl<S: Service> Reader<S> {
    /// Handles one frame; answers it in `out` (which has room for one more frame) when
    /// that can be done at once.
    pub(super) async fn on_frame(&self, bytes: &[u8], out: &mut Outbox, queue: &mut Queue) {
        match classify(bytes) {
            Envelope::Request { id, method, params } => {
                self.on_request(id, method, params, out, queue).await;
            }
            Envelope::Notification { method, params } => {
                self.service.notification(method, params);
            }
            Envelope::Response { id, outcome } => {
                let matched = match &id {
                    Id::String(id) => self.shared.resolve(id, outcome.map_err(CallError::Rpc)),
                    _ => false,
                };
                if !matched {
                    tracing::warn!(peer = %self.shared.label, "response to an id with no pending request; ignored");
                }
            }
            Envelope::Reply { id, error } => {
                reply(out, &id, &Err(error), self.shared.max_frame_bytes);
            }
            Envelope::Drop { reason } => {
                tracing::warn!(peer = %self.shared.label, reason, "frame dropped without a reply");
            }
        }
    }

    async fn on_request(
        &self,
        id: Id,
        method: String,
        params: Option<Value>,
        out: &mut Outbox,
        queue: &mut Queue,
    ) {
        let Ok(permit) = self.in_flight.clone().try_acquire_owned() else {
            let error = RpcError::new(
                codes::OVERLOADED,
                format!(
                    "too many requests in flight on this connection (limit {}); wait for answers before sending more",
                    self.max_in_flight
                ),
            )
            .with_data(json!({ "limit": self.max_in_flight }));
            reply(out, &id, &Err(error), self.shared.max_frame_bytes);
            return;
        };
        let mut handler = self.service.request(method, params);
        // Most handlers are ready at once; answering inline saves a task per request and
        // keeps their answers in request order.
        let first = std::future::poll_fn(|cx| Poll::Ready(handler.as_mut().poll(cx))).await;
        if let Poll::Ready(outcome) = first {
            drop(permit);
            // What the handler queued (a replay's events, say) goes out before its answer,
            // as it would have had the answer taken the queue too. The buffer may pass its
            // frame limit by what the queue holds, which is bounded as well.
            while let Ok(frame) = queue.try_recv() {
                out.push(&frame);
            }
            self.shared.drained.notify_waiters();
            reply(out, &id, &outcome, self.shared.max_frame_bytes);
            return;
        }
        let shared = self.shared.clone();
        let abort = self.abort.clone();
        self.handlers.spawn(async move {
            let outcome = tokio::select! {
                outcome = handler => outcome,
                () = abort.cancelled() => return,
            };
            drop(permit);
            let mut line = Vec::new();
            write_answer(&mut line, &id, &outcome, shared.max_frame_bytes);
            let _ = shared.enqueue(line.into()).await;
        });
    }
}

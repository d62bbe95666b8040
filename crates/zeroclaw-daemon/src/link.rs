//! A connection's peer as the agent's [`Link`]: how sessions send it events and turns ask
//! it questions. Frames pass through as they are: the agent's [`Notification`] and the
//! peer's share the same bytes.

use serde_json::Value;
use std::time::Duration;
use zeroclaw_agent::link::{BoxFuture, CallError, Link, Notification, NotifyError, Refusal};
use zeroclaw_rpc::PeerHandle;

/// The peer's frame for the agent's, without copying it.
pub fn frame(notification: &Notification) -> zeroclaw_rpc::Notification {
    zeroclaw_rpc::Notification::from_bytes(notification.bytes().clone())
}

/// [`frame`] for a frame only one connection sends (a replay's): moved, not shared.
pub fn own_frame(notification: Notification) -> zeroclaw_rpc::Notification {
    zeroclaw_rpc::Notification::from_bytes(notification.into_bytes())
}

fn notify_error(e: zeroclaw_rpc::NotifyError) -> NotifyError {
    match e {
        zeroclaw_rpc::NotifyError::Full => NotifyError::Full,
        zeroclaw_rpc::NotifyError::Closed => NotifyError::Closed,
    }
}

/// A connection's peer, for the agent.
#[derive(Debug)]
pub struct PeerLink(pub PeerHandle);

impl Link for PeerLink {
    fn label(&self) -> &str {
        self.0.label()
    }

    fn try_send(&self, notification: &Notification) -> Result<(), NotifyError> {
        self.0.try_send(&frame(notification)).map_err(notify_error)
    }

    fn queue_room(&self) -> usize {
        self.0.queue_room()
    }

    fn queue_capacity(&self) -> usize {
        self.0.queue_capacity()
    }

    fn wait_for_room(&self, room: usize, deadline: tokio::time::Instant) -> BoxFuture<'_, bool> {
        Box::pin(self.0.wait_for_room(room, deadline))
    }

    fn close(&self) {
        self.0.close();
    }

    fn is_closed(&self) -> bool {
        self.0.is_closed()
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Value, CallError>> {
        Box::pin(async move {
            self.0
                .request(method, params, timeout)
                .await
                .map_err(|e| match e {
                    zeroclaw_rpc::CallError::Rpc(e) => CallError::Rpc(Refusal {
                        code: e.code,
                        message: e.message,
                    }),
                    zeroclaw_rpc::CallError::Timeout(d) => CallError::Timeout(d),
                    zeroclaw_rpc::CallError::Closed => CallError::Closed,
                })
        })
    }
}

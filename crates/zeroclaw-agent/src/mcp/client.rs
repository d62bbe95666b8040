//! Our side of one MCP connection: the handler rmcp calls for what the server asks
//! (`elicitation/create`, `notifications/tools/list_changed`), and a transport wrapper that
//! sees every message first.
//!
//! The wrapper counts `tools/list_changed` as the message arrives, in order with the
//! others: a server that changes its list during a call announces it before it answers,
//! so when the call's answer is in, the count already says the list is stale and the
//! call refreshes it before the model is called again (`server.rs`). It also tells when
//! the server's side closes (a crashed child, a lost HTTP session).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ErrorData, Implementation,
    InitializeRequestParams, JsonRpcMessage, ProtocolVersion, ServerNotification,
};
use rmcp::service::{
    NotificationContext, RequestContext, RoleClient, RxJsonRpcMessage, TxJsonRpcMessage,
};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::tools::{Answer, AskUser};

/// The people who can answer this server's questions now: one per call in progress whose
/// client declared elicitation, oldest first. A question goes to the oldest (with one call
/// at a time, the one that caused it); with none, it is declined. Bounded by the calls in
/// progress.
#[derive(Default)]
pub struct Askers {
    list: Mutex<Vec<(u64, Arc<dyn AskUser>)>>,
    next: AtomicU64,
    /// Questions waiting for an answer: a call's time limit does not run out meanwhile.
    busy: AtomicUsize,
}

impl Askers {
    pub fn add(self: &Arc<Self>, asker: Arc<dyn AskUser>) -> AskerGuard {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.list
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((id, asker));
        AskerGuard {
            askers: self.clone(),
            id,
        }
    }

    fn first(&self) -> Option<Arc<dyn AskUser>> {
        let list = self.list.lock().unwrap_or_else(PoisonError::into_inner);
        list.first().map(|(_, a)| a.clone())
    }

    pub fn busy(&self) -> bool {
        self.busy.load(Ordering::Relaxed) > 0
    }
}

/// Removes its asker when the call ends.
pub struct AskerGuard {
    askers: Arc<Askers>,
    id: u64,
}

impl Drop for AskerGuard {
    fn drop(&mut self) {
        self.askers
            .list
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(id, _)| *id != self.id);
    }
}

struct Busy<'a>(&'a AtomicUsize);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[derive(Clone)]
pub struct Handler {
    pub server: String,
    pub askers: Arc<Askers>,
    /// Notified on `tools/list_changed`: the supervisor refreshes the tools.
    pub changed: Arc<Notify>,
}

impl Handler {
    fn decline() -> ElicitResult {
        ElicitResult::new(rmcp::model::ElicitationAction::Decline)
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap_or_default();
        let info: Implementation = serde_json::from_value(json!({
            "name": "zeroclaw",
            "version": env!("CARGO_PKG_VERSION"),
        }))
        .unwrap_or_else(|_| Implementation::from_build_env());
        let mut config = InitializeRequestParams::new(capabilities, info);
        // The last version with `initialize`, whose servers ask with `elicitation/create`
        // and announce list changes unprompted; servers of earlier versions negotiate down.
        config.protocol_version = ProtocolVersion::V_2025_11_25;
        config
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let params = serde_json::to_value(&request).unwrap_or(Value::Null);
        if params.get("mode").and_then(Value::as_str) == Some("url") {
            tracing::info!(server = %self.server, "declined a URL elicitation: clients are not asked to open links");
            return Ok(Self::decline());
        }
        let Some(asker) = self.askers.first() else {
            tracing::info!(server = %self.server, "declined an elicitation: no client that can answer is attached to a call");
            return Ok(Self::decline());
        };
        let message = params.get("message").and_then(Value::as_str).unwrap_or("");
        let schema = params
            .get("requestedSchema")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        self.askers.busy.fetch_add(1, Ordering::Relaxed);
        let _busy = Busy(&self.askers.busy);
        let answer = match asker.elicit(message, &schema).await {
            Ok(answer) => answer,
            Err(Answer::Declined) => json!({"action": "decline"}),
            Err(why) => {
                tracing::info!(server = %self.server, ?why, "an elicitation got no answer; cancelled");
                json!({"action": "cancel"})
            }
        };
        Ok(serde_json::from_value(answer).unwrap_or_else(|_| Self::decline()))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }
}

/// A transport that counts `tools/list_changed` as it arrives and says when it closes.
pub struct Watched<T> {
    inner: T,
    /// `tools/list_changed` notifications seen.
    pub list_changed: Arc<AtomicU64>,
    /// Cancelled when the server's side closed.
    pub closed: CancellationToken,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Watched<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        match &message {
            None => self.closed.cancel(),
            Some(JsonRpcMessage::Notification(n))
                if matches!(
                    n.notification,
                    ServerNotification::ToolListChangedNotification(_)
                ) =>
            {
                self.list_changed.fetch_add(1, Ordering::SeqCst);
            }
            Some(_) => {}
        }
        message
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

impl<T> Watched<T> {
    pub fn new(inner: T, list_changed: Arc<AtomicU64>, closed: CancellationToken) -> Self {
        Self {
            inner,
            list_changed,
            closed,
        }
    }
}

//! A client for the zeroclaw daemon: connect to the resolved endpoint, `initialize`, call.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let paths = zeroclaw_ipc::resolve(None)?;
//! let client = zeroclaw_client::Client::connect(&paths.endpoint, Default::default()).await?;
//! let status = client.call("status", serde_json::json!({})).await?;
//! println!("{status}");
//! # Ok(()) }
//! ```

use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use zeroclaw_ipc::{ConnectError, Endpoint, LocalTransport};
use zeroclaw_rpc::{
    BoxFuture, CallError, HandlerResult, PROTOCOL_VERSION, Peer, PeerConfig, PeerHandle, RpcError,
    Service,
};

/// How long a plain [`Client::call`] waits for its answer.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Sent as `clientInfo.name`.
    pub name: String,
    pub max_frame_bytes: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            name: "zeroclaw-client".into(),
            max_frame_bytes: zeroclaw_rpc::DEFAULT_MAX_FRAME_BYTES,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error("the daemon at {endpoint} refused the handshake: {source}")]
    Handshake {
        endpoint: Endpoint,
        source: CallError,
    },
}

/// A notification from the daemon.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    pub method: String,
    pub params: Option<Value>,
}

/// Capacity of the notification queue. Overflow rule: further notifications are dropped
/// (and logged) until the caller catches up, so a caller that never reads them cannot
/// stall the connection.
const NOTIFICATION_QUEUE: usize = 4096;

struct ClientService {
    notifications: mpsc::Sender<Notification>,
}

impl Service for ClientService {
    fn request(&self, method: String, _params: Option<Value>) -> BoxFuture<HandlerResult> {
        Box::pin(std::future::ready(Err(RpcError::method_not_found(&method))))
    }

    fn notification(&self, method: String, params: Option<Value>) {
        if self
            .notifications
            .try_send(Notification { method, params })
            .is_err()
        {
            tracing::warn!("notification queue full; a notification was dropped");
        }
    }
}

/// One initialized connection to the daemon.
pub struct Client {
    handle: PeerHandle,
    server: Value,
    notifications: mpsc::Receiver<Notification>,
}

impl Client {
    /// Connects and completes `initialize`.
    pub async fn connect(endpoint: &Endpoint, options: ClientOptions) -> Result<Self, ClientError> {
        let stream = zeroclaw_ipc::connect(endpoint).await?;
        let transport = LocalTransport::new(stream, endpoint.to_string(), options.max_frame_bytes);
        let (peer, handle) = Peer::new(transport, PeerConfig::default());
        let (tx, notifications) = mpsc::channel(NOTIFICATION_QUEUE);
        tokio::spawn(peer.run(Arc::new(ClientService { notifications: tx })));
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "clientInfo": { "name": options.name, "version": env!("CARGO_PKG_VERSION") },
        });
        let server = handle
            .request("initialize", params, DEFAULT_CALL_TIMEOUT)
            .await
            .map_err(|source| ClientError::Handshake {
                endpoint: endpoint.clone(),
                source,
            })?;
        Ok(Self {
            handle,
            server,
            notifications,
        })
    }

    /// The daemon's `initialize` result.
    pub fn server_info(&self) -> &Value {
        &self.server
    }

    pub async fn call(&self, method: &str, params: Value) -> Result<Value, CallError> {
        self.handle
            .request(method, params, DEFAULT_CALL_TIMEOUT)
            .await
    }

    pub async fn call_with_timeout(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        self.handle.request(method, params, timeout).await
    }

    /// The next notification, or `None` once the connection has closed.
    pub async fn next_notification(&mut self) -> Option<Notification> {
        tokio::select! {
            biased;
            n = self.notifications.recv() => n,
            () = self.handle.closed() => self.notifications.try_recv().ok(),
        }
    }

    /// Resolves when the daemon has closed the connection.
    pub async fn closed(&self) {
        self.handle.closed().await;
    }

    pub fn close(&self) {
        self.handle.close();
    }
}

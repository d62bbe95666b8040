//! The one place a REST or SSE request reaches the daemon: an in-process connection
//! ([`Backend::connect`]) acting for the caller, initialized through the client library.
//! Handlers take a [`Daemon`] as an extractor, which authenticates the request first
//! ([`Authed`]: the credential and the CSRF rule); the token's scope is then enforced by
//! the daemon's method table on every call, as on the socket.
//!
//! [`Backend::connect`]: crate::Backend::connect

use crate::auth::{App, Authed, Shared};
use crate::errors::ApiError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use tokio::sync::mpsc;
use zeroclaw_client::{Client, ClientError, ClientOptions, RawUpdate};

/// `session/update` events a stream's connection holds for its HTTP client. Overflow rule
/// (the client library's `raw_updates`): while it is full the connection is not read, so a
/// slow HTTP client holds back the daemon's writes to it and the daemon applies the
/// socket's rule for a client that does not read (protocol.md §6); nothing is dropped.
const STREAM_QUEUE: usize = 64;

/// An initialized in-process connection acting for the request's caller; closed when
/// dropped (its peer task would otherwise keep it, and its place among the daemon's
/// connections, open).
pub struct Daemon {
    client: Client,
    pub authed: Authed,
}

impl std::ops::Deref for Daemon {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.client.close();
    }
}

impl FromRequestParts<Shared> for Daemon {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Shared) -> Result<Self, ApiError> {
        let authed = Authed::from_request_parts(parts, app).await?;
        Self::connect(app, authed).await
    }
}

impl Daemon {
    /// For a handler that chooses its kind of connection after reading the request.
    pub async fn connect(app: &App, authed: Authed) -> Result<Self, ApiError> {
        Self::open(app, authed, None).await
    }

    /// A connection whose `session/update` events arrive as the daemon wrote them, read
    /// only as fast as the receiver is drained (for server-sent events).
    pub async fn streaming(
        app: &App,
        authed: Authed,
    ) -> Result<(Self, mpsc::Receiver<RawUpdate>), ApiError> {
        let (updates, received) = mpsc::channel(STREAM_QUEUE);
        Ok((Self::open(app, authed, Some(updates)).await?, received))
    }

    async fn open(
        app: &App,
        authed: Authed,
        raw_updates: Option<mpsc::Sender<RawUpdate>>,
    ) -> Result<Self, ApiError> {
        let label = format!("http:{},token={}", authed.remote, authed.principal.name);
        let stream = app
            .backend
            .connect(&authed.principal, label)
            .ok_or_else(|| ApiError::unavailable("the daemon is stopping"))?;
        let options = ClientOptions {
            name: "zeroclaw-gateway".into(),
            max_frame_bytes: app.max_frame_bytes,
            raw_updates,
            ..ClientOptions::default()
        };
        match Client::from_stream(stream, "daemon", options).await {
            Ok(client) => Ok(Self { client, authed }),
            // Refused by the gate itself (the token expired a moment ago): its own error.
            Err(ClientError::Handshake { source, .. }) => Err((*source).into()),
            Err(e) => Err(ApiError::unavailable(format!(
                "the daemon refused the connection: {e}"
            ))),
        }
    }

    /// Attaches to `session_id` (`session/load` without replay): REST acts in a session
    /// with the token's authority.
    pub async fn attach(&self, session_id: &str) -> Result<(), ApiError> {
        self.session_load(session_id, false).await?;
        Ok(())
    }
}

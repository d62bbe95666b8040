//! One client connection's state: who it is, whether it said `initialize`, and which
//! sessions it is attached to.

use crate::link::PeerLink;
use crate::state::DaemonState;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio_util::sync::CancellationToken;
use zeroclaw_agent::link::Link;
use zeroclaw_agent::link::Notification;
use zeroclaw_agent::session::{ConnId, JoinError, Session};
use zeroclaw_gateway::Principal;
use zeroclaw_rpc::PeerHandle;

/// Whose authority a connection acts with.
#[derive(Debug, Clone)]
pub enum Authority {
    /// The local socket or pipe: the operating system vouched for the user; everything.
    Local,
    /// The gateway: a token, with its scope, until it is revoked or expires.
    Gateway(Principal),
}

impl Authority {
    /// Resolves when the connection must end because its token did (never for `Local`).
    pub async fn over(&self) {
        match self {
            Authority::Local => std::future::pending().await,
            Authority::Gateway(principal) => principal.over().await,
        }
    }
}

/// What `initialize` told us about the client.
#[derive(Debug, Clone, Default)]
pub struct ClientHello {
    pub name: Option<String>,
    pub version: Option<String>,
    /// The client declared `capabilities.elicitation`: it answers `elicitation/create`.
    pub elicitation: bool,
    /// The `fs/*` requests the client declared it answers (`capabilities.fs`).
    pub fs: zeroclaw_protocol::FsCapabilities,
}

#[derive(Debug)]
pub struct Connection {
    pub id: ConnId,
    pub daemon: Arc<DaemonState>,
    pub peer: PeerHandle,
    /// The same peer, as the agent's sessions and turns hold it.
    pub link: Arc<dyn Link>,
    pub authority: Authority,
    /// Sessions this connection is attached to, to detach from when it closes.
    attached: Mutex<HashSet<String>>,
    /// Set once, by the first successful `initialize`.
    pub hello: OnceLock<ClientHello>,
    /// Whether this connection was counted as a client (and so must be uncounted once).
    counted: AtomicBool,
    /// Cancelled by the first successful `initialize`, before it is answered: the daemon's
    /// handshake timeout and connection slots watch it.
    handshake_done: CancellationToken,
}

impl Connection {
    pub fn new(
        daemon: Arc<DaemonState>,
        peer: PeerHandle,
        authority: Authority,
        handshake_done: CancellationToken,
    ) -> Arc<Self> {
        Arc::new(Self {
            id: daemon.next_connection_id(),
            daemon,
            link: Arc::new(PeerLink(peer.clone())),
            peer,
            authority,
            attached: Mutex::new(HashSet::new()),
            hello: OnceLock::new(),
            counted: AtomicBool::new(false),
            handshake_done,
        })
    }

    pub fn is_initialized(&self) -> bool {
        self.hello.get().is_some()
    }

    /// Records a successful handshake; counts the client the first time only.
    pub fn mark_initialized(&self, hello: ClientHello) {
        tracing::debug!(
            peer = %self.peer.label(),
            client = hello.name.as_deref().unwrap_or("?"),
            version = hello.version.as_deref().unwrap_or("?"),
            elicitation = hello.elicitation,
            "initialized"
        );
        let _ = self.hello.set(hello);
        if !self.counted.swap(true, Ordering::AcqRel) {
            self.daemon.clients.joined();
        }
        self.handshake_done.cancel();
    }

    /// Attaches this connection to a session: it receives the session's events.
    pub fn attach(&self, session: &Session) {
        self.daemon
            .agent
            .sessions
            .attach(session, self.id, &self.link);
        self.remember(session);
    }

    /// Attaches this connection the way `session/load` does: with `replay`, `send` is
    /// given the history a page at a time, and its live events are held until that has
    /// been sent (see [`Sessions::join`](zeroclaw_agent::session::Sessions::join)).
    pub async fn join<Send, Sent>(
        &self,
        session: &Session,
        replay: bool,
        send: Send,
    ) -> Result<(), JoinError>
    where
        Send: FnMut(Vec<Notification>) -> Sent,
        Sent: Future<Output = Result<(), zeroclaw_rpc::NotifyError>>,
    {
        self.daemon
            .agent
            .sessions
            .join(session, self.id, &self.link, replay, send)
            .await?;
        self.remember(session);
        Ok(())
    }

    fn remember(&self, session: &Session) {
        self.attached
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(session.id.clone());
    }

    /// Detaches this connection from a session (`session/close`); `false` if it was not
    /// attached.
    pub fn detach(&self, session_id: &str) -> bool {
        let was = self
            .attached
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(session_id);
        if was {
            self.daemon.agent.sessions.detach(session_id, self.id);
        }
        was
    }

    /// Called once when the connection has ended.
    pub fn finished(&self) {
        let attached =
            std::mem::take(&mut *self.attached.lock().unwrap_or_else(|e| e.into_inner()));
        for session_id in attached {
            self.daemon.agent.sessions.detach(&session_id, self.id);
        }
        if self.counted.swap(false, Ordering::AcqRel) {
            self.daemon.clients.left();
        }
    }
}

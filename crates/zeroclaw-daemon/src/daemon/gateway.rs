//! The gateway door: `/rpc` WebSockets arrive authenticated from `zeroclaw-gateway` and
//! are served like the socket's connections (the same `serve`, `Doors`, gate and table),
//! acting with their token's scope. The gateway's REST requests and streams call the same
//! method table directly, each with a record admitted through the same doors
//! (`direct`, [`DaemonBackend::caller`]).

use super::serve::{Doors, Incoming, Listener, serve};
use crate::connection::Authority;
use crate::state::DaemonState;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use zeroclaw_gateway::{
    Accepted, Backend, Caller, Check, DashboardLogin, Delivery, HookAnswer, Principal, WsConnection,
};

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
use zeroclaw_rpc::{BoxFuture, Outbound, PeerHandle};

/// A gateway that serves: its own HTTP accept loop, and the door that serves its `/rpc`
/// connections. Both end once the daemon's `shutdown` is cancelled.
pub struct Serving {
    door: JoinHandle<()>,
    accept_loop: JoinHandle<()>,
}

impl Serving {
    /// Waits for both loops to end.
    pub async fn closed(self) {
        let _ = self.door.await;
        let _ = self.accept_loop.await;
    }
}

/// Starts the gateway and its door when `wanted`, and sets `status.gateway` (up with its
/// URL, down with why, or off). A failure to start (the port is taken, say) is logged and
/// shown by `status`, and the daemon goes on serving its socket. The HTTP accept loop
/// runs from here, but what it admits waits for the doors to open (`Doors::open`), which
/// comes after this: no connection is served before the status is set.
pub async fn open(
    state: &Arc<DaemonState>,
    doors: &Doors,
    wanted: bool,
    listen_from: zeroclaw_gateway::ListenFrom,
    inherited: Option<std::net::TcpListener>,
) -> Option<Serving> {
    if !wanted {
        let _ = state.gateway.set(None);
        return None;
    }
    let backend = Arc::new(DaemonBackend {
        state: state.clone(),
        doors: doors.clone(),
        store_file: StoreFile::now(&state.paths),
    });
    let started = zeroclaw_gateway::start(
        &state.config.gateway,
        state.config.daemon.max_frame_bytes,
        backend,
        state.shutdown.clone(),
        state.close_connections.clone(),
        listen_from,
        inherited,
    )
    .await;
    match started {
        Ok(started) => {
            tracing::info!(url = %started.url, tls = started.tls, "gateway listening");
            let _ = state
                .gateway
                .set(Some(zeroclaw_protocol::GatewayStatus::Up {
                    url: started.url,
                    tls: started.tls,
                }));
            let door = tokio::spawn(serve(
                state.clone(),
                doors.clone(),
                GatewayDoor::new(started.connections),
            ));
            Some(Serving {
                door,
                accept_loop: started.task,
            })
        }
        Err(error) => {
            tracing::warn!(error = %error, "the gateway is not serving; the socket is");
            let _ = state
                .gateway
                .set(Some(zeroclaw_protocol::GatewayStatus::Down { error }));
            None
        }
    }
}

struct GatewayDoor {
    connections: mpsc::Receiver<Accepted>,
}

impl GatewayDoor {
    fn new(connections: mpsc::Receiver<Accepted>) -> Self {
        Self { connections }
    }
}

impl Listener for GatewayDoor {
    type Transport = WsConnection;

    async fn accept(&mut self) -> std::io::Result<Incoming<WsConnection>> {
        match self.connections.recv().await {
            Some(accepted) => Ok(Incoming {
                transport: accepted.transport,
                label: accepted.label,
                trusted: true,
                authority: Authority::Gateway(accepted.principal),
            }),
            // The gateway stopped accepting: nothing more will come.
            None => std::future::pending().await,
        }
    }

    fn close(mut self) {
        self.connections.close();
    }
}

/// What the gateway asks of the daemon.
struct DaemonBackend {
    state: Arc<DaemonState>,
    doors: Doors,
    store_file: StoreFile,
}

/// How long `/readyz` waits for the store to answer a read.
const STORE_PROBE: std::time::Duration = std::time::Duration::from_secs(2);

/// The database file as it was when the daemon opened it, so `/readyz` can tell when it
/// was deleted or replaced under the daemon (whose writes would then go nowhere anyone
/// reads).
struct StoreFile {
    path: std::path::PathBuf,
    #[cfg(unix)]
    identity: Option<(u64, u64)>,
}

impl StoreFile {
    fn now(paths: &zeroclaw_ipc::Paths) -> Self {
        let path = paths.data_dir.join(zeroclaw_agent::store::FILE_NAME);
        Self {
            #[cfg(unix)]
            identity: identity(&path),
            path,
        }
    }

    /// Whether the file at the path is still the one the daemon opened.
    fn intact(&self) -> bool {
        #[cfg(unix)]
        return self.identity.is_some() && identity(&self.path) == self.identity;
        #[cfg(not(unix))]
        self.path.exists()
    }

    /// The file's and its WAL's size, in bytes.
    fn bytes(&self) -> u64 {
        let size = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        size(&self.path) + size(std::path::Path::new(&wal))
    }
}

#[cfg(unix)]
fn identity(path: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

impl Backend for DaemonBackend {
    fn authenticate(&self, secret: &str) -> Option<Principal> {
        self.state.tokens.authenticate(secret)
    }

    fn authenticate_dashboard(&self, cookie: &str, proof: &str) -> Option<Principal> {
        self.state.tokens.authenticate_dashboard(cookie, proof)
    }

    fn caller(&self, principal: &Principal, label: String) -> Result<Box<dyn Caller>, String> {
        let peer = PeerHandle::discarding(label, self.state.config.daemon.max_frame_bytes);
        let authority = Authority::Gateway(principal.clone());
        Ok(Box::new(self.doors.direct(
            &self.state,
            authority,
            peer,
            false,
        )?))
    }

    fn streaming(
        &self,
        principal: &Principal,
        label: String,
    ) -> Result<(Box<dyn Caller>, Outbound), String> {
        let config = &self.state.config.daemon;
        let (peer, outbound) =
            PeerHandle::channel(label, config.max_frame_bytes, config.outbound_queue);
        let authority = Authority::Gateway(principal.clone());
        let direct = self.doors.direct(&self.state, authority, peer, true)?;
        Ok((Box::new(direct), outbound))
    }

    fn exchange_code(
        &self,
        code: String,
        replacing: Option<String>,
    ) -> BoxFuture<Option<DashboardLogin>> {
        let state = self.state.clone();
        Box::pin(async move { state.tokens.exchange(&code, replacing.as_deref()).await })
    }

    fn hook_body_limit(&self, name: &str) -> Option<usize> {
        self.state
            .config
            .webhooks
            .iter()
            .find(|h| h.name == name)
            .map(|h| h.max_body_bytes)
    }

    fn deliver(&self, delivery: Delivery) -> BoxFuture<HookAnswer> {
        let state = self.state.clone();
        Box::pin(async move {
            let answer = crate::unattended::deliver(&state, delivery).await;
            state.metrics.webhook_delivery(match answer.status {
                200..=299 => "accepted",
                429 | 500..=599 => "unavailable",
                _ => "refused",
            });
            answer
        })
    }

    fn metrics(&self) -> Result<String, String> {
        let agent = &self.state.agent;
        let now = crate::service::metrics::Snapshot {
            sessions_loaded: count(agent.sessions.loaded_count()),
            turns_running: count(self.state.clients.turns()),
            approvals_waiting: count(agent.sessions.approvals_waiting()),
            clients: count(self.state.clients.current()),
            store_bytes: i64::try_from(self.store_file.bytes()).unwrap_or(i64::MAX),
        };
        self.state
            .metrics
            .encode(now, self.state.started.elapsed().as_secs_f64())
            .map_err(|e| e.to_string())
    }

    fn readiness(&self) -> BoxFuture<Vec<Check>> {
        let state = self.state.clone();
        let intact = self.store_file.intact();
        let doors = if state.shutdown.is_cancelled() {
            "stopping"
        } else if self.doors.is_open() {
            "ok"
        } else {
            "starting"
        };
        Box::pin(async move {
            // A read through the store's own threads: it answers, and in time.
            let answered =
                tokio::time::timeout(STORE_PROBE, state.agent.sessions.store.session("readyz"))
                    .await;
            let store = match answered {
                Ok(Ok(_)) if intact => "ok",
                Ok(Ok(_)) | Ok(Err(_)) => "unavailable",
                Err(_) => "not_answering",
            };
            let provider = match state.agent.provider.last_call() {
                Some(call) if !call.ok => "failing",
                _ => "ok",
            };
            vec![
                Check {
                    name: "store",
                    state: store,
                },
                Check {
                    name: "doors",
                    state: doors,
                },
                Check {
                    name: "provider",
                    state: provider,
                },
            ]
        })
    }
}

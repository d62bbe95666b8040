//! Test support: a whole daemon in memory — the real gate, method table, sessions and
//! turns over an in-memory store, with no socket — for fuzz targets and tests that drive
//! the dispatch directly. Everything else of the daemon is private.

use crate::config::Config;
use crate::daemon::{Doors, Incoming};
use crate::state::DaemonState;
use std::path::Path;
use std::sync::Arc;
use tokio::io::DuplexStream;
use zeroclaw_agent::provider::Provider;
use zeroclaw_agent::session::Sessions;
use zeroclaw_agent::store::Store;
use zeroclaw_ipc::{Endpoint, Paths};
use zeroclaw_rpc::StreamTransport;

/// Bytes buffered each way between a test and the daemon.
const PIPE_BYTES: usize = 64 * 1024;

pub struct InMemoryDaemon {
    state: Arc<DaemonState>,
    doors: Doors,
}

impl InMemoryDaemon {
    /// A daemon with `config` and an in-memory store; `dir` is its (unused) data dir.
    /// Must be called inside a tokio runtime.
    pub fn start(config: Config, dir: &Path) -> Result<Self, String> {
        let paths = Paths {
            config_dir: dir.to_path_buf(),
            data_dir: dir.join("data"),
            endpoint: Endpoint::new(dir.join("data/daemon.sock")),
        };
        let opened = Store::open_in_memory().map_err(|e| e.to_string())?;
        let provider = Provider::configured(&config.agent)?;
        let frame_cap = config.daemon.max_frame_bytes;
        let tokens = crate::auth::Tokens::new(
            opened.store.clone(),
            Vec::new(),
            crate::auth::SessionLimits::default(),
        );
        let sessions = Sessions::new(opened.store, opened.sessions, frame_cap);
        let state = Arc::new(DaemonState::new(
            paths,
            config,
            false,
            sessions,
            provider,
            tokens,
            // Its paths are invented (the store is in memory, nothing is on disk to hide)
            // and its tests are about the dispatch: commands run unconfined, as with a
            // daemon on a machine without a sandbox (`require` still refuses them).
            zeroclaw_agent::sandbox::Support::unavailable(
                "the in-memory test daemon has no sandbox",
            ),
        ));
        let doors = Doors::new(&state);
        doors.open();
        Ok(Self { state, doors })
    }

    /// A new connection, served as a socket's would be: write frames to the stream and
    /// read the daemon's.
    pub fn connect(&self) -> DuplexStream {
        let (client, server) = tokio::io::duplex(PIPE_BYTES);
        let max_frame_bytes = self.state.config.daemon.max_frame_bytes;
        let incoming = Incoming {
            transport: StreamTransport::new(server, "memory", max_frame_bytes),
            label: "memory".into(),
            trusted: true,
            authority: crate::connection::Authority::Local,
        };
        self.doors.admit(&self.state, incoming);
        client
    }

    /// Whether `shutdown` was called.
    pub fn is_shut_down(&self) -> bool {
        self.state.shutdown.is_cancelled()
    }

    /// The methods a client may call, as `initialize` lists them.
    pub fn methods() -> Vec<&'static str> {
        crate::methods::names()
    }
}

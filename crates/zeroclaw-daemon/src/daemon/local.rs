//! The local door: the Unix socket or Windows named pipe of `zeroclaw-ipc`.

use super::serve::{Incoming, Listener};
use crate::config::DaemonConfig;
use crate::connection::Authority;
use std::time::Duration;
use zeroclaw_ipc::{BindError, DataDirLock, LocalListener, LocalTransport, Paths};

/// The bound socket (or pipe). However it ends — its accept loop stopping at shutdown, or
/// dropped unserved when a later start-up step fails — it is closed and its file removed,
/// so no socket is left behind for clients to find.
pub struct LocalDoor {
    /// `None` once closed.
    listener: Option<LocalListener>,
    max_frame_bytes: usize,
}

impl LocalDoor {
    /// Binds the endpoint of `paths`, which takes the data dir's lock (held by the caller).
    /// Clients that connect before the door is served wait in the listen backlog.
    pub fn bind(
        paths: &Paths,
        lock: &DataDirLock,
        config: &DaemonConfig,
    ) -> Result<Self, BindError> {
        let mut listener = LocalListener::bind(paths, lock)?;
        if config.socket_check_secs > 0 {
            listener.watch_socket(Duration::from_secs(config.socket_check_secs));
        }
        Ok(Self {
            listener: Some(listener),
            max_frame_bytes: config.max_frame_bytes,
        })
    }
}

impl LocalDoor {
    /// Serves `socket`, the local socket the service manager passed (socket activation):
    /// the rules of a bound one hold (`LocalListener::inherit`), and its file is never
    /// removed.
    #[cfg(unix)]
    pub fn inherit(
        socket: std::os::fd::OwnedFd,
        paths: &Paths,
        lock: &DataDirLock,
        config: &DaemonConfig,
    ) -> Result<Self, BindError> {
        Ok(Self {
            listener: Some(LocalListener::inherit(socket, paths, lock)?),
            max_frame_bytes: config.max_frame_bytes,
        })
    }
}

impl Drop for LocalDoor {
    fn drop(&mut self) {
        if let Some(listener) = self.listener.take() {
            listener.close();
        }
    }
}

impl Listener for LocalDoor {
    type Transport = LocalTransport;

    async fn accept(&mut self) -> std::io::Result<Incoming<LocalTransport>> {
        let Some(listener) = self.listener.as_mut() else {
            // Closed: nothing more comes.
            return std::future::pending().await;
        };
        let accepted = listener.accept().await?;
        let trusted = accepted.peer.is_trusted();
        let label = accepted.peer.label;
        Ok(Incoming {
            transport: LocalTransport::new(accepted.stream, label.clone(), self.max_frame_bytes),
            label,
            trusted,
            authority: Authority::Local,
        })
    }

    fn close(self) {
        // Dropping closes it.
    }
}

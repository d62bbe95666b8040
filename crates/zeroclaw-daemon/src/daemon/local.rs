//! The local door: the Unix socket or Windows named pipe of `zeroclaw-ipc`.

use super::serve::{Incoming, Listener};
use crate::connection::Authority;
use zeroclaw_ipc::{LocalListener, LocalTransport};

pub struct LocalDoor {
    listener: LocalListener,
    max_frame_bytes: usize,
}

impl LocalDoor {
    pub fn new(listener: LocalListener, max_frame_bytes: usize) -> Self {
        Self {
            listener,
            max_frame_bytes,
        }
    }
}

impl Listener for LocalDoor {
    type Transport = LocalTransport;

    async fn accept(&mut self) -> std::io::Result<Incoming<LocalTransport>> {
        let accepted = self.listener.accept().await?;
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
        self.listener.close();
    }
}

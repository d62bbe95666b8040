//! A turn streaming from its provider keeps to the pace of its session's clients (the
//! overflow rule in `mod.rs`).

use super::{ConnId, Session, lock};
use crate::link::Link;
use crate::provider::Pace;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// How long a turn waits for an attached client that is behind on its events.
const EVENT_STALL_GRACE: Duration = Duration::from_secs(5);

/// Whether a connection's event queue is more than three quarters full.
fn behind(peer: &Arc<dyn Link>) -> bool {
    peer.queue_room() <= peer.queue_capacity() / 4
}

impl Pace for Session {
    fn pace(&self) -> Option<Pin<Box<dyn Future<Output = ()> + Send + '_>>> {
        let lagging: Vec<(ConnId, Arc<dyn Link>)> = {
            let audience = lock(&self.audience);
            let lagging: Vec<(ConnId, Arc<dyn Link>)> = audience
                .live()
                .filter(|(_, peer)| behind(peer))
                .map(|(conn, peer)| (conn, peer.clone()))
                .collect();
            if lagging.is_empty() {
                return None;
            }
            lagging
        };
        Some(Box::pin(async move {
            let deadline = tokio::time::Instant::now() + EVENT_STALL_GRACE;
            for (conn, peer) in lagging {
                let half = peer.queue_capacity() / 2;
                if !peer.wait_for_room(half.max(1), deadline).await && !peer.is_closed() {
                    lock(&self.audience).remove(conn);
                    self.stalled(conn, &peer);
                }
            }
        }))
    }
}

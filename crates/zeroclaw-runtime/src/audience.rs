//! Who receives one session's events, and what a connection that joins mid-turn must be
//! sent first.
//!
//! One lock guards it, and the turn holds that lock while it stores an event and sends it
//! (and while it streams a chunk and adds it to the text in progress). A `session/load`
//! reads the history and joins under the same lock, so every event reaches it exactly once:
//! in what it reads, or live. While the joining connection is being sent what it read, its
//! live events wait here, in order, and go out after it. Overflow rule: a joining
//! connection holding more than its queue's capacity is detached and closed, as a live one
//! whose queue is full is (see `session.rs`).

use std::collections::VecDeque;
use zeroclaw_rpc::{Notification, NotifyError, PeerHandle};

/// Identifies one connection for attachment bookkeeping.
pub type ConnId = u64;

#[derive(Default)]
pub struct Audience {
    live: Vec<(ConnId, PeerHandle)>,
    joining: Vec<Joining>,
    /// The current model call's streamed text, not stored yet (it is stored whole when the
    /// call ends): a connection joining mid-stream is sent it as one chunk of each kind.
    pub streaming: Streaming,
}

#[derive(Default)]
pub struct Streaming {
    pub thought: String,
    pub text: String,
}

struct Joining {
    conn: ConnId,
    peer: PeerHandle,
    held: VecDeque<Notification>,
}

/// A connection that stopped taking events, to be closed by the caller (outside the lock).
pub type Stalled = (ConnId, PeerHandle);

impl Audience {
    pub fn contains(&self, conn: ConnId) -> bool {
        self.live.iter().any(|(id, _)| *id == conn) || self.joining.iter().any(|j| j.conn == conn)
    }

    pub fn is_empty(&self) -> bool {
        self.live.is_empty() && self.joining.is_empty()
    }

    pub fn live(&self) -> &[(ConnId, PeerHandle)] {
        &self.live
    }

    pub fn add_live(&mut self, conn: ConnId, peer: &PeerHandle) {
        if !self.contains(conn) {
            self.live.push((conn, peer.clone()));
        }
    }

    /// Starts a join: from now on the connection's events are held until [`Self::go_live`]
    /// finds none left.
    pub fn add_joining(&mut self, conn: ConnId, peer: &PeerHandle) {
        if self.joining.iter().any(|j| j.conn == conn) {
            // A second `session/load` while the first is still sending: keep what is held.
            return;
        }
        self.live.retain(|(id, _)| *id != conn);
        self.joining.push(Joining {
            conn,
            peer: peer.clone(),
            held: VecDeque::new(),
        });
    }

    /// The events held for a joining connection, to send before asking again; or `None`
    /// once there are none, and the connection is live from here on.
    pub fn go_live(&mut self, conn: ConnId) -> Option<VecDeque<Notification>> {
        let at = self.joining.iter().position(|j| j.conn == conn)?;
        if !self.joining[at].held.is_empty() {
            return Some(std::mem::take(&mut self.joining[at].held));
        }
        let joined = self.joining.swap_remove(at);
        self.live.push((joined.conn, joined.peer));
        None
    }

    pub fn remove(&mut self, conn: ConnId) {
        self.live.retain(|(id, _)| *id != conn);
        self.joining.retain(|j| j.conn != conn);
    }

    /// Queues `frame` for every live connection and holds it for every joining one. Those
    /// that cannot take it are removed and returned.
    pub fn send(&mut self, frame: &Notification) -> Vec<Stalled> {
        let mut stalled = Vec::new();
        self.live.retain(|(conn, peer)| match peer.try_send(frame) {
            Ok(()) => true,
            Err(NotifyError::Full) => {
                stalled.push((*conn, peer.clone()));
                false
            }
            Err(NotifyError::Closed) => false,
        });
        self.joining.retain_mut(|j| {
            if j.peer.is_closed() {
                return false;
            }
            if j.held.len() >= j.peer.queue_capacity() {
                stalled.push((j.conn, j.peer.clone()));
                return false;
            }
            j.held.push_back(frame.clone());
            true
        });
        stalled
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;
    use tokio::io::DuplexStream;
    use zeroclaw_rpc::{Peer, PeerConfig, StreamTransport};

    /// A connection's handle; the peer is kept (not run) so its queue stays open.
    fn connection() -> (Peer<StreamTransport<DuplexStream>>, PeerHandle) {
        let (ours, _theirs) = tokio::io::duplex(64);
        Peer::new(
            StreamTransport::new(ours, "test", 1024),
            PeerConfig::default(),
        )
    }

    fn frame(n: u32) -> Notification {
        Notification::new("session/update", &json!({ "n": n })).unwrap()
    }

    #[test]
    fn a_joining_connection_gets_what_was_held_then_goes_live() {
        let (_peer, handle) = connection();
        let mut audience = Audience::default();
        audience.add_live(1, &handle);
        audience.add_joining(1, &handle);
        assert!(audience.send(&frame(1)).is_empty());
        assert_eq!(
            handle.queue_room(),
            handle.queue_capacity(),
            "held, not queued"
        );
        // A second load while the first is sending keeps what is held.
        audience.add_joining(1, &handle);
        let held = audience.go_live(1).unwrap();
        assert_eq!(held.len(), 1);
        assert_eq!(held[0].as_bytes(), frame(1).as_bytes());
        assert!(audience.go_live(1).is_none());
        assert!(audience.contains(1));
        assert!(audience.send(&frame(2)).is_empty());
        assert_eq!(
            handle.queue_room(),
            handle.queue_capacity() - 1,
            "live: queued"
        );
    }

    #[test]
    fn a_joining_connection_holding_a_full_queue_is_reported_stalled() {
        let (_peer, handle) = connection();
        let mut audience = Audience::default();
        audience.add_joining(7, &handle);
        for n in 0..handle.queue_capacity() {
            assert!(audience.send(&frame(n as u32)).is_empty());
        }
        let stalled = audience.send(&frame(0));
        assert_eq!(stalled.len(), 1);
        assert_eq!(stalled[0].0, 7);
        assert!(!audience.contains(7));
    }
}

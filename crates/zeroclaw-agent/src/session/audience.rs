//! Who receives one session's events, and what a connection that joins mid-turn must be
//! sent first.
//!
//! The invariant: a connection that joins with `session/load` and `replay` gets every
//! event of the session exactly once, in its replay or live. No lock is held across the
//! disk, so it is kept by tagging each frame with what it is in the store ([`Tag`]):
//!
//! 1. The turn stores an event first (without any lock), then, under this structure's lock,
//!    sends it tagged with its message row id. Row ids grow in commit order (one writer,
//!    see `store/mod.rs`).
//! 2. A joining connection registers under the lock ([`Audience::add_joining`]); from then
//!    on its frames are held, each with its tag. Then it reads the history without the lock,
//!    a page at a time (sending each before reading the next), so memory does not grow with
//!    the history. An event sent before it registered was stored before, so the history has it.
//! 3. Under the lock again ([`Audience::replayed`]) it drops the held frames its history
//!    already has: a stored event whose row id is at most the last row it read (a row the
//!    read did not see was committed after it, so its id is higher), and a chunk of streamed
//!    text whose whole message (same turn, step and kind) is in the history. Stored events
//!    sent later with a row id at or below that last row are dropped too, also once it is
//!    live: the turn may send an event it stored before the read only after the read.
//!
//! Streamed text is not stored until its model call ends, so the text streamed so far is
//! kept here ([`Streaming`]): a joining connection is sent it as one chunk of each kind,
//! tagged like the chunks, before what was held. A chunk is always sent before its text is
//! stored, so one sent after the read can never be in the history. Frames that are never
//! stored (`approval_request`, `turn_complete`) are always sent; the unanswered approval
//! requests are taken in the same step that registers the joining connection.
//!
//! While the joining connection is being sent its history, its live events wait here, in
//! order, and go out after it. Overflow rule: a joining connection holding more than its
//! queue's capacity is detached and closed, as a live one whose queue is full is (see
//! `session/mod.rs`).

use crate::link::{Link, Notification, NotifyError};
#[cfg(test)]
use crate::store::{MessageKind, MessageRow};
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

/// Identifies one connection for attachment bookkeeping.
pub type ConnId = u64;

/// What a frame is in the store, to know whether a replay already had it.
#[derive(Debug, Clone, PartialEq)]
pub enum Tag {
    /// A stored event: its message row id.
    Row(i64),
    /// A chunk of a model call's streamed text, stored whole, as one message of its kind,
    /// when the call ends.
    Text {
        turn_id: String,
        step: i64,
        thought: bool,
    },
    /// Never stored, never replayed.
    Live,
}

/// One model call's streamed text, as a [`Tag::Text`] names it: (turn, step, thought).
pub type TextKey = (String, i64, bool);

/// What a connection's replay held: its last row, and those of its streamed messages whose
/// chunks the connection holds. Built page by page as the replay is read, so a history of
/// any length costs only its pages.
#[derive(Default)]
pub struct Replayed {
    last_row: i64,
    texts: HashSet<TextKey>,
}

impl Replayed {
    /// The whole history at once (`rows` oldest first), every streamed message kept.
    #[cfg(test)]
    pub fn of(rows: &[MessageRow]) -> Self {
        let streamed: Vec<TextKey> = rows
            .iter()
            .filter(|r| matches!(r.kind, MessageKind::Assistant | MessageKind::Thought))
            .filter_map(|r| {
                let turn = r.turn_id.clone()?;
                Some((turn, r.step, r.kind == MessageKind::Thought))
            })
            .collect();
        let mut replayed = Self::default();
        replayed.add_page(rows.last().map(|r| r.id), &streamed, |_| true);
        replayed
    }

    /// Adds the next page of the replay (oldest first). Of its streamed messages only
    /// those `held` says the connection holds chunks of are kept: the chunks of a message
    /// are sent before it is stored, so when its row is read they are already held (or
    /// were never held), and asking after each page's read is enough.
    pub fn add_page(
        &mut self,
        last_id: Option<i64>,
        streamed: &[TextKey],
        held: impl Fn(&TextKey) -> bool,
    ) {
        if let Some(id) = last_id {
            self.last_row = self.last_row.max(id);
        }
        self.texts
            .extend(streamed.iter().filter(|key| held(key)).cloned());
    }

    fn has(&self, tag: &Tag) -> bool {
        match tag {
            Tag::Row(id) => *id <= self.last_row,
            Tag::Text {
                turn_id,
                step,
                thought,
            } => self.texts.contains(&(turn_id.clone(), *step, *thought)),
            Tag::Live => false,
        }
    }
}

#[derive(Default)]
pub struct Audience {
    live: Vec<Member>,
    joining: Vec<Joining>,
    /// The current model call's streamed text, not stored yet (it is stored whole when the
    /// call ends): a connection joining mid-stream is sent it as one chunk of each kind.
    pub streaming: Streaming,
}

/// The text a model call has streamed so far.
#[derive(Default)]
pub struct Streaming {
    pub turn_id: String,
    pub step: i64,
    pub thought: String,
    pub text: String,
    /// Frames this call's chunks (absent until its first chunk).
    pub framer: Option<super::chunk_frame::ChunkFramer>,
}

struct Member {
    conn: ConnId,
    peer: Arc<dyn Link>,
    /// Stored events up to this row id reached it in its replay (0 without one).
    replayed: i64,
}

struct Joining {
    conn: ConnId,
    peer: Arc<dyn Link>,
    held: VecDeque<(Tag, Notification)>,
    /// Set once its history has been read.
    replayed: Option<i64>,
}

/// A connection that stopped taking events, to be closed by the caller (outside the lock).
pub type Stalled = (ConnId, Arc<dyn Link>);

impl Audience {
    pub fn contains(&self, conn: ConnId) -> bool {
        self.live.iter().any(|m| m.conn == conn) || self.joining.iter().any(|j| j.conn == conn)
    }

    pub fn is_empty(&self) -> bool {
        self.live.is_empty() && self.joining.is_empty()
    }

    /// The live connections.
    pub fn live(&self) -> impl Iterator<Item = (ConnId, &Arc<dyn Link>)> {
        self.live.iter().map(|m| (m.conn, &m.peer))
    }

    pub fn add_live(&mut self, conn: ConnId, peer: &Arc<dyn Link>) {
        if !self.contains(conn) {
            self.live.push(Member {
                conn,
                peer: peer.clone(),
                replayed: 0,
            });
        }
    }

    /// Starts a join: `first` is held to go out first, and from now on the connection's
    /// events are held after it until [`Self::go_live`] finds none left.
    pub fn add_joining(
        &mut self,
        conn: ConnId,
        peer: &Arc<dyn Link>,
        first: Vec<(Tag, Notification)>,
    ) {
        if let Some(joining) = self.joining.iter_mut().find(|j| j.conn == conn) {
            // A second `session/load` while the first is still sending: keep what is held.
            joining.held.extend(first);
            return;
        }
        self.live.retain(|m| m.conn != conn);
        self.joining.push(Joining {
            conn,
            peer: peer.clone(),
            held: first.into(),
            replayed: None,
        });
    }

    /// The streamed messages a joining connection holds chunks of (few: the running
    /// model call's).
    pub fn held_texts(&self, conn: ConnId) -> HashSet<TextKey> {
        self.joining
            .iter()
            .filter(|j| j.conn == conn)
            .flat_map(|j| j.held.iter())
            .filter_map(|(tag, _)| match tag {
                Tag::Text {
                    turn_id,
                    step,
                    thought,
                } => Some((turn_id.clone(), *step, *thought)),
                _ => None,
            })
            .collect()
    }

    /// Records what a joining connection's replay held: drops the held frames it had, and
    /// from now on the stored events it had. See the module docs.
    pub fn replayed(&mut self, conn: ConnId, replay: &Replayed) {
        if let Some(joining) = self.joining.iter_mut().find(|j| j.conn == conn) {
            joining.held.retain(|(tag, _)| !replay.has(tag));
            joining.replayed = Some(joining.replayed.unwrap_or(0).max(replay.last_row));
        }
    }

    /// The events held for a joining connection, to send before asking again; or `None`
    /// once there are none, and the connection is live from here on.
    pub fn go_live(&mut self, conn: ConnId) -> Option<Vec<Notification>> {
        let at = self.joining.iter().position(|j| j.conn == conn)?;
        if !self.joining[at].held.is_empty() {
            let held = std::mem::take(&mut self.joining[at].held);
            return Some(held.into_iter().map(|(_, frame)| frame).collect());
        }
        let joined = self.joining.swap_remove(at);
        self.live.push(Member {
            conn: joined.conn,
            peer: joined.peer,
            replayed: joined.replayed.unwrap_or(0),
        });
        None
    }

    pub fn remove(&mut self, conn: ConnId) {
        self.live.retain(|m| m.conn != conn);
        self.joining.retain(|j| j.conn != conn);
    }

    /// Queues `frame` for every live connection and holds it for every joining one, except
    /// where a replay already had it. Those that cannot take it are removed and returned.
    pub fn send(&mut self, tag: &Tag, frame: &Notification) -> Vec<Stalled> {
        let row = match tag {
            Tag::Row(id) => Some(*id),
            _ => None,
        };
        let replayed = |up_to: i64| row.is_some_and(|id| id <= up_to);
        let mut stalled = Vec::new();
        self.live.retain(|m| {
            if replayed(m.replayed) {
                return true;
            }
            match m.peer.try_send(frame) {
                Ok(()) => true,
                Err(NotifyError::Full) => {
                    stalled.push((m.conn, m.peer.clone()));
                    false
                }
                Err(NotifyError::Closed) => false,
            }
        });
        self.joining.retain_mut(|j| {
            if j.peer.is_closed() {
                return false;
            }
            if j.replayed.is_some_and(replayed) {
                return true;
            }
            if j.held.len() >= j.peer.queue_capacity() {
                stalled.push((j.conn, j.peer.clone()));
                return false;
            }
            j.held.push_back((tag.clone(), frame.clone()));
            true
        });
        stalled
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::link::testing::Unread;
    use serde_json::json;

    /// A connection that never reads, so its queue only fills (1024 frames, as a peer's
    /// queue by default).
    fn connection() -> Arc<dyn Link> {
        Arc::new(Unread::new(1024))
    }

    fn frame(n: u32) -> Notification {
        Notification::new("session/update", &json!({ "n": n })).unwrap()
    }

    fn text(step: i64, thought: bool) -> Tag {
        Tag::Text {
            turn_id: "t".into(),
            step,
            thought,
        }
    }

    fn bytes(frames: &[Notification]) -> Vec<&[u8]> {
        frames.iter().map(Notification::as_bytes).collect()
    }

    #[test]
    fn a_joining_connection_gets_what_was_held_then_goes_live() {
        let handle = connection();
        let mut audience = Audience::default();
        audience.add_live(1, &handle);
        audience.add_joining(1, &handle, Vec::new());
        assert!(audience.send(&Tag::Live, &frame(1)).is_empty());
        assert_eq!(
            handle.queue_room(),
            handle.queue_capacity(),
            "held, not queued"
        );
        // A second load while the first is sending keeps what is held.
        audience.add_joining(1, &handle, Vec::new());
        let held = audience.go_live(1).unwrap();
        assert_eq!(bytes(&held), [frame(1).as_bytes()]);
        assert!(audience.go_live(1).is_none());
        assert!(audience.contains(1));
        assert!(audience.send(&Tag::Live, &frame(2)).is_empty());
        assert_eq!(
            handle.queue_room(),
            handle.queue_capacity() - 1,
            "live: queued"
        );
    }

    #[test]
    fn a_joining_connection_holding_a_full_queue_is_reported_stalled() {
        let handle = connection();
        let mut audience = Audience::default();
        audience.add_joining(7, &handle, Vec::new());
        for n in 0..handle.queue_capacity() {
            assert!(audience.send(&Tag::Live, &frame(n as u32)).is_empty());
        }
        let stalled = audience.send(&Tag::Live, &frame(0));
        assert_eq!(stalled.len(), 1);
        assert_eq!(stalled[0].0, 7);
        assert!(!audience.contains(7));
    }

    #[test]
    fn held_events_the_replay_had_are_dropped_and_the_rest_are_sent() {
        let handle = connection();
        let mut audience = Audience::default();
        // Registered mid-stream: the text so far of step 1 goes first.
        audience.add_joining(3, &handle, vec![(text(1, false), frame(0))]);
        for (tag, n) in [
            (text(1, false), 1),
            (Tag::Row(10), 2),
            (Tag::Row(11), 3),
            (Tag::Live, 4),
            (Tag::Row(12), 5),
            (text(2, true), 6),
        ] {
            assert!(audience.send(&tag, &frame(n)).is_empty());
        }
        // The history read saw rows up to 11, step 1's text among them.
        let rows = [
            MessageRow::bare(9, "t", 0, MessageKind::User),
            MessageRow::bare(10, "t", 1, MessageKind::Assistant),
            MessageRow::bare(11, "t", 1, MessageKind::ToolCall),
        ];
        audience.replayed(3, &Replayed::of(&rows));
        // A stored event at or below the last row read is dropped even when sent after.
        assert!(audience.send(&Tag::Row(11), &frame(7)).is_empty());
        assert!(audience.send(&Tag::Row(13), &frame(8)).is_empty());
        let held = audience.go_live(3).unwrap();
        assert_eq!(
            bytes(&held),
            [frame(4), frame(5), frame(6), frame(8)]
                .iter()
                .map(Notification::as_bytes)
                .collect::<Vec<_>>()
        );
        assert!(audience.go_live(3).is_none());
        // Live now, it still skips what its replay had.
        assert!(audience.send(&Tag::Row(11), &frame(9)).is_empty());
        assert_eq!(handle.queue_room(), handle.queue_capacity());
        assert!(audience.send(&Tag::Row(14), &frame(10)).is_empty());
        assert_eq!(handle.queue_room(), handle.queue_capacity() - 1);
    }

    #[test]
    fn without_a_replay_nothing_held_is_dropped() {
        let handle = connection();
        let mut audience = Audience::default();
        audience.add_joining(4, &handle, vec![(Tag::Live, frame(0))]);
        assert!(audience.send(&Tag::Row(1), &frame(1)).is_empty());
        assert!(audience.send(&text(1, false), &frame(2)).is_empty());
        let held = audience.go_live(4).unwrap();
        assert_eq!(held.len(), 3);
        assert!(audience.go_live(4).is_none());
    }
}

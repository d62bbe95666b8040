//! [`ClientOptions::raw_updates`]: a connection's `session/update` events as the bytes the
//! daemon wrote, taken off the connection before the peer parses them, and read only as fast
//! as the caller takes them.
//!
//! For a relay that forwards the events verbatim (the gateway's server-sent events): it
//! neither parses an event into a tree nor writes it back out, and a slow reader slows the
//! connection rather than losing events. The rest of the connection (answers, other
//! notifications, the daemon's requests) goes through the peer as usual.
//!
//! [`ClientOptions::raw_updates`]: crate::ClientOptions::raw_updates

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::io;
use tokio::sync::mpsc;
use zeroclaw_rpc::Frame;
use zeroclaw_rpc::transport::{FrameSource, RpcTransport};

/// The params of one `session/update`, exactly as the daemon serialised them.
pub type RawUpdate = Box<RawValue>;

/// A transport whose `session/update` notifications go to `updates` instead of the peer.
pub(crate) struct Tapped<T> {
    pub(crate) inner: T,
    pub(crate) updates: mpsc::Sender<RawUpdate>,
}

impl<T: RpcTransport> RpcTransport for Tapped<T> {
    type Source = TappedSource<T::Source>;
    type Sink = T::Sink;

    fn peer_label(&self) -> &str {
        self.inner.peer_label()
    }

    fn max_frame_bytes(&self) -> usize {
        self.inner.max_frame_bytes()
    }

    fn into_halves(self) -> (Self::Source, Self::Sink) {
        let (source, sink) = self.inner.into_halves();
        let source = TappedSource {
            inner: source,
            updates: self.updates,
            held: None,
        };
        (source, sink)
    }
}

pub(crate) struct TappedSource<S> {
    inner: S,
    updates: mpsc::Sender<RawUpdate>,
    /// An update read while the queue was full. Kept here, not in a future, so that the
    /// peer may drop [`FrameSource::next_frame`] (it selects over it) without losing it.
    held: Option<RawUpdate>,
}

impl<S: FrameSource> FrameSource for TappedSource<S> {
    async fn next_frame(&mut self) -> io::Result<Option<Frame>> {
        loop {
            if self.held.is_some() {
                // Overflow rule: while the queue is full nothing more is read, so the
                // daemon's writes to this connection wait and its rule for a client that
                // does not read applies. Cancel-safe: the update stays held.
                match self.updates.reserve().await {
                    Ok(permit) => {
                        if let Some(update) = self.held.take() {
                            permit.send(update);
                        }
                    }
                    // Nobody takes them any more: they are dropped from here on.
                    Err(_) => self.held = None,
                }
            }
            let frame = self.inner.next_frame().await?;
            if let Some(Frame::Line(line)) = &frame
                && let Some(update) = update_params(line)
            {
                self.held = Some(update);
                continue;
            }
            return Ok(frame);
        }
    }

    fn has_frame(&self) -> bool {
        // A buffered frame may be an update that waits for room: never promise one.
        false
    }
}

/// The members of a message that tell a `session/update` notification, borrowed from it.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(default)]
    id: Option<IgnoredAny>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

/// The params of `line` if it is a `session/update` notification.
fn update_params(line: &[u8]) -> Option<RawUpdate> {
    let envelope: Envelope<'_> = serde_json::from_slice(line).ok()?;
    match envelope {
        Envelope {
            method: Some(method),
            id: None,
            params: Some(params),
        } if method == zeroclaw_protocol::events::SESSION_UPDATE => Some(params.to_owned()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_a_session_update_notification_is_taken_and_its_params_are_kept_byte_for_byte() {
        let update = br#"{"jsonrpc":"2.0","method":"session\/update","params":{"sessionId":"s", "type" :"x","n":1.50}}"#;
        assert_eq!(
            update_params(update).unwrap().get(),
            r#"{"sessionId":"s", "type" :"x","n":1.50}"#
        );
        for other in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"session/update","params":{}}"#[..],
            br#"{"jsonrpc":"2.0","method":"session/other","params":{}}"#,
            br#"{"jsonrpc":"2.0","method":"session/update"}"#,
            br#"{"jsonrpc":"2.0","id":"zc-out-1","result":{"method":"session/update"}}"#,
            b"not json",
        ] {
            assert!(
                update_params(other).is_none(),
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }
}

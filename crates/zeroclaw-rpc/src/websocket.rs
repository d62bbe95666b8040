//! JSON-RPC over WebSocket: one message per text frame, the same frames as NDJSON lines.
//!
//! | on the wire | to the peer |
//! |---|---|
//! | a text message | one [`Frame::Line`] (JSON whitespace, newlines included, is allowed) |
//! | a text message over the frame cap | [`Frame::Oversized`] then [`Frame::OversizedEnd`]: the peer answers `-32600` and the connection stays |
//! | a binary message | the connection is closed with 1003 (unsupported data) |
//! | ping / pong | answered by tungstenite; any message counts as the peer being alive |
//! | close, or the end of the stream | the end of the frames |
//!
//! With [`WsOptions::ping_every`] the reading half pings the other side (browsers answer
//! pings, but send none of their own); with [`WsOptions::idle_timeout`] a peer that has
//! sent nothing at all for that long is taken as gone. The writing half is shared behind
//! an async mutex with the reading half (for the pings and the 1003 close); the connection
//! task is the only other writer, so frames never interleave.

use crate::codec::{Frame, OVERSIZED_TAIL};
use crate::transport::{FrameSink, FrameSource, RpcTransport};
use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{FutureExt, SinkExt, StreamExt};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message, Utf8Bytes};

pub use tokio_tungstenite;

/// tungstenite's read buffer per connection.
const READ_BUFFER: usize = 8 * 1024;

/// How a WebSocket connection is kept.
#[derive(Debug, Clone)]
pub struct WsOptions {
    /// The frame cap: a longer text message is answered `-32600`, the connection stays.
    pub max_frame_bytes: usize,
    /// Ping the other side this often while it is quiet (a server's choice; `None` for a client).
    pub ping_every: Option<Duration>,
    /// Close after this long without a single message (pongs included) from the other side.
    pub idle_timeout: Option<Duration>,
}

impl WsOptions {
    /// The largest message tungstenite may buffer whole: past it the connection is closed
    /// (1009), below it a message over the frame cap is answered and dropped. Four times
    /// the cap, so an oversized request still gets its `-32600`.
    pub fn max_message_bytes(&self) -> usize {
        self.max_frame_bytes.saturating_mul(4).max(64 * 1024)
    }

    /// tungstenite's settings for these options. Its read buffer is allocated whole for
    /// every connection (128 KiB by default, most of an idle WebSocket's memory); 8 KiB
    /// holds a burst of ordinary messages, and a larger one is read in more calls.
    pub fn config(&self) -> tokio_tungstenite::tungstenite::protocol::WebSocketConfig {
        let max = self.max_message_bytes();
        tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(Some(max))
            .max_frame_size(Some(max))
            .read_buffer_size(READ_BUFFER)
    }
}

/// Something kept alive as long as the connection (a slot, a permit); dropped with it.
pub type Guard = Box<dyn Send + Sync + 'static>;

/// A connected WebSocket (after its handshake), as an [`RpcTransport`].
pub struct WsTransport<S> {
    ws: WebSocketStream<S>,
    label: String,
    options: WsOptions,
    guard: Option<Guard>,
}

impl<S> WsTransport<S> {
    pub fn new(ws: WebSocketStream<S>, label: impl Into<String>, options: WsOptions) -> Self {
        Self {
            ws,
            label: label.into(),
            options,
            guard: None,
        }
    }

    /// Keeps `guard` until both halves of the connection are dropped.
    pub fn with_guard(mut self, guard: Guard) -> Self {
        self.guard = Some(guard);
        self
    }
}

type SharedSink<S> = Arc<tokio::sync::Mutex<SplitSink<WebSocketStream<S>, Message>>>;

impl<S: AsyncRead + AsyncWrite + Unpin + Send + 'static> RpcTransport for WsTransport<S> {
    type Source = WsSource<S>;
    type Sink = WsSink<S>;

    fn peer_label(&self) -> &str {
        &self.label
    }

    fn max_frame_bytes(&self) -> usize {
        self.options.max_frame_bytes
    }

    fn into_halves(self) -> (WsSource<S>, WsSink<S>) {
        let (sink, stream) = self.ws.split();
        let sink = Arc::new(tokio::sync::Mutex::new(sink));
        let now = Instant::now();
        let guard = self.guard.map(Arc::new);
        let first_look = match (self.options.ping_every, self.options.idle_timeout) {
            (None, None) => None,
            (ping, idle) => Some(
                now + ping
                    .unwrap_or(Duration::MAX)
                    .min(idle.unwrap_or(Duration::MAX)),
            ),
        };
        (
            WsSource {
                stream,
                sink: sink.clone(),
                check: first_look.map(|at| Box::pin(tokio::time::sleep_until(at))),
                last_heard: now,
                options: self.options,
                pending: None,
                prefetched: None,
                _guard: guard.clone(),
            },
            WsSink {
                sink,
                _guard: guard,
            },
        )
    }
}

pub struct WsSource<S> {
    stream: SplitStream<WebSocketStream<S>>,
    sink: SharedSink<S>,
    options: WsOptions,
    /// When the keepalive timer next looks at the connection (`None`: no keepalive). It is
    /// not moved on every message: when it fires it measures the silence since
    /// `last_heard` and pings, closes, or sleeps again, so a busy connection costs no
    /// timer work per message.
    check: Option<Pin<Box<tokio::time::Sleep>>>,
    last_heard: Instant,
    /// The [`Frame::OversizedEnd`] owed after a [`Frame::Oversized`].
    pending: Option<Frame>,
    /// A message already read (without waiting) after the last frame, so [`FrameSource::has_frame`]
    /// can tell the connection that a burst goes on and its answers may wait to be written
    /// together, as they do on the socket.
    prefetched: Option<Option<Result<Message, WsError>>>,
    _guard: Option<Arc<Guard>>,
}

fn io_error(e: WsError) -> io::Error {
    match e {
        WsError::Io(e) => e,
        other => io::Error::other(other),
    }
}

/// What the keepalive timer found.
enum Keepalive {
    Ping,
    Silent,
}

/// Resolves when the keepalive timer has something to do; never without one.
async fn keepalive(
    check: &mut Option<Pin<Box<tokio::time::Sleep>>>,
    options: &WsOptions,
    last_heard: Instant,
) -> Keepalive {
    let Some(check) = check.as_mut() else {
        return std::future::pending().await;
    };
    loop {
        check.as_mut().await;
        let now = Instant::now();
        let quiet = now.saturating_duration_since(last_heard);
        if options.idle_timeout.is_some_and(|idle| quiet >= idle) {
            return Keepalive::Silent;
        }
        let ping = options.ping_every.is_some_and(|every| quiet >= every);
        // Next look: a ping interval from now (after a ping) or from the last message,
        // and never past the idle deadline.
        let base = if ping { now } else { last_heard };
        let mut next = now + Duration::from_secs(3600);
        if let Some(every) = options.ping_every {
            next = next.min(base + every);
        }
        if let Some(idle) = options.idle_timeout {
            next = next.min(last_heard + idle);
        }
        check
            .as_mut()
            .reset(next.max(now + Duration::from_millis(1)));
        if ping {
            return Keepalive::Ping;
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send + 'static> WsSource<S> {
    async fn next(&mut self) -> io::Result<Option<Frame>> {
        loop {
            if let Some(frame) = self.pending.take() {
                return Ok(Some(frame));
            }
            let message = match self.prefetched.take() {
                Some(message) => message,
                None => tokio::select! {
                    message = self.stream.next() => message,
                    keepalive = keepalive(&mut self.check, &self.options, self.last_heard) => match keepalive {
                        Keepalive::Ping => {
                            let mut sink = self.sink.lock().await;
                            sink.send(Message::Ping(Bytes::new())).await.map_err(io_error)?;
                            continue;
                        }
                        Keepalive::Silent => {
                            return Err(io::Error::new(io::ErrorKind::TimedOut, "the WebSocket peer went silent"));
                        }
                    },
                },
            };
            let message = match message {
                None => return Ok(None),
                Some(Err(WsError::ConnectionClosed | WsError::AlreadyClosed)) => return Ok(None),
                Some(Err(e)) => return Err(io_error(e)),
                Some(Ok(message)) => message,
            };
            if self.check.is_some() {
                self.last_heard = Instant::now();
            }
            match message {
                Message::Text(text) => {
                    if let Some(frame) = frame_of(
                        Bytes::from(text),
                        self.options.max_frame_bytes,
                        &mut self.pending,
                    ) {
                        // Whatever is already here (tungstenite parses its buffer before it
                        // reads the socket) is taken now, without waiting.
                        self.prefetched = self.stream.next().now_or_never();
                        return Ok(Some(frame));
                    }
                }
                Message::Binary(_) => {
                    let close = CloseFrame {
                        code: CloseCode::Unsupported,
                        reason: Utf8Bytes::from_static("JSON-RPC messages are text frames"),
                    };
                    let mut sink = self.sink.lock().await;
                    let _ = sink.send(Message::Close(Some(close))).await;
                    return Ok(None);
                }
                Message::Close(_) => return Ok(None),
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
            }
        }
    }
}

/// The frame one text message is: `None` for a blank one (skipped, as a blank line is);
/// an oversized one leaves its [`Frame::OversizedEnd`] in `pending`.
pub fn frame_of(text: Bytes, max: usize, pending: &mut Option<Frame>) -> Option<Frame> {
    if text.len() > max {
        let tail = text.slice(text.len().saturating_sub(OVERSIZED_TAIL)..);
        *pending = Some(Frame::OversizedEnd { tail });
        return Some(Frame::Oversized { limit: max });
    }
    if text.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(Frame::Line(text))
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send + 'static> FrameSource for WsSource<S> {
    fn next_frame(&mut self) -> impl Future<Output = io::Result<Option<Frame>>> + Send {
        self.next()
    }

    fn has_frame(&self) -> bool {
        // Only a message that surely makes a frame: anything else may leave `next_frame`
        // waiting for input, and the connection would then hold back answers it owes.
        self.pending.is_some()
            || matches!(
                &self.prefetched,
                Some(Some(Ok(Message::Text(text)))) if !text.as_bytes().iter().all(u8::is_ascii_whitespace)
            )
    }
}

pub struct WsSink<S> {
    sink: SharedSink<S>,
    _guard: Option<Arc<Guard>>,
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send + 'static> WsSink<S> {
    async fn write(&mut self, lines: &[u8]) -> io::Result<usize> {
        // Waiting for the lock or for room writes nothing: both are cancel-safe.
        let mut sink = self.sink.lock().await;
        std::future::poll_fn(|cx| sink.poll_ready_unpin(cx))
            .await
            .map_err(io_error)?;
        let mut written = 0;
        loop {
            let rest = &lines[written..];
            let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
            let text = std::str::from_utf8(&rest[..end])
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            sink.start_send_unpin(Message::Text(Utf8Bytes::from(text)))
                .map_err(io_error)?;
            written += (end + 1).min(rest.len());
            if written >= lines.len() {
                return Ok(lines.len());
            }
            let mut cx = Context::from_waker(std::task::Waker::noop());
            match sink.poll_ready_unpin(&mut cx) {
                Poll::Ready(Ok(())) => {}
                _ => return Ok(written),
            }
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send + 'static> FrameSink for WsSink<S> {
    fn write_some(&mut self, lines: &[u8]) -> impl Future<Output = io::Result<usize>> + Send {
        self.write(lines)
    }

    async fn flush(&mut self) -> io::Result<()> {
        let mut sink = self.sink.lock().await;
        sink.flush().await.map_err(io_error)?;
        // tokio-tungstenite wakes the last writer's waker too on every readiness of the
        // socket, reads included: left registered, this task would be woken (on another
        // thread) by each incoming message with nothing to write. Nothing written waits
        // now, so a no-op waker takes its place; a write that must wait registers again.
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let _ = sink.poll_flush_unpin(&mut cx);
        Ok(())
    }

    async fn close(&mut self) -> io::Result<()> {
        let mut sink = self.sink.lock().await;
        match sink.close().await {
            Ok(()) | Err(WsError::ConnectionClosed | WsError::AlreadyClosed) => Ok(()),
            Err(e) => Err(io_error(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use tokio_tungstenite::tungstenite::protocol::Role;

    async fn pair() -> (
        WsSource<tokio::io::DuplexStream>,
        WebSocketStream<tokio::io::DuplexStream>,
    ) {
        let (a, b) = tokio::io::duplex(64 * 1024);
        let options = WsOptions {
            max_frame_bytes: 1024,
            ping_every: Some(Duration::from_secs(30)),
            idle_timeout: Some(Duration::from_secs(90)),
        };
        let server = WebSocketStream::from_raw_socket(a, Role::Server, None).await;
        let client = WebSocketStream::from_raw_socket(b, Role::Client, None).await;
        let (source, _sink) = WsTransport::new(server, "test", options).into_halves();
        (source, client)
    }

    #[tokio::test(start_paused = true)]
    async fn a_peer_that_never_answers_the_pings_is_closed_after_the_idle_timeout() {
        let (mut source, _client) = pair().await;
        let started = Instant::now();
        let ended = source.next_frame().await.unwrap_err();
        assert_eq!(ended.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= Duration::from_secs(90));
    }

    #[tokio::test(start_paused = true)]
    async fn a_peer_that_answers_the_pings_stays_however_long_it_is_quiet() {
        let (mut source, mut client) = pair().await;
        // Reading is what makes tungstenite answer a ping with a pong.
        tokio::spawn(async move { while client.next().await.is_some() {} });
        let waited = tokio::time::timeout(Duration::from_secs(600), source.next_frame()).await;
        assert!(waited.is_err(), "still open after 600 quiet seconds");
    }

    /// Counts its wakes.
    struct Counter(std::sync::atomic::AtomicUsize);

    impl std::task::Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[tokio::test]
    async fn an_incoming_message_does_not_wake_the_writer_that_has_nothing_to_write() {
        let (a, b) = tokio::io::duplex(64 * 1024);
        let options = WsOptions {
            max_frame_bytes: 1024,
            ping_every: None,
            idle_timeout: None,
        };
        let server = WebSocketStream::from_raw_socket(a, Role::Server, None).await;
        let mut client = WebSocketStream::from_raw_socket(b, Role::Client, None).await;
        let (mut source, mut sink) = WsTransport::new(server, "test", options).into_halves();

        // The writer answers and flushes, polled by a task whose wakes are counted.
        let counter = Arc::new(Counter(Default::default()));
        let waker = std::task::Waker::from(counter.clone());
        let mut cx = Context::from_waker(&waker);
        let mut write = std::pin::pin!(async {
            sink.write_some(b"{}\n").await.unwrap();
            sink.flush().await.unwrap();
        });
        assert!(write.as_mut().poll(&mut cx).is_ready());
        assert_eq!(client.next().await.unwrap().unwrap(), Message::text("{}"));

        // The reader waits; a message arrives and wakes it, and only it.
        let reader = tokio::spawn(async move { source.next_frame().await.unwrap() });
        tokio::task::yield_now().await;
        client.send(Message::text("[1]")).await.unwrap();
        let frame = reader.await.unwrap();
        assert_eq!(frame, Some(Frame::Line(Bytes::from_static(b"[1]"))));
        assert_eq!(counter.0.load(std::sync::atomic::Ordering::SeqCst), 0);
    }

    #[test]
    fn an_oversized_message_is_reported_with_its_tail_and_a_blank_one_is_skipped() {
        let mut pending = None;
        let big = Bytes::from(format!("{{\"x\":\"{}\",\"id\":7}}", "a".repeat(100)));
        assert_eq!(
            frame_of(big, 50, &mut pending),
            Some(Frame::Oversized { limit: 50 })
        );
        let Some(Frame::OversizedEnd { tail }) = pending.take() else {
            panic!()
        };
        assert!(tail.ends_with(b"\"id\":7}"));
        assert_eq!(frame_of(Bytes::from_static(b" \n"), 50, &mut pending), None);
        assert_eq!(
            frame_of(Bytes::from_static(b"{}"), 50, &mut pending),
            Some(Frame::Line(Bytes::from_static(b"{}")))
        );
    }
}

//! The transport seam: a connection is a source of frames, a sink for frames, and a label
//! for the audit log. The peer, dispatch and sessions see nothing else, so a new transport
//! (WebSocket, vsock, stdio) is one type implementing [`RpcTransport`].

use crate::codec::{Frame, FrameReader, FrameWriter};
use std::future::Future;
use std::io;
use tokio::io::{AsyncRead, AsyncWrite, ReadHalf, WriteHalf};

/// The receiving half of a connection.
pub trait FrameSource: Send + 'static {
    /// The next frame; `Ok(None)` at a clean end of stream.
    fn next_frame(&mut self) -> impl Future<Output = io::Result<Option<Frame>>> + Send;
    /// Whether [`Self::next_frame`] can answer without waiting for input. The connection
    /// writes what it owes before it waits; `false` is always a safe answer.
    fn has_frame(&self) -> bool;
}

/// The sending half of a connection. It is given NDJSON text: whole lines, many at a time
/// (a transport that carries messages rather than bytes splits them at the newlines).
pub trait FrameSink: Send + 'static {
    /// Writes a prefix of `lines` and returns its length (never 0 for a non-empty input).
    /// Cancel-safe: dropped before it completes, it wrote nothing, so the connection can
    /// wait for the stream to take bytes and for the next frame to arrive at once.
    fn write_some(&mut self, lines: &[u8]) -> impl Future<Output = io::Result<usize>> + Send;
    /// Pushes out anything the sink buffers (a no-op for a socket or pipe).
    fn flush(&mut self) -> impl Future<Output = io::Result<()>> + Send;
    /// Ends the sending direction after the last frame.
    fn close(&mut self) -> impl Future<Output = io::Result<()>> + Send;
}

/// Writes all of `lines`, then flushes.
pub async fn write_all<K: FrameSink>(sink: &mut K, mut lines: &[u8]) -> io::Result<()> {
    while !lines.is_empty() {
        let n = sink.write_some(lines).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        lines = &lines[n.min(lines.len())..];
    }
    sink.flush().await
}

/// A connected, not yet split, transport.
pub trait RpcTransport: Send + 'static {
    type Source: FrameSource;
    type Sink: FrameSink;
    /// Who is on the other end, for the audit log (`unix:pid=…,uid=…`, `pipe:local`, …).
    fn peer_label(&self) -> &str;
    /// The frame cap this side reads with. The peer writes nothing longer either: a
    /// protocol with one stated cap, where each side refuses what it would not accept.
    fn max_frame_bytes(&self) -> usize;
    fn into_halves(self) -> (Self::Source, Self::Sink);
}

impl<R: AsyncRead + Unpin + Send + 'static> FrameSource for FrameReader<R> {
    fn next_frame(&mut self) -> impl Future<Output = io::Result<Option<Frame>>> + Send {
        FrameReader::next_frame(self)
    }

    fn has_frame(&self) -> bool {
        FrameReader::has_frame(self)
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> FrameSink for FrameWriter<W> {
    fn write_some(&mut self, lines: &[u8]) -> impl Future<Output = io::Result<usize>> + Send {
        self.write_bytes(lines)
    }

    fn flush(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        FrameWriter::flush(self)
    }

    fn close(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        self.shutdown()
    }
}

/// NDJSON over any byte stream, split with `tokio::io::split` so the one connection loop
/// serves every stream type (Unix socket, named pipe, in-memory duplex).
#[derive(Debug)]
pub struct StreamTransport<S> {
    stream: S,
    label: String,
    max_frame_bytes: usize,
}

impl<S> StreamTransport<S> {
    pub fn new(stream: S, label: impl Into<String>, max_frame_bytes: usize) -> Self {
        Self {
            stream,
            label: label.into(),
            max_frame_bytes,
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Send + 'static> RpcTransport for StreamTransport<S> {
    type Source = FrameReader<ReadHalf<S>>;
    type Sink = FrameWriter<WriteHalf<S>>;

    fn peer_label(&self) -> &str {
        &self.label
    }

    fn max_frame_bytes(&self) -> usize {
        self.max_frame_bytes
    }

    fn into_halves(self) -> (Self::Source, Self::Sink) {
        let (read, write) = tokio::io::split(self.stream);
        (
            FrameReader::new(read, self.max_frame_bytes),
            FrameWriter::new(write),
        )
    }
}

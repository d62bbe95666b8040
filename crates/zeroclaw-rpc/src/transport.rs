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
}

/// The sending half of a connection.
pub trait FrameSink: Send + 'static {
    /// Sends every frame, in order. A byte-stream transport may coalesce them into one write.
    fn send_frames(&mut self, frames: &[Vec<u8>]) -> impl Future<Output = io::Result<()>> + Send;
    /// Ends the sending direction after the last frame.
    fn close(&mut self) -> impl Future<Output = io::Result<()>> + Send;
}

/// A connected, not yet split, transport.
pub trait RpcTransport: Send + 'static {
    type Source: FrameSource;
    type Sink: FrameSink;
    /// Who is on the other end, for the audit log (`unix:pid=…,uid=…`, `pipe:local`, …).
    fn peer_label(&self) -> &str;
    fn into_halves(self) -> (Self::Source, Self::Sink);
}

impl<R: AsyncRead + Unpin + Send + 'static> FrameSource for FrameReader<R> {
    fn next_frame(&mut self) -> impl Future<Output = io::Result<Option<Frame>>> + Send {
        FrameReader::next_frame(self)
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> FrameSink for FrameWriter<W> {
    fn send_frames(&mut self, frames: &[Vec<u8>]) -> impl Future<Output = io::Result<()>> + Send {
        self.write_frames(frames)
    }

    fn close(&mut self) -> impl Future<Output = io::Result<()>> + Send {
        self.shutdown()
    }
}

/// NDJSON over any byte stream, split with `tokio::io::split` so one read loop and one
/// write loop serve every stream type (Unix socket, named pipe, in-memory duplex).
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

    fn into_halves(self) -> (Self::Source, Self::Sink) {
        let (read, write) = tokio::io::split(self.stream);
        (
            FrameReader::new(read, self.max_frame_bytes),
            FrameWriter::new(write),
        )
    }
}

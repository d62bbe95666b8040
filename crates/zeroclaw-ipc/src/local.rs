//! One local stream type over the platform primitives, and the transport built on it.
//! `tokio::io::split` (inside [`StreamTransport`]) gives every platform the same read and
//! write halves.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use zeroclaw_rpc::transport::{RpcTransport, StreamTransport};

/// A connected local stream: a Unix socket, or either end of a Windows named pipe.
#[derive(Debug)]
pub enum LocalStream {
    #[cfg(unix)]
    Unix(tokio::net::UnixStream),
    #[cfg(windows)]
    PipeServer(tokio::net::windows::named_pipe::NamedPipeServer),
    #[cfg(windows)]
    PipeClient(tokio::net::windows::named_pipe::NamedPipeClient),
}

macro_rules! delegate {
    ($self:ident, $s:ident => $e:expr) => {
        match $self.get_mut() {
            #[cfg(unix)]
            LocalStream::Unix($s) => $e,
            #[cfg(windows)]
            LocalStream::PipeServer($s) => $e,
            #[cfg(windows)]
            LocalStream::PipeClient($s) => $e,
        }
    };
}

impl AsyncRead for LocalStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        delegate!(self, s => Pin::new(s).poll_read(cx, buf))
    }
}

impl AsyncWrite for LocalStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        delegate!(self, s => Pin::new(s).poll_write(cx, buf))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        delegate!(self, s => Pin::new(s).poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        delegate!(self, s => Pin::new(s).poll_shutdown(cx))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        delegate!(self, s => Pin::new(s).poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            #[cfg(unix)]
            LocalStream::Unix(s) => s.is_write_vectored(),
            #[cfg(windows)]
            LocalStream::PipeServer(s) => s.is_write_vectored(),
            #[cfg(windows)]
            LocalStream::PipeClient(s) => s.is_write_vectored(),
        }
    }
}

/// NDJSON JSON-RPC over a [`LocalStream`].
#[derive(Debug)]
pub struct LocalTransport {
    inner: StreamTransport<LocalStream>,
}

impl LocalTransport {
    pub fn new(stream: LocalStream, peer_label: impl Into<String>, max_frame_bytes: usize) -> Self {
        Self {
            inner: StreamTransport::new(stream, peer_label, max_frame_bytes),
        }
    }
}

impl RpcTransport for LocalTransport {
    type Source = <StreamTransport<LocalStream> as RpcTransport>::Source;
    type Sink = <StreamTransport<LocalStream> as RpcTransport>::Sink;

    fn peer_label(&self) -> &str {
        self.inner.peer_label()
    }

    fn max_frame_bytes(&self) -> usize {
        self.inner.max_frame_bytes()
    }

    fn into_halves(self) -> (Self::Source, Self::Sink) {
        self.inner.into_halves()
    }
}

//! Ctrl-C while a turn streams. The terminal is in its ordinary (cooked) mode then, so
//! Ctrl-C raises SIGINT (a console Ctrl-C event on Windows); at a prompt the line editor
//! reads it as a key instead.
//!
//! This is the listener behind `tokio::signal::ctrl_c`, created once and kept: a fresh
//! `ctrl_c()` future only sees signals that arrive after its first poll, so one made per
//! loop iteration could miss a Ctrl-C pressed between two iterations.

use std::task::{Context, Poll, Waker};

pub struct Interrupts {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
    #[cfg(windows)]
    signal: tokio::signal::windows::CtrlC,
}

impl Interrupts {
    /// Starts listening. From now on SIGINT no longer ends the process.
    pub fn new() -> std::io::Result<Self> {
        Ok(Self {
            #[cfg(unix)]
            signal: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?,
            #[cfg(windows)]
            signal: tokio::signal::windows::ctrl_c()?,
        })
    }

    /// The next Ctrl-C.
    pub async fn recv(&mut self) {
        if self.signal.recv().await.is_none() {
            std::future::pending::<()>().await;
        }
    }

    /// Forgets a Ctrl-C that arrived while nobody was listening (before a turn starts).
    pub fn clear(&mut self) {
        let mut cx = Context::from_waker(Waker::noop());
        while let Poll::Ready(Some(())) = self.signal.poll_recv(&mut cx) {}
    }
}

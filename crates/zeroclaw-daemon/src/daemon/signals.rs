//! The signals that stop the daemon.

/// SIGTERM, SIGINT and SIGHUP (Ctrl-C on Windows) stop the daemon gracefully.
///
/// SIGHUP is an orderly stop, not a reload: the provider, approvals and limits are read once
/// at start-up and shared by running turns, so changing them means a restart. Its default
/// action would kill the daemon without its shutdown (no answer to running turns, the socket
/// left behind, bash commands orphaned), which handling it rules out.
pub(super) fn watch(
    shutdown: tokio_util::sync::CancellationToken,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        let mut hup = signal(SignalKind::hangup())?;
        // SIGXFSZ's default action kills the process at the first write past a file-size
        // limit (`ulimit -f`). Handled, it lets that write fail with EFBIG, which the store
        // reports as a storage error while the daemon keeps serving.
        let mut xfsz = signal(SignalKind::from_raw(rustix::process::Signal::XFSZ.as_raw()))?;
        Ok(tokio::spawn(async move {
            let name = loop {
                tokio::select! {
                    _ = term.recv() => break "SIGTERM",
                    _ = int.recv() => break "SIGINT",
                    _ = hup.recv() => break "SIGHUP",
                    _ = xfsz.recv() => tracing::warn!("a write went past the file-size limit (SIGXFSZ); it failed and the daemon goes on"),
                }
            };
            tracing::info!(signal = name, "signal received");
            shutdown.cancel();
        }))
    }
    #[cfg(windows)]
    {
        let mut ctrl_c = tokio::signal::windows::ctrl_c()?;
        let mut close = tokio::signal::windows::ctrl_close()?;
        Ok(tokio::spawn(async move {
            tokio::select! {
                _ = ctrl_c.recv() => {}
                _ = close.recv() => {}
            }
            tracing::info!("console signal received");
            shutdown.cancel();
        }))
    }
}

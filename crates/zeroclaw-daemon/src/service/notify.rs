//! What the daemon tells its service manager (`sd_notify(3)`'s protocol): `READY=1` once
//! the store is open and every door listens, `STATUS=` lines saying what it does,
//! `STOPPING=1` as an orderly stop begins, and `WATCHDOG=1` at half of `WATCHDOG_USEC`
//! while the runtime is healthy. Without `NOTIFY_SOCKET` every call does nothing.
//!
//! The socket's address is read once, before the runtime's threads start
//! ([`Notifier::take_from_env`]), and the variables are removed then, so no child process
//! inherits them (a tool's command could otherwise tell systemd the daemon is ready or
//! stopping). A message is one datagram; a failed send is logged once and never stops the
//! daemon.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The service manager's notification socket and watchdog period, taken out of the
/// environment.
#[derive(Debug, Default)]
pub struct Notifier {
    #[cfg(unix)]
    socket: Option<std::os::unix::net::UnixDatagram>,
    /// `WATCHDOG_USEC`, when it names this process (`WATCHDOG_PID`) or no process.
    watchdog: Option<Duration>,
    /// A send failed and was logged; later failures stay quiet.
    failed: AtomicBool,
}

impl Notifier {
    /// Reads and removes `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID`, and connects
    /// to the socket (a path, or on Linux an abstract name written `@name`).
    ///
    /// # Safety
    ///
    /// Removes environment variables: call it before any other thread runs (in `main`,
    /// before the async runtime is built), as `std::env::remove_var` requires.
    pub unsafe fn take_from_env() -> Result<Self, String> {
        #[cfg(unix)]
        {
            let address = std::env::var_os("NOTIFY_SOCKET");
            // SAFETY: the caller guarantees no other thread runs (this function's contract).
            let watchdog = unsafe { sd_notify::watchdog_enabled_and_unset_env() };
            // SAFETY: as above.
            unsafe { std::env::remove_var("NOTIFY_SOCKET") };
            let Some(address) = address.filter(|a| !a.is_empty()) else {
                return Ok(Self::default());
            };
            let socket = connect(&address).map_err(|e| {
                format!(
                    "cannot reach the service manager's NOTIFY_SOCKET {}: {e}",
                    address.to_string_lossy()
                )
            })?;
            Ok(Self {
                socket: Some(socket),
                watchdog,
                failed: AtomicBool::new(false),
            })
        }
        #[cfg(not(unix))]
        Ok(Self::default())
    }

    /// Whether a service manager listens.
    pub fn is_on(&self) -> bool {
        #[cfg(unix)]
        return self.socket.is_some();
        #[cfg(not(unix))]
        false
    }

    /// How often to send `WATCHDOG=1`: half of `WATCHDOG_USEC`, as `sd_watchdog_enabled(3)`
    /// advises; `None` when no watchdog is asked for (or nobody listens).
    pub fn watchdog_every(&self) -> Option<Duration> {
        self.watchdog
            .filter(|_| self.is_on())
            .map(|period| (period / 2).max(Duration::from_millis(1)))
    }

    /// `READY=1` with a first status line.
    pub fn ready(&self, status: &str) {
        self.send(&format!("READY=1\nSTATUS={}\n", one_line(status)));
    }

    /// `STATUS=…`: a line `systemctl status` shows.
    pub fn status(&self, status: &str) {
        self.send(&format!("STATUS={}\n", one_line(status)));
    }

    /// `STOPPING=1`: an orderly stop has begun.
    pub fn stopping(&self) {
        self.send("STOPPING=1\nSTATUS=stopping\n");
    }

    /// `WATCHDOG=1`: the daemon is healthy.
    pub fn watchdog(&self) {
        self.send("WATCHDOG=1\n");
    }

    fn send(&self, message: &str) {
        #[cfg(unix)]
        if let Some(socket) = &self.socket
            && let Err(e) = socket.send(message.as_bytes())
            && !self.failed.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(error = %e, "could not notify the service manager (NOTIFY_SOCKET); later failures are not logged");
        }
        #[cfg(not(unix))]
        let _ = (message, &self.failed, Ordering::Relaxed);
    }
}

/// A status is one line of the protocol: newlines would start other assignments.
fn one_line(status: &str) -> String {
    status.replace(['\n', '\r'], " ")
}

#[cfg(unix)]
fn connect(address: &std::ffi::OsStr) -> std::io::Result<std::os::unix::net::UnixDatagram> {
    use std::os::unix::ffi::OsStrExt;
    let socket = std::os::unix::net::UnixDatagram::unbound()?;
    let bytes = address.as_bytes();
    if let Some(name) = bytes.strip_prefix(b"@") {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
            socket.connect_addr(&addr)?;
            return Ok(socket);
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            let _ = name;
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "abstract socket names exist on Linux only",
            ));
        }
    }
    socket.connect(std::path::Path::new(address))?;
    Ok(socket)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_with_a_newline_stays_one_assignment() {
        assert_eq!(one_line("a\nREADY=1"), "a READY=1");
    }

    #[test]
    fn without_a_socket_every_notification_does_nothing() {
        let notifier = Notifier::default();
        assert!(!notifier.is_on());
        assert_eq!(notifier.watchdog_every(), None);
        notifier.ready("ready");
        notifier.stopping();
    }
}

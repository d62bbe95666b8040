//! Socket activation: the listening sockets a service manager passes (systemd's
//! `LISTEN_FDS`, `LISTEN_PID` and `LISTEN_FDNAMES`, as `sd_listen_fds(3)` reads them), by
//! name: `rpc`, the Unix socket clients connect to, and `gateway`, the gateway's TCP
//! socket. A passed socket replaces the one the daemon would bind; its file stays the
//! manager's (never unlinked here), and the daemon's rules hold on it as on its own
//! (`zeroclaw_ipc::LocalListener::inherit`).
//!
//! The environment is read once, by [`Activation::take_from_env`], before the runtime's
//! threads start, and the variables are removed then, so no child process (a tool's
//! command, an MCP server) inherits them. Only on Unix: elsewhere no manager passes
//! sockets, and the variables, if set, are refused with a message.
//!
//! On macOS launchd passes no variables: a job asks it for the sockets its plist declares
//! under `Sockets` (`launch_activate_socket(3)`), here the one named `rpc` (module
//! `launchd`). Written to Apple's documented interface and compiled only there; it has not
//! been run on a Mac (docs/service.md).

/// The name of the local socket among the passed ones (`FileDescriptorName=` in the unit).
pub const RPC: &str = "rpc";
/// The name of the gateway's TCP socket.
pub const GATEWAY: &str = "gateway";

/// The sockets a service manager passed, taken out of the environment. Empty when the
/// daemon was not activated.
#[derive(Debug, Default)]
pub struct Activation {
    #[cfg(unix)]
    rpc: Option<std::os::fd::OwnedFd>,
    #[cfg(unix)]
    gateway: Option<std::os::fd::OwnedFd>,
    /// Whether the manager passed any socket.
    pub activated: bool,
}

impl Activation {
    /// Reads and removes `LISTEN_FDS`, `LISTEN_PID` and `LISTEN_FDNAMES`. The descriptors
    /// are owned from here (and close-on-exec). A passed descriptor whose name is neither
    /// `rpc` nor `gateway` is refused: a unit that passes one means something this daemon
    /// does not do. A single unnamed socket (systemd names it `unknown`, the default of
    /// `systemd-socket-activate` without `--fdname`) is taken as `rpc`.
    ///
    /// # Safety
    ///
    /// Removes environment variables: call it before any other thread runs (in `main`,
    /// before the async runtime is built), as `std::env::remove_var` requires.
    pub unsafe fn take_from_env() -> Result<Self, String> {
        #[cfg(unix)]
        {
            // SAFETY: the caller guarantees no other thread runs (this function's contract).
            let passed = unsafe { sd_notify::listen_fds_with_names_and_unset_env() }
                .map_err(|e| format!("the service manager's LISTEN_FDS cannot be read: {e}"))?;
            let passed: Vec<(std::os::fd::RawFd, String)> = passed.collect();
            let single = passed.len() == 1;
            let mut activation = Self::default();
            for (fd, name) in passed {
                // SAFETY: `sd_listen_fds` hands these descriptors to this process, LISTEN_PID
                // having named it; nothing else here owns them, and the variables are gone
                // now, so nothing takes them twice.
                let owned =
                    unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
                let slot = match name.as_str() {
                    RPC => &mut activation.rpc,
                    GATEWAY => &mut activation.gateway,
                    "unknown" | "" if single => &mut activation.rpc,
                    other => {
                        return Err(format!(
                            "the service manager passed a socket named {other:?}; zeroclaw serves `{RPC}` (its local socket) and `{GATEWAY}` (the gateway's TCP socket): set FileDescriptorName= in the socket unit"
                        ));
                    }
                };
                if slot.replace(owned).is_some() {
                    return Err(format!(
                        "the service manager passed two sockets named {name:?}; give each its own FileDescriptorName="
                    ));
                }
                activation.activated = true;
            }
            #[cfg(target_os = "macos")]
            if !activation.activated {
                activation.rpc = launchd::socket(RPC)?;
                activation.activated = activation.rpc.is_some();
            }
            Ok(activation)
        }
        #[cfg(not(unix))]
        {
            if std::env::var_os("LISTEN_FDS").is_some() {
                return Err(
                    "LISTEN_FDS is set, but socket activation is unsupported on this platform; start the daemon without it"
                        .into(),
                );
            }
            Ok(Self::default())
        }
    }

    /// The passed local socket, if any (taken: the listener owns it from here).
    #[cfg(unix)]
    pub fn take_rpc(&mut self) -> Option<std::os::fd::OwnedFd> {
        self.rpc.take()
    }

    /// The passed gateway socket, checked to be a listening TCP socket.
    #[cfg(unix)]
    pub fn take_gateway(&mut self) -> Result<Option<std::net::TcpListener>, String> {
        use rustix::net::{AddressFamily, SocketType, sockopt};
        let Some(fd) = self.gateway.take() else {
            return Ok(None);
        };
        let refuse = |why: &str| {
            format!(
                "the socket passed as `{GATEWAY}` by the service manager cannot be served: {why}"
            )
        };
        let kind = sockopt::socket_type(&fd).map_err(|e| refuse(&e.to_string()))?;
        let family = sockopt::socket_domain(&fd).map_err(|e| refuse(&e.to_string()))?;
        if kind != SocketType::STREAM
            || (family != AddressFamily::INET && family != AddressFamily::INET6)
        {
            return Err(refuse("it is not a TCP socket (ListenStream=ADDRESS:PORT)"));
        }
        if !sockopt::socket_acceptconn(&fd).map_err(|e| refuse(&e.to_string()))? {
            return Err(refuse("it is not listening"));
        }
        Ok(Some(std::net::TcpListener::from(fd)))
    }
}

/// launchd's side of activation: the sockets a job's plist declares under `Sockets`.
#[cfg(target_os = "macos")]
mod launchd {
    use std::ffi::{CString, c_char, c_int, c_void};
    use std::os::fd::{FromRawFd, OwnedFd};

    // Both are in libSystem, which every program on macOS links.
    unsafe extern "C" {
        /// `launch_activate_socket(3)`: the descriptors of the job's socket `name`, in a
        /// buffer the caller frees; `ESRCH` when launchd did not start this process,
        /// `ENOENT` when the plist declares no such socket.
        fn launch_activate_socket(
            name: *const c_char,
            fds: *mut *mut c_int,
            cnt: *mut usize,
        ) -> c_int;
        fn free(ptr: *mut c_void);
    }

    const ENOENT: c_int = 2;
    const ESRCH: c_int = 3;

    /// The socket launchd holds for this job under `name`; `None` when launchd did not
    /// start the daemon or declares no such socket.
    pub(super) fn socket(name: &str) -> Result<Option<OwnedFd>, String> {
        let c_name = CString::new(name).map_err(|_| format!("bad socket name {name:?}"))?;
        let mut fds: *mut c_int = std::ptr::null_mut();
        let mut count: usize = 0;
        // SAFETY: the name is a valid C string for the call; the out-pointers point at
        // locals of the right types.
        let rc = unsafe { launch_activate_socket(c_name.as_ptr(), &mut fds, &mut count) };
        match rc {
            0 => {}
            ESRCH | ENOENT => return Ok(None),
            errno => {
                return Err(format!(
                    "launchd's socket {name:?} cannot be taken: {}",
                    std::io::Error::from_raw_os_error(errno)
                ));
            }
        }
        let mut owned = Vec::with_capacity(count);
        for i in 0..count {
            // SAFETY: on success `fds` holds `count` descriptors launchd handed to this
            // process, each owned by nobody else here.
            let fd = unsafe { *fds.add(i) };
            // SAFETY: as above: the descriptor is ours to own and close.
            owned.push(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        // SAFETY: the buffer was allocated by launchd for the caller to free, once.
        unsafe { free(fds.cast()) };
        for fd in &owned {
            // Not inherited by a tool's command or an MCP server.
            rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC)
                .map_err(|e| format!("launchd's socket {name:?}: {e}"))?;
        }
        let mut owned = owned.into_iter();
        let first = owned.next();
        if owned.next().is_some() {
            return Err(format!(
                "launchd passed several sockets named {name:?}; the plist's `{name}` entry must declare one SockPathName"
            ));
        }
        Ok(first)
    }
}

//! The Windows listener: a named pipe that only this user and SYSTEM may open.
//!
//! Three things keep it private (see the protocol reference, "Daemon lifecycle"):
//! - an explicit security descriptor granting only the creating user and SYSTEM, because the
//!   OS default DACL for a pipe also lets Everyone (and anonymous) read it;
//! - `reject_remote_clients`, so the pipe is not reachable over SMB;
//! - `first_pipe_instance`, so if anyone (another daemon, or another user squatting on the
//!   name) already owns the pipe, bind fails instead of joining their pipe as an extra
//!   instance, whose security the first creator decided.

use crate::{Accepted, BindError, Endpoint, LocalStream, Paths, PeerInfo};
use std::ffi::{OsStr, c_void};
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::ptr;
use std::time::Duration;
use tokio::net::windows::named_pipe::{ClientOptions, NamedPipeServer, ServerOptions};
use windows_sys::Win32::Foundation::{
    ERROR_ACCESS_DENIED, ERROR_INSUFFICIENT_BUFFER, ERROR_PIPE_BUSY, HANDLE, LocalFree,
};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{
    GetTokenInformation, PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER,
    TokenUser,
};
use windows_sys::Win32::System::Pipes::GetNamedPipeServerProcessId;
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// How long [`connect`] keeps retrying while every pipe instance is busy (a burst of
/// clients racing for the one listening instance before the daemon creates the next).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
const BUSY_RETRY: Duration = Duration::from_millis(10);

pub(crate) struct PipeServer {
    name: std::ffi::OsString,
    /// Every instance is created with this descriptor, so it lives as long as the server.
    sd: SecurityDescriptor,
    /// The instance currently waiting for a client. There is always one, so the name never
    /// lapses and nobody else can take it over between connections.
    next: NamedPipeServer,
}

impl PipeServer {
    pub(crate) fn bind(paths: &Paths) -> Result<Self, BindError> {
        let data_dir = &paths.data_dir;
        std::fs::create_dir_all(data_dir).map_err(|source| BindError::Io {
            what: format!("create the data directory ({})", data_dir.display()),
            source,
        })?;
        let sd = SecurityDescriptor::current_user_and_system().map_err(|source| BindError::Io {
            what: "build the named pipe's security descriptor".into(),
            source,
        })?;
        let name = paths.endpoint.as_path().as_os_str().to_os_string();
        let first = create_instance(&name, &sd, true).map_err(|e| {
            if is_name_taken(&e) {
                BindError::AlreadyRunning {
                    endpoint: paths.endpoint.to_string(),
                    pid: server_pid(&name),
                }
            } else {
                BindError::Io {
                    what: format!("create the named pipe {}", paths.endpoint),
                    source: e,
                }
            }
        })?;
        Ok(Self {
            name,
            sd,
            next: first,
        })
    }

    pub(crate) async fn accept(&mut self) -> io::Result<Accepted> {
        if let Err(e) = self.next.connect().await {
            // An instance whose client came and went before we connected (ERROR_NO_DATA)
            // can never be connected again; replace it, or every later accept would fail.
            if let Ok(fresh) = create_instance(&self.name, &self.sd, false) {
                self.next = fresh;
            }
            return Err(e);
        }
        // Create the next instance before handing this one out, so one is always listening.
        let next = create_instance(&self.name, &self.sd, false)?;
        let connected = std::mem::replace(&mut self.next, next);
        Ok(Accepted {
            stream: LocalStream::PipeServer(connected),
            peer: PeerInfo::pipe_local(),
        })
    }
}

/// Connects to the daemon's pipe. A missing pipe is `ErrorKind::NotFound` (std maps
/// ERROR_FILE_NOT_FOUND), which the caller reports as "no daemon".
pub(crate) async fn connect(endpoint: &Endpoint) -> io::Result<LocalStream> {
    let name = endpoint.as_path().as_os_str();
    let deadline = tokio::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match ClientOptions::new().open(name) {
            Ok(client) => return Ok(LocalStream::PipeClient(client)),
            // Every instance is taken; the daemon creates the next one as soon as it
            // accepts, so wait briefly rather than fail (the pattern tokio documents).
            Err(e) if is_busy(&e) && tokio::time::Instant::now() < deadline => {}
            Err(e) => return Err(e),
        }
        tokio::time::sleep(BUSY_RETRY).await;
    }
}

fn create_instance(
    name: &OsStr,
    sd: &SecurityDescriptor,
    first: bool,
) -> io::Result<NamedPipeServer> {
    let mut attrs = SECURITY_ATTRIBUTES {
        nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
        lpSecurityDescriptor: sd.as_ptr(),
        bInheritHandle: 0,
    };
    let mut options = ServerOptions::new();
    options
        .first_pipe_instance(first)
        .reject_remote_clients(true);
    // SAFETY: `attrs` is a valid SECURITY_ATTRIBUTES that outlives the call, and its
    // descriptor is owned by `sd`, which the caller keeps alive; CreateNamedPipeW copies
    // what it needs and keeps no pointer to either.
    unsafe { options.create_with_security_attributes_raw(name, (&raw mut attrs).cast()) }
}

/// What `first_pipe_instance` reports when the pipe already exists (ERROR_ACCESS_DENIED),
/// or what creating yet another instance of a full pipe reports (ERROR_PIPE_BUSY).
fn is_name_taken(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(code) if code == ERROR_ACCESS_DENIED as i32 || code == ERROR_PIPE_BUSY as i32)
}

fn is_busy(e: &io::Error) -> bool {
    e.raw_os_error() == Some(ERROR_PIPE_BUSY as i32)
}

/// Best effort: the pid of the process serving `name`, for the "already running" message.
/// None if we cannot open the pipe (another user's, or every instance busy).
fn server_pid(name: &OsStr) -> Option<u32> {
    let client = ClientOptions::new().write(false).open(name).ok()?;
    let mut pid = 0u32;
    // SAFETY: `client` owns a valid pipe handle for the duration of the call, and `pid` is
    // a valid place for the API to write a u32.
    let ok = unsafe { GetNamedPipeServerProcessId(client.as_raw_handle() as HANDLE, &mut pid) };
    (ok != 0).then_some(pid)
}

/// Memory Windows allocated for us with LocalAlloc; freed with LocalFree on drop.
struct LocalBox(*mut c_void);

impl Drop for LocalBox {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the pointer came from an API documented to allocate with LocalAlloc,
            // is owned by this guard alone, and is freed exactly once, here.
            unsafe { LocalFree(self.0) };
        }
    }
}

/// A self-relative security descriptor: `D:P(A;;GA;;;SY)(A;;GA;;;<user sid>)`, a protected
/// DACL (nothing inherited) granting full access to SYSTEM and the current user only.
struct SecurityDescriptor(LocalBox);

// SAFETY: the descriptor is plain memory owned exclusively by this value, never written
// after creation, and LocalFree may be called from any thread.
unsafe impl Send for SecurityDescriptor {}
// SAFETY: as above; shared access only ever reads it (CreateNamedPipeW copies it).
unsafe impl Sync for SecurityDescriptor {}

impl SecurityDescriptor {
    fn current_user_and_system() -> io::Result<Self> {
        let sid = current_user_sid()?;
        let sddl = wide(&format!("D:P(A;;GA;;;SY)(A;;GA;;;{sid})"));
        let mut sd: PSECURITY_DESCRIPTOR = ptr::null_mut();
        // SAFETY: `sddl` is NUL-terminated and outlives the call; `sd` is a valid place for
        // the out pointer; the size out-parameter is optional and passed as null.
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl.as_ptr(),
                SDDL_REVISION_1,
                &mut sd,
                ptr::null_mut(),
            )
        };
        let sd = LocalBox(sd);
        if ok == 0 || sd.0.is_null() {
            return Err(io::Error::last_os_error());
        }
        Ok(Self(sd))
    }

    fn as_ptr(&self) -> *mut c_void {
        self.0.0
    }
}

/// The current process user's SID as a string (`S-1-5-21-...`).
fn current_user_sid() -> io::Result<String> {
    // SAFETY: no preconditions; the result is a pseudo-handle that needs no closing.
    let process = unsafe { GetCurrentProcess() };
    let mut raw: HANDLE = ptr::null_mut();
    // SAFETY: `process` is valid for this process's lifetime; `raw` is a valid place for
    // the token handle.
    if unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut raw) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: OpenProcessToken succeeded, so `raw` is an open handle that we alone own;
    // OwnedHandle closes it (CloseHandle) on drop.
    let token = unsafe { OwnedHandle::from_raw_handle(raw) };

    let mut len = 0u32;
    // SAFETY: a null buffer of length 0 asks only for the required size, written to `len`.
    let ok = unsafe {
        GetTokenInformation(
            token.as_raw_handle() as HANDLE,
            TokenUser,
            ptr::null_mut(),
            0,
            &mut len,
        )
    };
    if ok == 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(ERROR_INSUFFICIENT_BUFFER as i32) {
            return Err(e);
        }
    }
    if (len as usize) < size_of::<TOKEN_USER>() {
        return Err(io::Error::other(
            "GetTokenInformation(TokenUser) reported too small a size",
        ));
    }
    // u64 elements keep the buffer aligned for TOKEN_USER (which holds pointers).
    let mut buf = vec![0u64; (len as usize).div_ceil(size_of::<u64>())];
    // SAFETY: `buf` is writable for at least `len` bytes and outlives the call.
    let ok = unsafe {
        GetTokenInformation(
            token.as_raw_handle() as HANDLE,
            TokenUser,
            buf.as_mut_ptr().cast(),
            len,
            &mut len,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the call filled `buf` with a TOKEN_USER at its start; the buffer is large
    // and aligned enough (checked above). Its SID pointer points into `buf`, which stays
    // alive until after ConvertSidToStringSidW below.
    let user = unsafe { buf.as_ptr().cast::<TOKEN_USER>().read() };

    let mut text: *mut u16 = ptr::null_mut();
    // SAFETY: `user.User.Sid` is a valid SID inside `buf`; `text` is a valid out pointer.
    let ok = unsafe { ConvertSidToStringSidW(user.User.Sid, &mut text) };
    let text = LocalBox(text.cast());
    if ok == 0 || text.0.is_null() {
        return Err(io::Error::last_os_error());
    }
    let p = text.0.cast::<u16>();
    let mut n = 0;
    // SAFETY: on success the API returns a NUL-terminated UTF-16 string owned by `text`
    // (alive for this whole function), so every index up to the NUL is in bounds.
    while unsafe { p.add(n).read() } != 0 {
        n += 1;
    }
    // SAFETY: the `n` units before the NUL are initialised and stay alive with `text`.
    let units = unsafe { std::slice::from_raw_parts(p, n) };
    String::from_utf16(units)
        .map_err(|_| io::Error::other("the user's SID string is not valid UTF-16"))
}

fn wide(s: &str) -> Vec<u16> {
    OsStr::new(s)
        .encode_wide()
        .chain(std::iter::once(0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn paths(dir: &std::path::Path, tag: &str) -> Paths {
        Paths {
            config_dir: dir.to_path_buf(),
            data_dir: dir.join("data"),
            endpoint: Endpoint::new(format!(
                r"\\.\pipe\zeroclaw-test-{}-{tag}",
                std::process::id()
            )),
        }
    }

    #[tokio::test]
    async fn second_bind_reports_already_running_with_our_pid() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path(), "twice");
        let _first = PipeServer::bind(&paths).unwrap();
        assert!(paths.data_dir.is_dir());
        match PipeServer::bind(&paths) {
            Err(BindError::AlreadyRunning { endpoint, pid }) => {
                assert_eq!(endpoint, paths.endpoint.to_string());
                assert_eq!(pid, Some(std::process::id()));
            }
            Err(e) => panic!("unexpected error: {e}"),
            Ok(_) => panic!("second bind succeeded"),
        }
    }

    #[tokio::test]
    async fn accept_and_connect_carry_bytes_both_ways() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path(), "echo");
        let mut server = PipeServer::bind(&paths).unwrap();
        let endpoint = paths.endpoint.clone();
        let client = tokio::spawn(async move {
            let mut a = connect(&endpoint).await.unwrap();
            let mut b = connect(&endpoint).await.unwrap();
            a.write_all(b"ping\n").await.unwrap();
            let mut buf = [0u8; 5];
            a.read_exact(&mut buf).await.unwrap();
            b.write_all(b"x").await.unwrap();
            buf
        });
        let mut first = server.accept().await.unwrap();
        assert_eq!(first.peer.label, "pipe:local");
        let mut buf = [0u8; 5];
        first.stream.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"ping\n");
        first.stream.write_all(b"pong\n").await.unwrap();
        let mut second = server.accept().await.unwrap();
        let mut one = [0u8; 1];
        second.stream.read_exact(&mut one).await.unwrap();
        assert_eq!(&one, b"x");
        assert_eq!(&client.await.unwrap(), b"pong\n");
    }

    #[tokio::test]
    async fn connect_to_a_missing_pipe_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path(), "missing");
        let err = connect(&paths.endpoint).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}

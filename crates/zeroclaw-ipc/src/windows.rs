//! The Windows listener and client: a named pipe that only this user and SYSTEM may open,
//! and a client that talks only to a pipe served by its own user.
//!
//! What keeps the daemon's side private (see the protocol reference, "Daemon lifecycle"):
//! - the data dir lock (`LockFileEx` on `<data dir>\daemon.lock`, `data_lock.rs`), taken
//!   before the pipe is created: one daemon per data dir, whatever the spelling of its path
//!   or its pipe name;
//! - an explicit security descriptor granting only the creating user and SYSTEM, because the
//!   OS default DACL for a pipe also lets Everyone (and anonymous) read it;
//! - `reject_remote_clients`, so the pipe is not reachable over SMB;
//! - `first_pipe_instance`, so if anyone (another daemon, or another user squatting on the
//!   name) already owns the pipe, bind fails instead of joining their pipe as an extra
//!   instance, whose security the first creator decided.
//!
//! What keeps a client safe: it opens only `\\.\pipe\` names, checks that the handle it got
//! is a pipe before writing a byte, and checks that the process serving the pipe runs as the
//! same user (the pipe namespace is shared by every user, so another one could create our
//! pipe's name first and receive our prompts).
//!
//! Wine (used to run these tests on Linux) ignores `FILE_FLAG_FIRST_PIPE_INSTANCE` and
//! stores but does not enforce a pipe's DACL; tests of those two facts say they are skipped
//! there ([`is_wine`]).

use crate::{Accepted, BindError, Endpoint, LocalStream, Paths, PeerInfo};
use std::ffi::{OsStr, c_void};
use std::fs::File;
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::Path;
use std::ptr;
use std::time::Duration;
use tokio::net::windows::named_pipe::{
    ClientOptions, NamedPipeClient, NamedPipeServer, ServerOptions,
};
use windows_sys::Win32::Foundation::{
    ERROR_ACCESS_DENIED, ERROR_FILENAME_EXCED_RANGE, ERROR_INSUFFICIENT_BUFFER, ERROR_INVALID_NAME,
    ERROR_LOCK_VIOLATION, ERROR_PIPE_BUSY, HANDLE, LocalFree,
};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{
    CopySid, EqualSid, GetLengthSid, GetTokenInformation, IsValidSid, PSECURITY_DESCRIPTOR, PSID,
    SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER, TokenUser,
};
use windows_sys::Win32::Storage::FileSystem::{
    FILE_FLAG_OPEN_REPARSE_POINT, FILE_FLAG_OVERLAPPED, FILE_TYPE_PIPE, GetFileType,
    LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY, LockFileEx, SECURITY_IDENTIFICATION,
    UnlockFileEx,
};
use windows_sys::Win32::System::IO::OVERLAPPED;
use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
use windows_sys::Win32::System::Pipes::GetNamedPipeServerProcessId;
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

/// How long [`connect`] keeps retrying while every pipe instance is busy (a burst of
/// clients racing for the one listening instance before the daemon creates the next).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
const BUSY_RETRY: Duration = Duration::from_millis(10);

/// The byte `LockFileEx` locks: far past the pid written at the start of the file. Windows
/// locks are mandatory, so a lock over the pid would keep the next daemon from reading who
/// holds it.
const LOCK_OFFSET_HIGH: u32 = 1;

pub(crate) struct PipeServer {
    name: std::ffi::OsString,
    /// Every instance is created with this descriptor, so it lives as long as the server.
    sd: SecurityDescriptor,
    /// The instance currently waiting for a client. There is always one, so the name never
    /// lapses and nobody else can take it over between connections.
    next: NamedPipeServer,
}

impl PipeServer {
    /// Creates the pipe; the data dir has been locked ([`crate::claim_data_dir`]).
    pub(crate) fn bind(paths: &Paths) -> Result<Self, BindError> {
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
                    source: explain_name_error(e),
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

/// Opens a lock file, creating it if `create`; a link at its path is never followed, and
/// anything but a regular file is refused.
pub(crate) fn open(path: &Path, create: bool) -> io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(create)
        .create(create)
        .truncate(false)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is not a regular file (a link is never followed); remove it if you did not create it",
        ));
    }
    Ok(file)
}

/// The lock's byte, far past the record (see [`LOCK_OFFSET_HIGH`]).
fn lock_byte() -> OVERLAPPED {
    // SAFETY: a zeroed OVERLAPPED is a valid "no event" value; only its offset is set.
    let mut at: OVERLAPPED = unsafe { std::mem::zeroed() };
    at.Anonymous.Anonymous.OffsetHigh = LOCK_OFFSET_HIGH;
    at
}

/// `LockFileEx` without waiting, exclusive or shared: `Ok(false)` when another holds it.
pub(crate) fn try_lock(file: &File, exclusive: bool) -> io::Result<bool> {
    let mut at = lock_byte();
    let mut flags = LOCKFILE_FAIL_IMMEDIATELY;
    if exclusive {
        flags |= LOCKFILE_EXCLUSIVE_LOCK;
    }
    // SAFETY: `file` owns an open handle for the duration of the call, and `at` is a valid
    // OVERLAPPED that outlives it; the handle is synchronous, so the call completes (or
    // fails at once, with LOCKFILE_FAIL_IMMEDIATELY) before returning.
    let locked = unsafe { LockFileEx(file.as_raw_handle() as HANDLE, flags, 0, 1, 0, &mut at) };
    if locked != 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(ERROR_LOCK_VIOLATION as i32) {
        return Ok(false);
    }
    Err(e)
}

/// A shared `LockFileEx` that waits for an exclusive holder to let go.
pub(crate) fn wait_shared(file: &File) -> io::Result<()> {
    let mut at = lock_byte();
    // SAFETY: as in `try_lock`; without LOCKFILE_FAIL_IMMEDIATELY the call waits for the
    // lock on the synchronous handle, and `at` outlives it.
    let locked = unsafe { LockFileEx(file.as_raw_handle() as HANDLE, 0, 0, 1, 0, &mut at) };
    if locked != 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

pub(crate) fn unlock(file: &File) -> io::Result<()> {
    let mut at = lock_byte();
    // SAFETY: as in `try_lock`; it releases the byte this handle locked.
    if unsafe { UnlockFileEx(file.as_raw_handle() as HANDLE, 0, 1, 0, &mut at) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Connects to the daemon's pipe, if it is one served by this user. A missing pipe is
/// `ErrorKind::NotFound` (std maps ERROR_FILE_NOT_FOUND), which the caller reports as "no
/// daemon".
pub(crate) async fn connect(endpoint: &Endpoint) -> io::Result<LocalStream> {
    connect_as(endpoint, &Sid::current_user()?).await
}

/// [`connect`], accepting only a server that runs as `user`.
async fn connect_as(endpoint: &Endpoint, user: &Sid) -> io::Result<LocalStream> {
    let name = endpoint.as_path().as_os_str();
    crate::endpoint::check_pipe_name(name)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    let deadline = tokio::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match open_pipe(name) {
            Ok(client) => {
                check_server_user(&client, endpoint, user)?;
                return Ok(LocalStream::PipeClient(client));
            }
            // Every instance is taken; the daemon creates the next one as soon as it
            // accepts, so wait briefly rather than fail (the pattern tokio documents).
            Err(e) if is_busy(&e) && tokio::time::Instant::now() < deadline => {}
            Err(e) => return Err(explain_name_error(e)),
        }
        tokio::time::sleep(BUSY_RETRY).await;
    }
}

/// Opens `name` as a pipe client, and refuses (closing it, having neither written nor read
/// anything) a handle that is not a pipe: a file or device that a wrong name led to. Opened
/// as tokio's `ClientOptions` does (overlapped, no sharing, identification-only
/// impersonation), but checked before tokio's I/O driver, which starts reading at once,
/// gets it.
fn open_pipe(name: &OsStr) -> io::Result<NamedPipeClient> {
    use std::os::windows::io::IntoRawHandle;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .share_mode(0)
        .custom_flags(FILE_FLAG_OVERLAPPED)
        .security_qos_flags(SECURITY_IDENTIFICATION)
        .open(name)?;
    // SAFETY: `file` owns a valid handle for the duration of the call.
    let kind = unsafe { GetFileType(file.as_raw_handle() as HANDLE) };
    if kind != FILE_TYPE_PIPE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is not a named pipe (file type {kind}); nothing was written to it",
                Path::new(name).display()
            ),
        ));
    }
    // SAFETY: the handle is a pipe we opened and own alone; ownership passes to tokio.
    unsafe { NamedPipeClient::from_raw_handle(file.into_raw_handle()) }
}

/// Refuses a pipe whose server process does not run as `user`.
fn check_server_user(client: &NamedPipeClient, endpoint: &Endpoint, user: &Sid) -> io::Result<()> {
    let refuse = |why: String| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "refusing to talk to {endpoint}: {why}. Another user may have created this pipe name first; set ZEROCLAW_SOCKET to a pipe name of your own"
            ),
        )
    };
    let mut pid = 0u32;
    // SAFETY: `client` owns a valid pipe handle for the duration of the call, and `pid` is
    // a valid place for the API to write a u32.
    if unsafe { GetNamedPipeServerProcessId(client.as_raw_handle() as HANDLE, &mut pid) } == 0 {
        let e = io::Error::last_os_error();
        return Err(refuse(format!("cannot tell which process serves it ({e})")));
    }
    let owner = Sid::of_process(pid).map_err(|e| {
        refuse(format!(
            "cannot tell which user runs its server, pid {pid} ({e})"
        ))
    })?;
    same_user(&owner, user).map_err(|why| refuse(format!("{why} (server pid {pid})")))
}

/// `Ok` if `server` and `ours` are one SID; otherwise says which users they are.
fn same_user(server: &Sid, ours: &Sid) -> Result<(), String> {
    if server == ours {
        return Ok(());
    }
    let name = |sid: &Sid| sid.text().unwrap_or_else(|_| "an unreadable SID".into());
    Err(format!(
        "its server runs as {}, not as you ({})",
        name(server),
        name(ours)
    ))
}

/// Adds what to do to the two errors a bad pipe name gives: 123 (ERROR_INVALID_NAME: not a
/// pipe name at all) and 206 (ERROR_FILENAME_EXCED_RANGE: over 256 characters).
fn explain_name_error(e: io::Error) -> io::Error {
    let hint = match e.raw_os_error() {
        Some(code) if code == ERROR_INVALID_NAME as i32 => format!(
            "{e}: a pipe name must look like {}NAME; set ZEROCLAW_SOCKET to one, e.g. {}my-zeroclaw",
            crate::endpoint::PIPE_PREFIX,
            crate::endpoint::PIPE_PREFIX
        ),
        Some(code) if code == ERROR_FILENAME_EXCED_RANGE as i32 => format!(
            "{e}: a pipe name may be at most {} characters, prefix included; set ZEROCLAW_SOCKET to a shorter one",
            crate::endpoint::PIPE_NAME_MAX
        ),
        _ => return e,
    };
    io::Error::new(e.kind(), hint)
}

/// Whether this process runs under Wine rather than Windows: Wine's ntdll exports
/// `wine_get_version`, which Windows' does not. For tests of what Wine does not do
/// (`FILE_FLAG_FIRST_PIPE_INSTANCE`, enforcing a pipe's DACL), which must say they are
/// skipped there rather than pass.
pub fn is_wine() -> bool {
    let ntdll = wide("ntdll.dll");
    // SAFETY: `ntdll` is NUL-terminated and outlives the call; ntdll is always loaded, and
    // the module handle is not reference-counted (nothing to release).
    let module = unsafe { GetModuleHandleW(ntdll.as_ptr()) };
    if module.is_null() {
        return false;
    }
    // SAFETY: `module` is a loaded module and the name is a NUL-terminated ASCII string.
    unsafe { GetProcAddress(module, c"wine_get_version".as_ptr().cast()) }.is_some()
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

/// A security identifier, copied into memory of our own.
pub(crate) struct Sid(Vec<u64>);

impl Sid {
    /// The user this process runs as.
    pub(crate) fn current_user() -> io::Result<Self> {
        // SAFETY: no preconditions; the result is a pseudo-handle that needs no closing.
        let process = unsafe { GetCurrentProcess() };
        Self::of_process_handle(process)
    }

    /// The user process `pid` runs as.
    pub(crate) fn of_process(pid: u32) -> io::Result<Self> {
        // SAFETY: OpenProcess has no memory preconditions; a null result is an error.
        let raw = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if raw.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: OpenProcess succeeded, so `raw` is an open handle that we alone own;
        // OwnedHandle closes it on drop.
        let process = unsafe { OwnedHandle::from_raw_handle(raw) };
        Self::of_process_handle(process.as_raw_handle() as HANDLE)
    }

    fn of_process_handle(process: HANDLE) -> io::Result<Self> {
        let mut raw: HANDLE = ptr::null_mut();
        // SAFETY: the caller passes a process handle valid for this call; `raw` is a valid
        // place for the token handle.
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
        // alive until the copy below is made.
        let user = unsafe { buf.as_ptr().cast::<TOKEN_USER>().read() };
        // SAFETY: `user.User.Sid` points to a SID inside `buf`, alive for the call.
        unsafe { Self::copy(user.User.Sid) }
    }

    /// A SID from its string form (`S-1-5-18`).
    #[cfg(test)]
    pub(crate) fn parse(text: &str) -> io::Result<Self> {
        use windows_sys::Win32::Security::Authorization::ConvertStringSidToSidW;
        let text = wide(text);
        let mut sid: PSID = ptr::null_mut();
        // SAFETY: `text` is NUL-terminated and outlives the call; `sid` is a valid out pointer.
        let ok = unsafe { ConvertStringSidToSidW(text.as_ptr(), &mut sid) };
        let owned = LocalBox(sid);
        if ok == 0 || owned.0.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: on success `sid` is a valid SID owned by `owned`, alive for the call.
        unsafe { Self::copy(owned.0) }
    }

    /// Copies the SID at `sid` into a buffer of our own.
    ///
    /// # Safety
    /// `sid` must point to a SID that stays valid for the duration of the call.
    unsafe fn copy(sid: PSID) -> io::Result<Self> {
        // SAFETY: the caller guarantees `sid` is readable; IsValidSid checks its structure
        // before GetLengthSid trusts it.
        if unsafe { IsValidSid(sid) } == 0 {
            return Err(io::Error::other("not a valid SID"));
        }
        // SAFETY: `sid` is a valid SID (checked above).
        let len = unsafe { GetLengthSid(sid) };
        let mut buf = vec![0u64; (len as usize).div_ceil(size_of::<u64>())];
        // SAFETY: `buf` is writable for at least `len` bytes; `sid` is valid for reading.
        if unsafe { CopySid(len, buf.as_mut_ptr().cast(), sid) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self(buf))
    }

    fn as_psid(&self) -> PSID {
        self.0.as_ptr().cast_mut().cast()
    }

    /// The string form, `S-1-5-21-...`.
    pub(crate) fn text(&self) -> io::Result<String> {
        let mut text: *mut u16 = ptr::null_mut();
        // SAFETY: `self` holds a valid SID (only ever built by `copy`); `text` is a valid
        // out pointer.
        let ok = unsafe { ConvertSidToStringSidW(self.as_psid(), &mut text) };
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
            .map_err(|_| io::Error::other("the SID string is not valid UTF-16"))
    }
}

impl std::fmt::Debug for Sid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.text() {
            Ok(text) => f.write_str(&text),
            Err(_) => f.write_str("<unreadable SID>"),
        }
    }
}

impl PartialEq for Sid {
    fn eq(&self, other: &Self) -> bool {
        // SAFETY: both hold valid SIDs (only ever built by `copy`), alive for the call.
        unsafe { EqualSid(self.as_psid(), other.as_psid()) != 0 }
    }
}

/// The current process user's SID as a string (`S-1-5-21-...`).
fn current_user_sid() -> io::Result<String> {
    Sid::current_user()?.text()
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
    use std::io::Write;
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

    fn skipped_under_wine(what: &str) -> bool {
        if is_wine() {
            // Straight to stderr: libtest captures `eprintln!` of a passing test, and a skip
            // must be seen.
            let _ = writeln!(
                io::stderr(),
                "SKIPPED under Wine, which does not do it (run on Windows): {what}"
            );
            return true;
        }
        false
    }

    /// The data dir lock refuses a second daemon on one data dir, whatever its pipe, naming
    /// the first one's pid and pipe (issue 12, defect 2; issue 28).
    #[tokio::test]
    async fn a_second_server_on_one_data_dir_is_refused_naming_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let first = paths(dir.path(), "dir-a");
        let claim = crate::claim_data_dir(&first).unwrap();
        let _server = crate::LocalListener::bind(&first, &claim).unwrap();
        assert!(first.data_dir.join(crate::LOCK_FILE).is_file());
        let other_pipe = paths(dir.path(), "dir-b");
        match crate::claim_data_dir(&other_pipe) {
            Err(BindError::DataDirInUse { path, holder, .. }) => {
                assert_eq!(path, first.data_dir);
                assert_eq!(
                    holder,
                    crate::Holder::Daemon {
                        pid: Some(std::process::id()),
                        endpoint: Some(first.endpoint.to_string())
                    }
                );
            }
            Err(e) => panic!("unexpected error: {e}"),
            Ok(_) => panic!("second claim succeeded"),
        }
        // `zeroclaw store` takes the same lock.
        assert!(matches!(
            crate::lock(&other_pipe, "zeroclaw store recover"),
            Err(BindError::DataDirInUse { .. })
        ));
    }

    /// A server that is gone leaves nothing stale: its pipe vanished with its handles, and
    /// its lock file, still there, is free.
    #[tokio::test]
    async fn a_server_that_is_gone_leaves_nothing_that_blocks_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path(), "again");
        let claim = crate::claim_data_dir(&paths).unwrap();
        drop(crate::LocalListener::bind(&paths, &claim).unwrap());
        drop(claim);
        assert!(paths.data_dir.join(crate::LOCK_FILE).is_file());
        let err = connect(&paths.endpoint).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        let claim = crate::claim_data_dir(&paths).unwrap();
        let _again = crate::LocalListener::bind(&paths, &claim).unwrap();
        let lock = std::fs::read_to_string(paths.data_dir.join(crate::LOCK_FILE)).unwrap();
        assert!(
            lock.starts_with(&format!("pid={}\n", std::process::id())),
            "{lock}"
        );
    }

    /// FILE_FLAG_FIRST_PIPE_INSTANCE: a second server on one pipe name (another data dir)
    /// is refused, naming the first's pid. Wine ignores the flag.
    #[tokio::test]
    async fn a_second_server_on_one_pipe_name_is_refused() {
        if skipped_under_wine("FILE_FLAG_FIRST_PIPE_INSTANCE (a second server on one pipe)") {
            return;
        }
        let one = tempfile::tempdir().unwrap();
        let two = tempfile::tempdir().unwrap();
        let first = paths(one.path(), "twice");
        let _server = PipeServer::bind(&first).unwrap();
        let second = paths(two.path(), "twice");
        match PipeServer::bind(&second) {
            Err(BindError::AlreadyRunning { endpoint, pid }) => {
                assert_eq!(endpoint, first.endpoint.to_string());
                assert_eq!(pid, Some(std::process::id()));
            }
            Err(e) => panic!("unexpected error: {e}"),
            Ok(_) => panic!("second bind succeeded"),
        }
    }

    /// The DACL set on the pipe reads back as exactly SYSTEM and this user, protected (no
    /// inherited entries, no Everyone).
    #[tokio::test]
    async fn the_pipe_acl_reads_back_as_system_and_this_user_only() {
        use windows_sys::Win32::Security::Authorization::{
            ConvertSecurityDescriptorToStringSecurityDescriptorW, GetSecurityInfo, SE_KERNEL_OBJECT,
        };
        use windows_sys::Win32::Security::{ACL, DACL_SECURITY_INFORMATION};
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path(), "acl");
        let server = PipeServer::bind(&paths).unwrap();
        let mut dacl: *mut ACL = ptr::null_mut();
        let mut sd: PSECURITY_DESCRIPTOR = ptr::null_mut();
        // SAFETY: the server's handle is open; the out pointers are valid; `sd` is freed
        // by the LocalBox below.
        let status = unsafe {
            GetSecurityInfo(
                server.next.as_raw_handle() as HANDLE,
                SE_KERNEL_OBJECT,
                DACL_SECURITY_INFORMATION,
                ptr::null_mut(),
                ptr::null_mut(),
                &mut dacl,
                ptr::null_mut(),
                &mut sd,
            )
        };
        let sd = LocalBox(sd);
        assert_eq!(status, 0, "GetSecurityInfo failed");
        let mut text: *mut u16 = ptr::null_mut();
        // SAFETY: `sd` is a valid descriptor; `text` is a valid out pointer, freed below.
        let ok = unsafe {
            ConvertSecurityDescriptorToStringSecurityDescriptorW(
                sd.0,
                SDDL_REVISION_1,
                DACL_SECURITY_INFORMATION,
                &mut text,
                ptr::null_mut(),
            )
        };
        let text = LocalBox(text.cast());
        assert_ne!(ok, 0);
        let p = text.0.cast::<u16>();
        let mut n = 0;
        // SAFETY: a NUL-terminated string owned by `text`.
        while unsafe { p.add(n).read() } != 0 {
            n += 1;
        }
        // SAFETY: the `n` units before the NUL.
        let sddl = String::from_utf16(unsafe { std::slice::from_raw_parts(p, n) }).unwrap();
        let user = current_user_sid().unwrap();
        assert!(sddl.starts_with("D:P("), "{sddl}");
        let aces: Vec<&str> = sddl["D:P".len()..].split_inclusive(')').collect();
        assert_eq!(aces.len(), 2, "{sddl}");
        assert!(aces.iter().all(|ace| ace.starts_with("(A;;")), "{sddl}");
        assert!(aces.iter().any(|ace| ace.ends_with(";;;SY)")), "{sddl}");
        assert!(
            aces.iter().any(|ace| ace.ends_with(&format!(";;;{user})"))),
            "{sddl}"
        );
    }

    /// Windows enforces a pipe's DACL: a pipe whose descriptor leaves this user out cannot
    /// be opened by it (what keeps other users off our pipe, which one user cannot show
    /// directly). Wine stores the DACL (the test above) but does not enforce it.
    #[tokio::test]
    async fn a_pipe_whose_acl_leaves_this_user_out_refuses_it() {
        if skipped_under_wine("DACL enforcement on a named pipe") {
            return;
        }
        let sddl = wide("D:P(A;;GA;;;SY)");
        let mut raw: PSECURITY_DESCRIPTOR = ptr::null_mut();
        // SAFETY: as in SecurityDescriptor::current_user_and_system.
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl.as_ptr(),
                SDDL_REVISION_1,
                &mut raw,
                ptr::null_mut(),
            )
        };
        assert_ne!(ok, 0);
        let sd = SecurityDescriptor(LocalBox(raw));
        let name = format!(r"\\.\pipe\zeroclaw-test-{}-system-only", std::process::id());
        let _server = create_instance(OsStr::new(&name), &sd, true).unwrap();
        let err = ClientOptions::new().open(&name).unwrap_err();
        assert_eq!(
            err.raw_os_error(),
            Some(ERROR_ACCESS_DENIED as i32),
            "{err}"
        );
    }

    /// Issue 12, defect 1: `ZEROCLAW_SOCKET='C:\zc-x\notes.txt'` made `zeroclaw status`
    /// overwrite the file with JSON-RPC frames. A name without the pipe prefix is refused
    /// naming the variable, and the file is never opened.
    #[tokio::test]
    async fn a_file_named_as_the_endpoint_is_refused_and_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join("notes.txt");
        std::fs::write(&notes, "my notes\r\n").unwrap();
        let err = connect(&Endpoint::new(&notes)).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        let text = err.to_string();
        assert!(
            text.contains("ZEROCLAW_SOCKET") && text.contains(r"\\.\pipe\"),
            "{text}"
        );
        assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\r\n");
    }

    /// Defect 1's second line: whatever the name, a handle that is not a pipe is closed
    /// before a byte is written (a file reached through the raw open, as a name that passes
    /// the prefix check but leads elsewhere would be).
    #[tokio::test]
    async fn a_handle_that_is_not_a_pipe_is_refused_before_any_byte() {
        let dir = tempfile::tempdir().unwrap();
        let notes = dir.path().join("notes.txt");
        std::fs::write(&notes, "my notes").unwrap();
        let err = open_pipe(notes.as_os_str()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        assert!(err.to_string().contains("not a named pipe"), "{err}");
        assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes");
    }

    /// Issue 12, defect 3: the client checks who serves the pipe. Under one user (Wine, CI)
    /// the check's logic is tested against this user's SID and others.
    #[test]
    fn the_server_user_check_accepts_this_user_only() {
        let me = Sid::current_user().unwrap();
        assert_eq!(Sid::of_process(std::process::id()).unwrap(), me);
        assert_eq!(same_user(&me, &Sid::current_user().unwrap()), Ok(()));
        for other in ["S-1-5-18", "S-1-1-0", "S-1-5-21-1-2-3-1001"] {
            let sid = Sid::parse(other).unwrap();
            assert_eq!(sid.text().unwrap(), other);
            let why = same_user(&sid, &me).unwrap_err();
            assert!(
                why.contains(other) && why.contains(&me.text().unwrap()),
                "{why}"
            );
        }
    }

    /// The whole check on a real pipe: the client that expects another user (SYSTEM) as the
    /// server refuses ours, and one that expects this user accepts it.
    #[tokio::test]
    async fn a_pipe_served_by_another_user_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path(), "owner");
        let mut server = PipeServer::bind(&paths).unwrap();
        let system = Sid::parse("S-1-5-18").unwrap();
        let err = connect_as(&paths.endpoint, &system).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{err}");
        let text = err.to_string();
        assert!(
            text.contains("S-1-5-18") && text.contains("ZEROCLAW_SOCKET"),
            "{text}"
        );
        // The refused client's instance is used up; the next one is ours.
        let _refused = server.accept().await;
        let mut ok = connect(&paths.endpoint).await.unwrap();
        let mut accepted = server.accept().await.unwrap();
        ok.write_all(b"hi\n").await.unwrap();
        let mut buf = [0u8; 3];
        accepted.stream.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"hi\n");
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

//! The part that runs in the child, between fork and exec.
//!
//! The parent may be multi-threaded (tokio): in the forked child another thread may have
//! held the allocator's lock at the fork, so allocating can deadlock. Everything here is a
//! raw system call on memory the parent prepared; errors are `io::Error::from_raw_os_error`
//! (no allocation). That is also why the crates are not called here: `landlock`'s
//! `RulesetCreated::restrict_self` builds status values and may build errors on the way,
//! and `seccompiler::apply_filter`'s error type can hold a `String`; the two system calls
//! they end in (`landlock_restrict_self`, `seccomp(SECCOMP_SET_MODE_FILTER)`) are made
//! directly, on the ruleset fd and the programs the crates built in the parent.
//!
//! Order, and why:
//! 0. Every fd above stderr is marked close-on-exec: an fd the daemon opened without
//!    `O_CLOEXEC` (a library's mistake) would otherwise reach the command, already open,
//!    past every path rule (the database, a socket).
//! 1. `unshare(CLONE_NEWUSER | CLONE_NEWNS)`, then the maps (uid and gid to themselves,
//!    `setgroups` denied as the kernel requires for an unprivileged gid map): the child
//!    gets a mount namespace of its own, where it may mount.
//! 2. Cover each hidden path: an empty read-only tmpfs over a directory, `/dev/null` bound
//!    over anything else (the socket). The new namespace's mounts are slaves of the
//!    daemon's, so nothing propagates back.
//! 3. `chdir` to the working directory again, so the command's cwd is seen through the
//!    covers, not the directory entered before them.
//! 4. Drop the controlling terminal (`TIOCNOTTY`), so `/dev/tty` reaches no terminal.
//! 5. `no_new_privs`, then drop every capability (bounding set, ambient, then effective,
//!    permitted and inheritable): the tests run as root, and a root command would
//!    otherwise keep `CAP_SYS_ADMIN` and the rest across exec.
//! 6. `landlock_restrict_self`: from here on, no mount or unmount either (Landlock forbids
//!    changing the mount topology), so the covers cannot be lifted.
//! 7. The seccomp programs, last, so they cannot get in the way of the steps above.
//!
//! Landlock domains, seccomp filters, `no_new_privs` and the dropped capabilities are all
//! inherited across fork and exec and cannot be undone, so everything the command starts
//! (`setsid`, double forks, background jobs) runs under them too.

use std::io;

use super::Setup;

/// The step a child failed at, reported to the parent on the setup's pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    CloseFds = 9,
    Unshare = 1,
    Maps = 2,
    Cover = 3,
    Chdir = 4,
    NoNewPrivs = 5,
    Capabilities = 6,
    Landlock = 7,
    Seccomp = 8,
}

impl Step {
    pub(crate) fn from_byte(b: u8) -> Option<Step> {
        [
            Step::CloseFds,
            Step::Unshare,
            Step::Maps,
            Step::Cover,
            Step::Chdir,
            Step::NoNewPrivs,
            Step::Capabilities,
            Step::Landlock,
            Step::Seccomp,
        ]
        .into_iter()
        .find(|s| *s as u8 == b)
    }
}

/// `capget`/`capset`'s header and data (`linux/capability.h`, version 3: two data words).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const CAPABILITY_VERSION_3: u32 = 0x2008_0522;
/// Capabilities are numbered below 64 (the kernel's last is in `cap_last_cap`, 40 today).
const CAP_LIMIT: libc::c_ulong = 64;

impl Setup {
    /// Applies the sandbox to the calling process, which must be the freshly forked,
    /// single-threaded child. Async-signal-safe: see the module doc.
    pub(crate) fn apply(&self) -> io::Result<()> {
        // SAFETY: marks every fd above stderr close-on-exec (Linux 5.11; Landlock ABI 3
        // needs 6.2).
        self.check(Step::CloseFds, 0, unsafe {
            libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            )
        })?;
        if let Some(ns) = &self.namespace {
            // SAFETY: plain system calls on C strings and buffers owned by `self`.
            unsafe {
                self.check(
                    Step::Unshare,
                    0,
                    libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS).into(),
                )?;
                self.write_file(c"/proc/self/setgroups", b"deny")?;
                self.write_file(c"/proc/self/uid_map", &ns.uid_map)?;
                self.write_file(c"/proc/self/gid_map", &ns.gid_map)?;
                for (i, cover) in ns.covers.iter().enumerate() {
                    let index = u8::try_from(i).unwrap_or(u8::MAX);
                    let rc = if cover.dir {
                        libc::mount(
                            c"zeroclaw-hidden".as_ptr(),
                            cover.target.as_ptr(),
                            c"tmpfs".as_ptr(),
                            libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                            c"mode=0555,size=4k".as_ptr().cast(),
                        )
                    } else {
                        libc::mount(
                            c"/dev/null".as_ptr(),
                            cover.target.as_ptr(),
                            std::ptr::null(),
                            libc::MS_BIND,
                            std::ptr::null(),
                        )
                    };
                    self.check(Step::Cover, index, rc.into())?;
                }
                self.check(Step::Chdir, 0, libc::chdir(self.cwd.as_ptr()).into())?;
            }
        }
        detach_terminal();
        // SAFETY: prctl with integer arguments.
        self.check(Step::NoNewPrivs, 0, unsafe {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0).into()
        })?;
        self.drop_capabilities()?;
        // SAFETY: the ruleset fd is open (owned by `self`); flags 0.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_landlock_restrict_self,
                std::os::fd::AsRawFd::as_raw_fd(&self.ruleset),
                0u32,
            )
        };
        self.check(Step::Landlock, 0, rc)?;
        for program in &self.filters {
            let prog = libc::sock_fprog {
                // At most 4096 instructions: seccompiler refuses longer programs.
                len: u16::try_from(program.len()).unwrap_or(u16::MAX),
                filter: program.as_ptr().cast_mut(),
            };
            // SAFETY: `prog` points at a program owned by `self`; the kernel copies it.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    0u32,
                    &prog as *const libc::sock_fprog,
                )
            };
            self.check(Step::Seccomp, 0, rc)?;
        }
        Ok(())
    }

    /// Drops every capability: the bounding set (needs `CAP_SETPCAP`; a process without
    /// it has no capability to lose, which `capget` confirms), the ambient set, and the
    /// effective, permitted and inheritable sets.
    fn drop_capabilities(&self) -> io::Result<()> {
        for cap in 0..CAP_LIMIT {
            // SAFETY: prctl with integer arguments.
            if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
                match errno() {
                    // Past the kernel's last capability.
                    libc::EINVAL => break,
                    libc::EPERM if !has_capabilities() => break,
                    e => return Err(self.fail(Step::Capabilities, 0, e)),
                }
            }
        }
        // SAFETY: prctl with integer arguments. EINVAL: a kernel without ambient sets.
        if unsafe {
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL,
                0,
                0,
                0,
            )
        } != 0
            && errno() != libc::EINVAL
        {
            return Err(self.fail(Step::Capabilities, 1, errno()));
        }
        let mut header = CapHeader {
            version: CAPABILITY_VERSION_3,
            pid: 0,
        };
        let none = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        // SAFETY: header and data are valid for capset's version 3 layout.
        let rc = unsafe { libc::syscall(libc::SYS_capset, &mut header, none.as_ptr()) };
        self.check(Step::Capabilities, 2, rc)
    }

    /// Writes `data` to `path` in one `write`, as the map files require.
    ///
    /// # Safety
    /// Async-signal-safe system calls only.
    unsafe fn write_file(&self, path: &std::ffi::CStr, data: &[u8]) -> io::Result<()> {
        // SAFETY: `path` is NUL-terminated; `data` is a valid buffer.
        unsafe {
            let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(self.fail(Step::Maps, 0, errno()));
            }
            let n = libc::write(fd, data.as_ptr().cast(), data.len());
            let e = errno();
            libc::close(fd);
            if usize::try_from(n).ok() != Some(data.len()) {
                return Err(self.fail(Step::Maps, 1, if n < 0 { e } else { libc::EIO }));
            }
        }
        Ok(())
    }

    /// `rc` of a system call (0, or -1 with errno): on failure, report `step`, return errno.
    fn check(&self, step: Step, index: u8, rc: libc::c_long) -> io::Result<()> {
        if rc != 0 {
            Err(self.fail(step, index, errno()))
        } else {
            Ok(())
        }
    }

    /// Reports `step` to the parent (best effort) and makes the error for std, which sends
    /// the errno to the parent as the spawn's error.
    fn fail(&self, step: Step, index: u8, errno: i32) -> io::Error {
        let report = [step as u8, index];
        // SAFETY: write on an fd owned by `self`. Non-blocking: a full pipe loses the report.
        unsafe {
            libc::write(
                std::os::fd::AsRawFd::as_raw_fd(&self.report_write),
                report.as_ptr().cast(),
                report.len(),
            );
        }
        io::Error::from_raw_os_error(errno)
    }
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Whether this process holds any capability (`capget`).
fn has_capabilities() -> bool {
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: header and data are valid for capget's version 3 layout.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) };
    rc != 0 || data.iter().any(|d| d.permitted != 0 || d.effective != 0)
}

/// Leaves the controlling terminal, if there is one and this process does not lead its
/// session (where `TIOCNOTTY` would hang up the whole foreground group). Best effort: with
/// no terminal there is nothing to leave.
fn detach_terminal() {
    // SAFETY: plain system calls; the fd is closed before returning.
    unsafe {
        if libc::getsid(0) == libc::getpid() {
            return;
        }
        let fd = libc::open(
            c"/dev/tty".as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        if fd >= 0 {
            libc::ioctl(fd, libc::TIOCNOTTY);
            libc::close(fd);
        }
    }
}

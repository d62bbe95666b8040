//! Linux: Landlock + seccomp, and a user+mount namespace where the kernel allows one.
//!
//! Everything is made here, in the parent ([`Setup::new`]): the paths opened for the
//! Landlock rules and the ruleset itself, the seccomp programs, the uid/gid map lines and
//! the mount targets as C strings. The child ([`child`]) only makes system calls on them.

mod child;
pub(crate) mod filter;
pub(crate) mod probe;
mod rules;

use std::ffi::CString;
use std::fmt;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::plan::Plan;
use crate::{Error, Support};

/// The newest Landlock ABI this crate is tested with; a newer kernel is used at this level,
/// so its behaviour is the tested one.
pub(crate) const MAX_ABI: u32 = 7;

/// One command's sandbox, ready to apply in the child.
pub(crate) struct Setup {
    namespace: Option<Namespace>,
    /// The working directory, entered again once the covers are mounted so the command sees
    /// it through them.
    cwd: CString,
    ruleset: OwnedFd,
    filters: Vec<Vec<libc::sock_filter>>,
    /// The write end of a pipe on which a failing child names its step (two bytes).
    report_write: OwnedFd,
    report_read: OwnedFd,
}

/// The user+mount namespace part: the maps to write and the paths to cover.
struct Namespace {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    covers: Vec<Cover>,
}

/// A hidden path, covered in the child's mount namespace.
struct Cover {
    target: CString,
    path: PathBuf,
    /// A directory gets an empty read-only tmpfs; anything else (the socket) `/dev/null`.
    dir: bool,
}

impl Setup {
    pub(crate) fn new(plan: &Plan, support: &Support) -> Result<Setup, Error> {
        let abi = support.landlock_abi().unwrap_or(0).min(MAX_ABI);
        let userns = support.user_namespaces();
        let ruleset = rules::ruleset(plan, abi, userns)?;
        let filters = filter::programs(plan.network, userns)?;
        let namespace = if userns {
            // SAFETY: geteuid and getegid cannot fail.
            let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
            let mut covers = Vec::new();
            for path in &plan.hidden {
                covers.push(Cover {
                    target: c_path(path)?,
                    path: path.clone(),
                    dir: path.is_dir(),
                });
            }
            Some(Namespace {
                uid_map: format!("{uid} {uid} 1\n").into_bytes(),
                gid_map: format!("{gid} {gid} 1\n").into_bytes(),
                covers,
            })
        } else {
            None
        };
        let (report_read, report_write) = rustix::pipe::pipe_with(
            rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
        )
        .map_err(|e| Error::Setup {
            what: "creating the report pipe".into(),
            source: e.into(),
        })?;
        Ok(Setup {
            namespace,
            cwd: c_path(&plan.cwd)?,
            ruleset,
            filters,
            report_write,
            report_read,
        })
    }

    /// The step a child reported before failing, in words, if one did.
    pub(crate) fn failed_step(&self) -> Option<String> {
        let mut buf = [0u8; 64];
        let n = rustix::io::read(&self.report_read, &mut buf).ok()?;
        let report = buf.get(..n)?.chunks_exact(2).next_back()?;
        let (step, index) = (report[0], usize::from(report[1]));
        let cover = |i: usize| {
            self.namespace
                .as_ref()
                .and_then(|ns| ns.covers.get(i))
                .map_or_else(|| "?".into(), |c| c.path.display().to_string())
        };
        Some(match child::Step::from_byte(step)? {
            child::Step::CloseFds => "closing the parent's file descriptors".into(),
            child::Step::Unshare => "creating the user and mount namespaces".into(),
            child::Step::Maps => "writing the uid and gid maps".into(),
            child::Step::Cover => format!("covering the hidden path {}", cover(index)),
            child::Step::Chdir => "entering the working directory".into(),
            child::Step::NoNewPrivs => "setting no_new_privs".into(),
            child::Step::Capabilities => "dropping capabilities".into(),
            child::Step::Landlock => "enforcing the Landlock ruleset".into(),
            child::Step::Seccomp => "installing the seccomp filter".into(),
        })
    }
}

impl fmt::Debug for Setup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Setup")
            .field("userns", &self.namespace.is_some())
            .field(
                "covers",
                &self
                    .namespace
                    .iter()
                    .flat_map(|ns| ns.covers.iter().map(|c| &c.path))
                    .collect::<Vec<_>>(),
            )
            .field("seccomp_programs", &self.filters.len())
            .finish_non_exhaustive()
    }
}

fn c_path(path: &Path) -> Result<CString, Error> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| Error::Setup {
        what: format!("the path {} holds a NUL byte", path.display()),
        source: std::io::ErrorKind::InvalidInput.into(),
    })
}

//! Resource limits set on the daemon process between fork and exec, to make it run out of
//! file descriptors or disk (file size) on purpose.

//! Unix only: on Windows a `Limits` exists (so helpers that take one compile) and must be
//! the default.

#[cfg(unix)]
use std::os::unix::process::CommandExt;
use std::process::Command;

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    /// RLIMIT_NOFILE (soft and hard).
    pub nofile: Option<u64>,
    /// A lower soft RLIMIT_NOFILE under `nofile` (the hard limit then).
    pub nofile_soft: Option<u64>,
    /// RLIMIT_FSIZE in bytes (soft and hard): writes past it fail.
    pub fsize: Option<u64>,
    /// Sets SIGXFSZ to SIG_IGN (an ignored disposition survives exec), so a write past
    /// `fsize` fails with EFBIG instead of killing the process.
    pub ignore_sigxfsz: bool,
}

#[cfg(unix)]
unsafe extern "C" {
    /// libc's `signal(2)`; std links libc, and it is async-signal-safe.
    fn signal(signum: i32, handler: usize) -> usize;
}
#[cfg(unix)]
const SIG_IGN: usize = 1;
#[cfg(unix)]
const SIG_ERR: usize = usize::MAX;

impl Limits {
    /// Makes `cmd` apply these limits in the child; no limits leave `cmd` as it is.
    pub fn set_on(self, cmd: &mut Command) {
        if self == Self::default() {
            return;
        }
        #[cfg(windows)]
        panic!("resource limits are set on Unix only: {self:?} for {cmd:?}");
        #[cfg(unix)]
        // SAFETY: the closure only makes raw syscalls (setrlimit, signal); it allocates
        // nothing and takes no locks.
        unsafe {
            cmd.pre_exec(move || self.apply());
        }
    }

    #[cfg(unix)]
    fn apply(self) -> std::io::Result<()> {
        use rustix::process::{Resource, Rlimit, setrlimit};
        let set = |resource, soft: Option<u64>, n| {
            setrlimit(
                resource,
                Rlimit {
                    current: Some(soft.unwrap_or(n)),
                    maximum: Some(n),
                },
            )
            .map_err(std::io::Error::from)
        };
        if let Some(n) = self.nofile {
            set(Resource::Nofile, self.nofile_soft, n)?;
        }
        if let Some(n) = self.fsize {
            set(Resource::Fsize, None, n)?;
        }
        if self.ignore_sigxfsz {
            // SAFETY: called in the child between fork and exec; signal() is
            // async-signal-safe and SIG_IGN installs no handler code.
            let previous = unsafe { signal(rustix::process::Signal::XFSZ.as_raw(), SIG_IGN) };
            if previous == SIG_ERR {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

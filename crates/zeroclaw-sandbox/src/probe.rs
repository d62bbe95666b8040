//! Finding what this machine offers the sandbox: on Linux by asking the kernel and trying
//! (`linux/probe.rs`); elsewhere nothing.

use crate::Support;
#[cfg(not(target_os = "linux"))]
use crate::support::NOT_IMPLEMENTED;

impl Support {
    /// Probes this machine (Linux: Landlock's ABI, seccomp, and a trial child that applies
    /// a whole sandbox, with a user namespace and then without). A few milliseconds: call
    /// it once and keep the result.
    pub fn probe() -> Support {
        #[cfg(target_os = "linux")]
        {
            crate::linux::probe::probe()
        }
        #[cfg(not(target_os = "linux"))]
        {
            Support::unavailable(NOT_IMPLEMENTED)
        }
    }
}

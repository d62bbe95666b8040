//! The reaper: the shell's process group, recorded while it runs and killed when the call
//! times out, is cancelled or is dropped mid-run.

use std::process::ExitStatus;

use tokio::process::Child;

use super::super::{ToolContext, orphans};

/// Kills the whole process group (Unix) or job (Windows, `process_tree.rs`), then reaps the shell.
pub(super) async fn kill_and_reap(
    child: &mut Child,
    guard: &mut GroupGuard,
) -> std::io::Result<ExitStatus> {
    guard.kill();
    // Also the shell itself (the only thing there is to kill without process groups);
    // it is not reaped yet, so its pid cannot have been reused.
    let _ = child.start_kill();
    let status = child.wait().await;
    guard.disarm();
    status
}

/// Kills the child's process group on drop unless disarmed (after the shell is reaped,
/// the group id may be reused, so it must not be signalled any more).
/// While armed, the group is also recorded on disk, so the next daemon kills it if this
/// one dies without doing so (`orphans.rs`).
pub(super) struct GroupGuard {
    #[cfg(unix)]
    pgid: Option<rustix::process::Pid>,
    /// Windows: the job the shell and its descendants are in (`process_tree.rs`).
    #[cfg(windows)]
    job: Option<crate::process_tree::Job>,
    record: orphans::Record,
}

impl GroupGuard {
    pub(super) fn new(child: &Child, ctx: &ToolContext) -> Self {
        let record = match child.id() {
            Some(id) => orphans::Record::new(ctx.process_records.as_deref(), id),
            None => orphans::Record::new(None, 0),
        };
        #[cfg(unix)]
        {
            let pgid = child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .and_then(rustix::process::Pid::from_raw);
            Self { pgid, record }
        }
        #[cfg(windows)]
        {
            let job = crate::process_tree::Job::holding(child);
            Self { job, record }
        }
        #[cfg(not(any(unix, windows)))]
        {
            Self { record }
        }
    }

    fn kill(&self) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid {
            // Found while the shell (the group's leader) is alive: its descendants that
            // left the group (`setsid`) are reached through it only.
            #[cfg(target_os = "linux")]
            let strays = super::super::descendants::stop_all(pgid);
            if let Err(e) = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL)
            {
                tracing::debug!(pgid = pgid.as_raw_nonzero().get(), error = %e, "killing bash process group");
            }
            #[cfg(target_os = "linux")]
            super::super::descendants::kill(&strays);
        }
        #[cfg(windows)]
        if let Some(job) = &self.job {
            job.kill();
        }
    }

    pub(super) fn disarm(&mut self) {
        #[cfg(unix)]
        {
            self.pgid = None;
        }
        #[cfg(windows)]
        {
            self.job = None;
        }
        self.record.clear();
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

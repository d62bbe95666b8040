//! Windows has no process groups: the processes a `bash` call's shell (or a hook's) starts
//! are reached through a job object instead. The shell is put in a job of its own as soon
//! as it is spawned, its descendants join it as they start, and killing the call kills the
//! job: the whole tree, as `kill_process_group` does on Unix.
//!
//! The job is not created with kill-on-close: like a Unix process group that is no longer
//! signalled once its shell is reaped, a job whose handle is dropped after a normal end
//! leaves what the command left running in the background alone. A process the shell
//! starts in the instant before it joins the job escapes it (the shell is not spawned
//! suspended: the standard library's spawn does not give the thread to resume).

use std::os::windows::io::RawHandle;
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, TerminateJobObject,
};

/// A job holding one spawned process and what it starts.
pub(crate) struct Job(HANDLE);

// SAFETY: a job object's handle may be used and closed from any thread.
unsafe impl Send for Job {}
// SAFETY: as above; `TerminateJobObject` needs no exclusive access.
unsafe impl Sync for Job {}

impl Job {
    /// A new job holding `child`; `None` (logged) if Windows refuses, and then only the
    /// shell itself can be killed.
    pub(crate) fn holding(child: &tokio::process::Child) -> Option<Job> {
        let process: RawHandle = child.raw_handle()?;
        // SAFETY: no attributes, no name: an anonymous job; the handle is checked below.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            tracing::debug!(error = %std::io::Error::last_os_error(), "no job object for a command");
            return None;
        }
        let job = Job(handle);
        // SAFETY: both handles are open: the job's just made, the child's owned by `child`,
        // which is not reaped while borrowed here.
        if unsafe { AssignProcessToJobObject(job.0, process as HANDLE) } == 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "a command could not join its job object");
            return None;
        }
        Some(job)
    }

    /// Kills every process in the job.
    pub(crate) fn kill(&self) {
        // SAFETY: the handle is open until `drop`.
        if unsafe { TerminateJobObject(self.0, 1) } == 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "killing a command's job object");
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: the handle is open and closed once, here.
        unsafe { CloseHandle(self.0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};
    use windows_sys::Win32::System::JobObjects::{
        JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JobObjectBasicAccountingInformation,
        QueryInformationJobObject,
    };

    /// The processes alive in the job.
    fn active(job: &Job) -> u32 {
        // SAFETY: plain data, all zeroes valid.
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: the handle is open; the buffer is the class's struct, its size given.
        let ok = unsafe {
            QueryInformationJobObject(
                job.0,
                JobObjectBasicAccountingInformation,
                (&raw mut info).cast(),
                size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
                std::ptr::null_mut(),
            )
        };
        assert_ne!(ok, 0, "{}", std::io::Error::last_os_error());
        info.ActiveProcesses
    }

    /// Waits until `done`, yielding between looks; fails past a hang guard.
    fn until(what: &str, mut done: impl FnMut() -> bool) {
        let start = Instant::now();
        while !done() {
            assert!(start.elapsed() < Duration::from_secs(60), "never: {what}");
            std::thread::yield_now();
        }
    }

    /// Set on the helper below when the test starts it as a grandchild.
    const GRANDCHILD: &str = "ZC_PROCESS_TREE_GRANDCHILD";

    /// Not a test: the grandchild of the test below, run through the test binary itself. It
    /// says it runs once Wine has started it, then waits to be killed.
    #[test]
    #[ignore = "a helper process of killing_the_job_ends_the_shell_and_what_it_started"]
    fn grandchild() {
        if std::env::var_os(GRANDCHILD).is_none() {
            return;
        }
        println!("grandchild running");
        std::thread::sleep(Duration::from_secs(120));
    }

    #[tokio::test]
    async fn killing_the_job_ends_the_shell_and_what_it_started() {
        use tokio::io::AsyncBufReadExt;
        // The job is killed only once the grandchild says it runs: a process killed while
        // Wine is still starting it stays counted in its job for good (seen in CI), and
        // Wine's own `ping` cannot say so (it buffers its output until it exits).
        let exe = std::env::current_exe().unwrap();
        let mut child = tokio::process::Command::new("cmd")
            .arg("/C")
            .raw_arg(format!(
                "\"\"{}\" --ignored --exact process_tree::tests::grandchild --nocapture\"",
                exe.display()
            ))
            .env(GRANDCHILD, "1")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let job = Job::holding(&child).expect("a job object");
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        loop {
            let line = lines.next_line().await.unwrap();
            let line = line.expect("the grandchild ended before it said it runs");
            if line.contains("grandchild running") {
                break;
            }
        }
        assert!(
            active(&job) >= 2,
            "the shell and the grandchild are in the job"
        );
        job.kill();
        child.wait().await.unwrap();
        until("every process of the job ended", || active(&job) == 0);
    }
}

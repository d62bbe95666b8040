//! Process groups of running bash commands, recorded on disk so that a daemon killed with
//! SIGKILL (or a crash) does not leave them running: the next daemon kills what is left.
//!
//! One file per running group in `<data dir>/tool-processes/`, named by the group id and
//! holding the leader's start time (`/proc/<pid>/stat`, field 22). The start time tells a
//! leader that is still ours from a new process that got the same pid; a group whose
//! leader is gone can still be signalled safely, because the kernel does not hand out a pid
//! that is still some group's id. Linux only (it needs `/proc`); elsewhere nothing is
//! recorded and nothing is reaped.

use std::path::{Path, PathBuf};

/// The directory the records live in, under the daemon's data dir.
pub fn dir(data_dir: &Path) -> PathBuf {
    data_dir.join("tool-processes")
}

/// A recorded running group; the record is removed when this is dropped.
#[derive(Debug)]
pub struct Record {
    path: Option<PathBuf>,
}

impl Record {
    /// Records group `pgid` (whose leader is the process `pgid`) in `dir`. A failure to
    /// record is logged and otherwise ignored: the command still runs.
    pub fn new(dir: Option<&Path>, pgid: u32) -> Self {
        let path = dir.and_then(|dir| {
            let start = start_time(pgid)?;
            let path = dir.join(pgid.to_string());
            let written = std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(&path, start.to_string()));
            match written {
                Ok(()) => Some(path),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "could not record a bash process group; it will not be cleaned up after a crash");
                    None
                }
            }
        });
        Self { path }
    }

    /// The group is over (reaped or killed): forget it.
    pub fn clear(&mut self) {
        if let Some(path) = self.path.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        self.clear();
    }
}

/// Kills every group a previous daemon recorded and did not clear, and removes the
/// records. Returns how many groups were signalled.
pub fn reap(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut killed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let recorded = std::fs::read_to_string(&path)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok());
        let pgid = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok());
        if let (Some(pgid), Some(recorded)) = (pgid, recorded)
            && still_ours(pgid, recorded)
            && kill_group(pgid)
        {
            killed += 1;
        }
        let _ = std::fs::remove_file(&path);
    }
    killed
}

/// Whether group `pgid` may be signalled: its leader is the recorded process, or it has no
/// leader any more (then its members are still the original group's).
fn still_ours(pgid: u32, recorded: u64) -> bool {
    match start_time(pgid) {
        Some(now) => now == recorded,
        None => true,
    }
}

#[cfg(target_os = "linux")]
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces; count from after it.
    let after_name = &stat[stat.rfind(')')? + 1..];
    // Fields from 3 on; the start time is field 22.
    after_name.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(not(target_os = "linux"))]
fn start_time(_pid: u32) -> Option<u64> {
    None
}

#[cfg(target_os = "linux")]
fn kill_group(pgid: u32) -> bool {
    let Some(pgid) = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL).is_ok()
}

#[cfg(not(target_os = "linux"))]
fn kill_group(_pgid: u32) -> bool {
    false
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    fn gone(pid: u32) -> bool {
        // Dead, or a zombie nobody has reaped yet.
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat[stat.rfind(')').unwrap() + 1..]
                .trim_start()
                .starts_with('Z'),
        }
    }

    /// `sleep 300` leading its own process group.
    fn sleeper() -> std::process::Child {
        Command::new("sleep")
            .arg("300")
            .process_group(0)
            .spawn()
            .unwrap()
    }

    #[test]
    fn a_recorded_group_is_killed_and_a_reused_pid_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = sleeper();
        let pid = child.id();
        let record = Record::new(Some(dir.path()), pid);
        assert!(dir.path().join(pid.to_string()).exists());
        // As a SIGKILLed daemon would: the record stays behind.
        std::mem::forget(record);
        // A record whose start time does not match is someone else's process: spared.
        let mut other = sleeper();
        std::fs::write(dir.path().join(other.id().to_string()), "1").unwrap();

        assert_eq!(reap(dir.path()), 1);
        child.wait().unwrap();
        assert!(gone(pid));
        assert!(
            !gone(other.id()),
            "a process with a different start time was killed"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        other.kill().unwrap();
        other.wait().unwrap();
    }

    #[test]
    fn a_cleared_record_leaves_nothing_to_reap() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = sleeper();
        let mut record = Record::new(Some(dir.path()), child.id());
        record.clear();
        assert_eq!(reap(dir.path()), 0);
        assert!(!gone(child.id()));
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

//! Process groups of running bash commands, recorded on disk so that a daemon killed with
//! SIGKILL (or a crash) does not leave them running: the next daemon kills what is left.
//!
//! One file per running group in `<data dir>/tool-processes/`, named by the group id and
//! holding the boot id, the leader's start time (`/proc/<pid>/stat`, field 22) and the
//! recording daemon's pid and start time. A group is killed only when its leader is still
//! the recorded process (same boot, same start time: never a stranger that got the pid),
//! and its daemon is gone (a daemon sharing the data dir keeps its commands). A group whose
//! leader has exited is left alone, since its remaining members cannot be told from a
//! stranger's. Linux only (it needs `/proc`); elsewhere nothing is recorded or reaped.

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
            let entry = Entry {
                boot: boot_id()?,
                leader_start: start_time(pgid)?,
                owner: std::process::id(),
                owner_start: start_time(std::process::id())?,
            };
            let path = dir.join(pgid.to_string());
            let written = std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(&path, entry.to_text()));
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
    let boot = boot_id();
    for file in entries.flatten() {
        let path = file.path();
        let pgid = file
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok());
        let entry = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| Entry::parse(&text));
        if let (Some(pgid), Some(entry)) = (pgid, entry) {
            if entry.owner_alive() {
                // Another daemon on this data dir is running it: its record, not ours.
                continue;
            }
            if boot.as_deref() == Some(entry.boot.as_str())
                && start_time(pgid) == Some(entry.leader_start)
                && kill_group(pgid)
            {
                killed += 1;
            }
        }
        let _ = std::fs::remove_file(&path);
    }
    killed
}

/// One record's contents.
struct Entry {
    boot: String,
    leader_start: u64,
    owner: u32,
    owner_start: u64,
}

impl Entry {
    fn to_text(&self) -> String {
        format!(
            "{} {} {} {}\n",
            self.boot, self.leader_start, self.owner, self.owner_start
        )
    }

    fn parse(text: &str) -> Option<Self> {
        let mut fields = text.split_whitespace();
        let entry = Entry {
            boot: fields.next()?.to_owned(),
            leader_start: fields.next()?.parse().ok()?,
            owner: fields.next()?.parse().ok()?,
            owner_start: fields.next()?.parse().ok()?,
        };
        fields.next().is_none().then_some(entry)
    }

    /// Whether the daemon that wrote the record still runs (not this one: it is new).
    fn owner_alive(&self) -> bool {
        self.owner != std::process::id() && start_time(self.owner) == Some(self.owner_start)
    }
}

#[cfg(target_os = "linux")]
fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id = id.trim();
    (!id.is_empty() && !id.contains(char::is_whitespace)).then(|| id.to_owned())
}

#[cfg(not(target_os = "linux"))]
fn boot_id() -> Option<String> {
    None
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
        let other = sleeper();
        let stale = Entry {
            boot: boot_id().unwrap(),
            leader_start: 1,
            owner: u32::MAX,
            owner_start: 1,
        };
        std::fs::write(dir.path().join(other.id().to_string()), stale.to_text()).unwrap();
        // So is a process recorded during another boot.
        let earlier = sleeper();
        let before_reboot = Entry {
            boot: "another-boot".into(),
            leader_start: start_time(earlier.id()).unwrap(),
            owner: u32::MAX,
            owner_start: 1,
        };
        std::fs::write(
            dir.path().join(earlier.id().to_string()),
            before_reboot.to_text(),
        )
        .unwrap();

        assert_eq!(reap(dir.path()), 1);
        child.wait().unwrap();
        assert!(gone(pid));
        assert!(
            !gone(other.id()),
            "a process with a different start time was killed"
        );
        assert!(
            !gone(earlier.id()),
            "a record from another boot was acted on"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        for mut spared in [other, earlier] {
            spared.kill().unwrap();
            spared.wait().unwrap();
        }
    }

    #[test]
    fn a_group_another_live_daemon_recorded_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = sleeper();
        // Recorded by a live process that is not us (the test's parent stands in for it).
        let parent = std::os::unix::process::parent_id();
        let entry = Entry {
            boot: boot_id().unwrap(),
            leader_start: start_time(child.id()).unwrap(),
            owner: parent,
            owner_start: start_time(parent).unwrap(),
        };
        std::fs::write(dir.path().join(child.id().to_string()), entry.to_text()).unwrap();
        assert_eq!(reap(dir.path()), 0);
        assert!(!gone(child.id()));
        child.kill().unwrap();
        child.wait().unwrap();
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

//! The processes a bash command started that left its process group (`setsid`, a job
//! control shell's own groups), found so a time-out or a cancellation kills them too.
//!
//! Linux: `/proc/<pid>/stat` gives each process's parent; the descendants of the shell are
//! collected by that chain while the shell is still alive (once it dies its children are
//! re-parented, and the chain is gone). Each one found is stopped (SIGSTOP) at once, so it
//! cannot start more, and the walk is repeated until it finds nothing new; then the caller
//! kills them. Not covered: a process whose parent had already exited before the walk (a
//! double fork, `setsid -f`, a daemon): it belongs to init or a subreaper by then.

use rustix::process::{Pid, Signal, kill_process};
use std::collections::{HashMap, HashSet};

/// The descendants of `shell`, each already stopped; kill them with [`kill`].
pub(super) fn stop_all(shell: Pid) -> Vec<Pid> {
    let mut stopped: HashSet<i32> = HashSet::new();
    loop {
        let found: Vec<i32> = walk(shell.as_raw_nonzero().get())
            .into_iter()
            .filter(|pid| !stopped.contains(pid))
            .collect();
        if found.is_empty() {
            break;
        }
        for pid in found {
            if let Some(p) = Pid::from_raw(pid) {
                // One that has just exited is simply not stopped.
                let _ = kill_process(p, Signal::STOP);
            }
            stopped.insert(pid);
        }
    }
    stopped.into_iter().filter_map(Pid::from_raw).collect()
}

/// Kills the processes [`stop_all`] stopped.
pub(super) fn kill(pids: &[Pid]) {
    for &pid in pids {
        let _ = kill_process(pid, Signal::KILL);
    }
}

/// Every process whose parent chain leads to `root`, from one reading of `/proc`.
fn walk(root: i32) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        if let Some(ppid) = parent(pid) {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut found = Vec::new();
    let mut next = vec![root];
    while let Some(pid) = next.pop() {
        for &child in children.get(&pid).into_iter().flatten() {
            found.push(child);
            next.push(child);
        }
    }
    found
}

/// The parent of `pid`, from `/proc/<pid>/stat`; `None` if it is gone.
fn parent(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces; fields from 3 on.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

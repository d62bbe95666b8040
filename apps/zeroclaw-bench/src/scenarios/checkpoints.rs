//! Checkpoints (issue 31): what a turn's snapshots cost the daemon, on workspaces of source-
//! like files (about 2 KB each, 100 per directory). Each round is a turn as the daemon takes
//! it: the turn-start snapshot, `changed` files change, a pause (the agent is still
//! working), the end-of-turn snapshot (timed, and the bytes it added to the store); after
//! another pause the turn is rewound (timed) and put forward again. The pauses matter: git
//! trusts a file's cached `stat` data only when the file is older than its index (to the
//! second, in a git built without nanosecond timestamps), so a file changed in the same
//! second as a snapshot is hashed again by the next one. `--smoke` skips them.
//!
//! There is no floor: the figures are absolute, against the goal (≤ 50 ms and bytes
//! in proportion to the change at 10k files). The engine is driven directly, as the
//! daemon's turn drives it (on a blocking thread, with the same `Options`).

use super::{count, progress, spread};
use crate::report::{Goal, Row, Unit, millis};
use crate::run::Bench;
use crate::stats::median_f64 as median;
use std::path::{Path, PathBuf};
use std::time::Duration;
use std::time::Instant;
use zeroclaw_checkpoint::{
    Checkpoints, Options, RefName, Restore, RestoreOutcome, SnapshotId, Workspace,
};

/// Files changed by a turn, for each workspace size.
const CHANGED: [usize; 2] = [1, 100];

impl Bench {
    pub fn checkpoints(&mut self) -> Result<(), String> {
        let sizes = self.plan.checkpoint_sizes.clone();
        let rounds = self.plan.checkpoint_rounds.max(1);
        let pause = if self.plan.check {
            Duration::from_millis(1100)
        } else {
            Duration::ZERO
        };
        let engine = Checkpoints::open(self.dir.join("checkpoints"), Options::default())
            .map_err(|e| format!("open the checkpoint store: {e}"))?;
        progress(format!(
            "checkpoints: workspaces of {} files, {} per figure ({})",
            sizes
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(" / "),
            count(rounds, "turn"),
            engine.git_version()
        ));
        for (i, &files) in sizes.iter().enumerate() {
            let root = self.dir.join(format!("checkpoint-ws-{i}"));
            make_tree(&root, files).map_err(|e| format!("{}: {e}", root.display()))?;
            let ws = engine
                .workspace(&root)
                .map_err(|e| format!("open the workspace: {e}"))?;
            let started = Instant::now();
            snapshot(&ws, "bench/first")?;
            self.rows.push(
                Row::new(
                    format!("checkpoint: first snapshot of {files} files"),
                    Unit::Millis,
                    millis(started.elapsed()),
                    None,
                )
                .note(format!(
                    "{:.0} KiB stored",
                    ws.store_bytes() as f64 / 1024.0
                )),
            );
            let mut turn = 0;
            for changed in CHANGED {
                let (mut snaps, mut bytes, mut restores) = (Vec::new(), Vec::new(), Vec::new());
                let mut cpu = Duration::ZERO;
                for round in 0..rounds {
                    turn += 1;
                    let start = snapshot(&ws, &format!("bench/{turn}/start"))?;
                    change_files(&root, files, changed, round, turn)
                        .map_err(|e| format!("change the workspace: {e}"))?;
                    std::thread::sleep(pause);
                    let before = ws.store_bytes();
                    let (started, cpu_before) = (Instant::now(), cpu_time());
                    let end = snapshot(&ws, &format!("bench/{turn}/end"))?;
                    snaps.push(millis(started.elapsed()));
                    cpu += cpu_time().saturating_sub(cpu_before);
                    bytes.push(ws.store_bytes().saturating_sub(before) as f64 / 1024.0);
                    std::thread::sleep(pause);
                    let started = Instant::now();
                    restore(&ws, &start, &format!("bench/{turn}/undo"))?;
                    restores.push(millis(started.elapsed()));
                    std::thread::sleep(pause);
                    // Forward again, so the next round starts where this one ended.
                    restore(&ws, &end, &format!("bench/{turn}/redo"))?;
                    std::thread::sleep(pause);
                }
                let what = format!("{files} files, {changed} changed");
                let mut row = Row::new(
                    format!("checkpoint: end-of-turn snapshot, {what}"),
                    Unit::Millis,
                    median(&snaps),
                    None,
                )
                .note(spread(&snaps, " ms").unwrap_or_default());
                if cfg!(target_os = "linux") {
                    // CPU time is what a busy machine does not inflate the way it does wall time.
                    row = row.note(format!("CPU {:.0} ms", millis(cpu) / rounds as f64));
                }
                if files == 10_000 {
                    row = row.goal(Goal::AtMost(50.0, "ms"));
                }
                self.rows.push(row);
                self.rows.push(
                    Row::new(
                        format!("checkpoint: bytes added per turn, {what}"),
                        Unit::KiB,
                        median(&bytes),
                        None,
                    )
                    .note(format!(
                        "{:.1} KiB per changed file",
                        median(&bytes) / changed as f64
                    )),
                );
                self.rows.push(
                    Row::new(
                        format!("checkpoint: rewind of the turn, {what}"),
                        Unit::Millis,
                        median(&restores),
                        None,
                    )
                    .note(spread(&restores, " ms").unwrap_or_default()),
                );
            }
            ws.remove()
                .map_err(|e| format!("remove the workspace's store: {e}"))?;
            std::fs::remove_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
        }
        Ok(())
    }
}

fn snapshot(ws: &Workspace, name: &str) -> Result<SnapshotId, String> {
    let name = RefName::new(name).map_err(|e| format!("{name}: {e}"))?;
    ws.snapshot(&name, None)
        .map(|s| s.id)
        .map_err(|e| format!("snapshot: {e}"))
}

fn restore(ws: &Workspace, target: &SnapshotId, undo: &str) -> Result<(), String> {
    let undo_ref = RefName::new(undo).map_err(|e| format!("{undo}: {e}"))?;
    let outcome = ws
        .restore(&Restore {
            target: target.clone(),
            undo_ref,
            gaps: Vec::new(),
            force: false,
        })
        .map_err(|e| format!("restore: {e}"))?;
    match outcome {
        RestoreOutcome::Restored { .. } => Ok(()),
        RestoreOutcome::Refused { conflicts } => Err(format!("restore refused: {conflicts:?}")),
    }
}

/// `files` source-like files, 100 per directory, two levels deep, about 2 KB each.
fn make_tree(root: &Path, files: usize) -> std::io::Result<()> {
    let body = "let value = compute(input, options); // a line of ordinary source\n".repeat(30);
    for i in 0..files {
        let path = file_path(root, i);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, format!("// file {i}\n{body}"))?;
    }
    Ok(())
}

/// Appends a line to `changed` files spread over the tree (a different set each round).
fn change_files(
    root: &Path,
    files: usize,
    changed: usize,
    round: usize,
    turn: usize,
) -> std::io::Result<()> {
    for i in 0..changed {
        let path = file_path(root, (round * 7919 + i * 104_729) % files);
        let mut content = std::fs::read(&path)?;
        content.extend_from_slice(format!("turn {turn} changed line {i}\n").as_bytes());
        std::fs::write(&path, content)?;
    }
    Ok(())
}

fn file_path(root: &Path, i: usize) -> PathBuf {
    root.join(format!("m{}", i / 10_000))
        .join(format!("d{}", (i / 100) % 100))
        .join(format!("f{i}.rs"))
}

/// This process's CPU time and that of its waited-for children (git), from
/// `/proc/self/stat` in clock ticks of 10 ms; zero where there is no such file.
fn cpu_time() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // After the command name (in parentheses), utime, stime, cutime, cstime are the 12th
    // to 15th fields.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return Duration::ZERO;
    };
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(4)
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

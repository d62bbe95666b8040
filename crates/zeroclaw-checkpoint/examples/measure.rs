//! Measures the checkpoint engine: snapshot time and bytes added for workspaces of 1k, 10k
//! and 50k files with 0, 1 and 100 files changed, the first snapshot of each, and the time
//! to restore those changes. Prints a Markdown table: wall-clock medians and ranges, and
//! (on Linux) the CPU time per operation, ours and git's together, averaged over the rounds
//! (a figure a busy machine does not inflate the way it does wall time).
//!
//! Each round is a turn as the daemon sees it: the turn-start snapshot, the files change, a
//! second passes (the agent is still working), the end-of-turn snapshot (timed); a second
//! later the turn is rewound (timed), and put back. The pauses matter: git trusts a file's cached `stat` data
//! only if the file is older than the index (to the second, in a git built without
//! nanosecond timestamps), so a file changed in the same second as a snapshot is hashed
//! again by the next one. `--no-pause` measures that worst case.
//!
//! ```sh
//! cargo run --release -p zeroclaw-checkpoint --example measure                 # 1k, 10k, 50k
//! cargo run --release -p zeroclaw-checkpoint --example measure -- 1000 --no-pause
//! ```

use std::path::Path;
use std::time::{Duration, Instant};

use zeroclaw_checkpoint::{
    Checkpoints, Options, RefName, Restore, RestoreOutcome, SnapshotId, Workspace,
};

/// Rounds per figure; the median is reported, with the range.
const ROUNDS: usize = 5;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut sizes = Vec::new();
    let mut pause = Duration::from_millis(1100);
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--no-pause" => pause = Duration::ZERO,
            n => sizes.push(
                n.parse::<usize>()
                    .map_err(|e| format!("{n:?}: {e} (expected a file count or --no-pause)"))?,
            ),
        }
    }
    if sizes.is_empty() {
        sizes = vec![1_000, 10_000, 50_000];
    }
    let engine_dir = tempfile::tempdir()?;
    let engine = Checkpoints::open(engine_dir.path().join("store"), Options::default())?;
    println!(
        "{}, pauses of {} ms\n",
        engine.git_version(),
        pause.as_millis()
    );
    println!(
        "| files | changed | snapshot (median) | range | CPU | bytes added (median) | restore (median) | range | CPU |"
    );
    println!("|---:|---:|---:|---|---:|---:|---:|---|---:|");
    for &files in &sizes {
        let ws_dir = tempfile::tempdir()?;
        make_tree(ws_dir.path(), files)?;
        let ws = engine.workspace(ws_dir.path())?;
        let started = Instant::now();
        ws.snapshot(&RefName::new("bench/first")?, None)?;
        println!(
            "| {files} | first snapshot | {} | — | — | {} | — | — | — |",
            ms(started.elapsed()),
            kib(ws.store_bytes())
        );
        let mut turn = 0usize;
        for changed in [0usize, 1, 100] {
            let mut snap_times = Vec::new();
            let mut bytes = Vec::new();
            let mut restore_times = Vec::new();
            let (mut snap_cpu, mut restore_cpu) = (Duration::ZERO, Duration::ZERO);
            for round in 0..ROUNDS {
                turn += 1;
                let start = ws
                    .snapshot(&RefName::new(format!("bench/{turn}/start"))?, None)?
                    .id;
                for i in 0..changed {
                    let path = file_path(ws_dir.path(), (round * 7919 + i * 104_729) % files);
                    let mut content = std::fs::read(&path)?;
                    content.extend_from_slice(format!("turn {turn} changed line {i}\n").as_bytes());
                    std::fs::write(&path, content)?;
                }
                std::thread::sleep(pause);
                let size_before = ws.store_bytes();
                let (started, cpu) = (Instant::now(), cpu_time());
                let end = ws
                    .snapshot(&RefName::new(format!("bench/{turn}/end"))?, None)?
                    .id;
                snap_times.push(started.elapsed());
                snap_cpu += cpu_time().saturating_sub(cpu);
                bytes.push(ws.store_bytes().saturating_sub(size_before));

                std::thread::sleep(pause);
                let cpu = cpu_time();
                restore_times.push(timed_restore(&ws, &start, &format!("bench/{turn}/undo"))?);
                restore_cpu += cpu_time().saturating_sub(cpu);
                std::thread::sleep(pause);
                // Forward again, so the next round starts where this one ended.
                timed_restore(&ws, &end, &format!("bench/{turn}/redo"))?;
                std::thread::sleep(pause);
            }
            let (median, low, high) = stats(&mut snap_times);
            let (r_median, r_low, r_high) = stats(&mut restore_times);
            bytes.sort_unstable();
            println!(
                "| {files} | {changed} | {} | {}–{} | {} | {} | {} | {}–{} | {} |",
                ms(median),
                ms(low),
                ms(high),
                cpu_ms(snap_cpu),
                kib(bytes[bytes.len() / 2]),
                ms(r_median),
                ms(r_low),
                ms(r_high),
                cpu_ms(restore_cpu)
            );
        }
        ws.remove()?;
    }
    Ok(())
}

fn timed_restore(
    ws: &Workspace,
    target: &SnapshotId,
    undo: &str,
) -> Result<Duration, Box<dyn std::error::Error>> {
    let started = Instant::now();
    let outcome = ws.restore(&Restore {
        target: target.clone(),
        undo_ref: RefName::new(undo)?,
        gaps: Vec::new(),
        force: false,
    })?;
    let elapsed = started.elapsed();
    match outcome {
        RestoreOutcome::Restored { .. } => Ok(elapsed),
        RestoreOutcome::Refused { conflicts } => Err(format!("refused: {conflicts:?}").into()),
    }
}

/// `files` source-like files, 100 per directory, two levels deep, about 2 KB each.
fn make_tree(root: &Path, files: usize) -> std::io::Result<()> {
    let line = "let value = compute(input, options); // a line of ordinary source\n";
    for i in 0..files {
        let path = file_path(root, i);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, format!("// file {i}\n{}", line.repeat(30)))?;
    }
    Ok(())
}

fn file_path(root: &Path, i: usize) -> std::path::PathBuf {
    root.join(format!("m{}", i / 10_000))
        .join(format!("d{}", (i / 100) % 100))
        .join(format!("f{i}.rs"))
}

/// This process's CPU time and that of its waited-for children (git), from
/// `/proc/self/stat` in clock ticks of 10 ms; zero elsewhere.
fn cpu_time() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // Fields after the command name (which is in parentheses): utime is the 12th.
    let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
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

fn cpu_ms(total: Duration) -> String {
    if cfg!(target_os = "linux") {
        ms(total / ROUNDS as u32)
    } else {
        "—".into()
    }
}

fn stats(times: &mut [Duration]) -> (Duration, Duration, Duration) {
    times.sort_unstable();
    (times[times.len() / 2], times[0], times[times.len() - 1])
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn kib(bytes: u64) -> String {
    if bytes < 10 * 1024 {
        format!("{bytes} B")
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

//! The sandbox's added cost per command: spawn to exit of `true`, sandboxed against `full`,
//! interleaved in the same run so the machine's load falls on both alike.
//!
//! ```sh
//! cargo run --release -p zeroclaw-sandbox --example spawn_cost [ROUNDS]
//! ```
//!
//! Each sample is what a tool call pays: `Policy::prepare` (temp dir, opened paths, the
//! Landlock ruleset, the seccomp programs), `install`, spawn, wait, and dropping the
//! `Prepared` (the temp dir removed). The hidden data dir sits in a home directory with 60
//! entries, like a real one, since the Landlock read cover lists the hidden paths'
//! ancestors.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use zeroclaw_sandbox::{Mode, Policy, Support};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: usize = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => 300,
    };
    let support = Support::probe();
    println!("sandbox here: {support}");
    if !support.is_available() {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let root = dir.path().canonicalize()?;
    let home = root.join("home");
    let data = home.join(".zeroclaw/data");
    std::fs::create_dir_all(&data)?;
    for i in 0..60 {
        std::fs::write(home.join(format!(".file{i}")), "x")?;
    }
    let work = home.join("project");
    std::fs::create_dir_all(&work)?;
    let base = |mode: Mode| {
        Policy::new(mode, &work)
            .hide(&data)
            .hide(home.join(".zeroclaw"))
    };
    let truth = ["/usr/bin/true", "/bin/true"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .ok_or("no `true` binary")?;

    let cases: Vec<(&str, Policy, Support)> = vec![
        ("full (nothing applied)", base(Mode::Full), support.clone()),
        (
            "workspace-write, network off",
            base(Mode::WorkspaceWrite),
            support.clone(),
        ),
        (
            "read-only, network off",
            base(Mode::ReadOnly),
            support.clone(),
        ),
        (
            "workspace-write, no user namespace",
            base(Mode::WorkspaceWrite),
            support.without_user_namespaces(),
        ),
    ];
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(rounds); cases.len()];
    let mut prepare_only = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        for (i, (_, policy, support)) in cases.iter().enumerate() {
            let start = Instant::now();
            let prepared = policy.prepare(support)?;
            let mut cmd = Command::new(truth);
            cmd.stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            prepared.install(&mut cmd);
            let status = cmd.status()?;
            drop(prepared);
            samples[i].push(start.elapsed());
            assert!(status.success());
        }
        let start = Instant::now();
        drop(cases[1].1.prepare(&cases[1].2)?);
        prepare_only.push(start.elapsed());
    }
    println!("{rounds} rounds, spawn to exit of {truth}:");
    println!(
        "{:<38} {:>9} {:>9} {:>9} {:>9}",
        "", "min", "median", "p90", "mean"
    );
    let full = stats(&mut samples[0]);
    for ((name, _, _), s) in cases.iter().zip(samples.iter_mut()) {
        let (min, median, p90, mean) = stats(s);
        println!(
            "{name:<38} {:>9} {:>9} {:>9} {:>9}   (+{} min, +{} median)",
            ms(min),
            ms(median),
            ms(p90),
            ms(mean),
            ms(min.saturating_sub(full.0)),
            ms(median.saturating_sub(full.1))
        );
    }
    let (min, median, p90, mean) = stats(&mut prepare_only);
    println!(
        "{:<38} {:>9} {:>9} {:>9} {:>9}",
        "prepare + drop alone (workspace-write)",
        ms(min),
        ms(median),
        ms(p90),
        ms(mean)
    );
    Ok(())
}

fn stats(s: &mut [Duration]) -> (Duration, Duration, Duration, Duration) {
    s.sort();
    let n = s.len().max(1);
    let sum: Duration = s.iter().sum();
    (
        s[0],
        s[n / 2],
        s[(n * 9 / 10).min(n - 1)],
        sum / u32::try_from(n).unwrap_or(1),
    )
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

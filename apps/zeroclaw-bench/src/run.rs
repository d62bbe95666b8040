//! The run: set up the temp dir, the fake provider and both servers, measure each selected
//! scenario on the floor and on the daemon (alternating, so noise on a shared machine hits
//! both alike), and report. Each scenario is a method on [`Bench`] in a file of its own
//! under `scenarios/`; the counts are in `plan.rs`.

use crate::plan::Plan;
use crate::procs::{self, Kind, Launcher};
use crate::report::{self, Row, Unit};
use crate::scenarios::{ctx, growth, mib, progress, slot};
use crate::stats::median_f64;
use crate::{Args, Scenario};
use std::path::PathBuf;
use std::process::ExitCode;
use zeroclaw_testkit::FakeProvider;

pub fn main(args: Args) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("zeroclaw-bench: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(bench(args)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("zeroclaw-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One run's state: its counts, how to start the servers, the rows so far. Each scenario
/// adds its rows (and its failures) to it.
pub struct Bench {
    pub plan: Plan,
    pub launcher: Launcher,
    pub dir: PathBuf,
    pub rows: Vec<Row>,
    /// The growth group's rows (issue 16): their own table and their own Markdown block.
    pub growth_rows: Vec<Row>,
    /// The floor's and the daemon's pids while the load scenarios run.
    pub pids: Option<[u32; 2]>,
    /// Correctness failures (lost or mismatched answers): the run fails.
    pub errors: Vec<String>,
}

async fn bench(args: Args) -> Result<ExitCode, String> {
    let plan = if args.smoke {
        Plan::smoke()
    } else if args.quick {
        Plan::quick()
    } else {
        Plan::full()
    };
    let selected = |s: Scenario| args.only.is_empty() || args.only.contains(&s);

    let nofile = procs::raise_nofile();
    let mut needed = 64;
    if selected(Scenario::Clients) {
        needed = needed.max(plan.clients as u64 + 256);
    }
    if selected(Scenario::Memory) {
        needed = needed.max(plan.idle_conns as u64 + 256);
    }
    if nofile < needed {
        return Err(format!(
            "the open-file limit is {nofile} (hard limit included) but this run needs about {needed} descriptors in the bench and in each server; raise it (`ulimit -Hn`, as root) or run --quick"
        ));
    }

    let bench_bin =
        std::env::current_exe().map_err(|e| format!("cannot find this executable's path: {e}"))?;
    let daemon_bin = match &args.daemon {
        Some(path) => path.clone(),
        None => bench_bin
            .parent()
            .map(|dir| dir.join("zeroclaw"))
            .unwrap_or_else(|| PathBuf::from("zeroclaw")),
    };
    if !daemon_bin.is_file() {
        return Err(format!(
            "no daemon binary at {}; build it with `cargo build --release -p zeroclaw -p zeroclaw-bench`, or pass --daemon PATH",
            daemon_bin.display()
        ));
    }

    // Short: a Unix socket path must fit in 107 bytes.
    let tmp = tempfile::Builder::new()
        .prefix("zcb-")
        .tempdir_in("/tmp")
        .map_err(|e| format!("cannot create a temp dir in /tmp: {e}"))?;
    let dir = tmp.path().to_path_buf();
    let config_dir = dir.join("cfg");
    std::fs::create_dir_all(&config_dir).map_err(|e| format!("{}: {e}", config_dir.display()))?;
    let fake = FakeProvider::start_blocking()
        .map_err(|e| format!("cannot start the fake provider: {e}"))?;
    let config = format!(
        "[provider]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"fake\"\n\n[gateway]\nlisten = \"127.0.0.1:0\"\n",
        fake.base_url()
    );
    std::fs::write(config_dir.join("config.toml"), config)
        .map_err(|e| format!("cannot write config.toml: {e}"))?;
    let launcher = Launcher {
        daemon_bin: daemon_bin.clone(),
        bench_bin,
        config_dir,
        floor_socket: dir.join("floor.sock"),
        log: dir.join("servers.log"),
    };
    progress(format!(
        "{} run of {} (work dir {}, open-file limit {nofile})",
        plan.name,
        daemon_bin.display(),
        dir.display()
    ));

    let mut bench = Bench {
        plan,
        launcher,
        dir: dir.clone(),
        rows: Vec::new(),
        growth_rows: Vec::new(),
        pids: None,
        errors: Vec::new(),
    };
    let outcome = bench.run_all(&selected, &fake).await;
    if args.keep_dir {
        let kept = tmp.keep();
        progress(format!("kept {}", kept.display()));
    }
    outcome?;

    let check = bench.plan.check;
    let machine = report::machine();
    let command = command_line();
    if !bench.rows.is_empty() {
        println!();
        print!("{}", report::text_table(&bench.rows, check));
    }
    if !bench.growth_rows.is_empty() {
        println!("\nGrowth (issue 16)\n");
        print!("{}", report::text_table(&bench.growth_rows, check));
    }
    println!();
    for (name, value) in &machine {
        println!("{name}: {value}");
    }
    if let Some(path) = &args.markdown {
        let mut blocks = Vec::new();
        if !bench.rows.is_empty() {
            blocks.push((
                report::MAIN,
                markdown_block(&bench, &bench.rows, "## Results", &machine, &command),
            ));
        }
        if !bench.growth_rows.is_empty() {
            blocks.push((
                report::GROWTH,
                markdown_block(
                    &bench,
                    &bench.growth_rows,
                    "### Growth results",
                    &machine,
                    &command,
                ),
            ));
        }
        report::write_markdown(path, &blocks)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        progress(format!("wrote {}", path.display()));
    }
    if check {
        let mut missed = report::missed(&bench.rows);
        missed.extend(report::missed(&bench.growth_rows));
        if !missed.is_empty() {
            println!();
            for row in missed {
                println!("goal missed: {} ({})", row.figure, row.goal.text());
            }
        }
    }
    if !bench.errors.is_empty() {
        for e in &bench.errors {
            eprintln!("zeroclaw-bench: FAILED: {e}");
        }
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn command_line() -> String {
    std::env::args()
        .map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c)) {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn markdown_block(
    bench: &Bench,
    rows: &[Row],
    heading: &str,
    machine: &[(&str, String)],
    command: &str,
) -> String {
    let mut out = format!("{heading}\n\n");
    if !bench.plan.check {
        out.push_str(&format!(
            "A `--{}` run: tiny counts, goals not checked.\n\n",
            bench.plan.name
        ));
    }
    out.push_str(&report::markdown_table(rows, bench.plan.check));
    if !bench.errors.is_empty() {
        out.push_str("\n**This run failed:**\n\n");
        for e in &bench.errors {
            let first = e.lines().next().unwrap_or_default();
            let first = first.split("; the log").next().unwrap_or(first);
            out.push_str(&format!("- {first}\n"));
        }
    }
    out.push_str("\nCommand:\n\n```sh\n");
    out.push_str(command);
    out.push_str("\n```\n\nMachine:\n\n");
    for (name, value) in machine {
        out.push_str(&format!("- {name}: {value}\n"));
    }
    out
}

impl Bench {
    pub fn socket(&self, kind: Kind) -> PathBuf {
        self.launcher.socket(kind)
    }

    /// CPU time `kind` has used so far, ns.
    pub fn cpu(&self, kind: Kind) -> Option<u64> {
        self.pids.and_then(|p| procs::cpu_ns(p[slot(kind)]).ok())
    }

    /// Runs `f` and returns its outcome and the server's CPU time during it, in µs per `ops`.
    pub async fn metered<T, F: std::future::Future<Output = T>>(
        &self,
        kind: Kind,
        ops: usize,
        f: F,
    ) -> (T, Option<f64>) {
        let before = self.cpu(kind);
        let outcome = f.await;
        let per_op = match (before, self.cpu(kind)) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a) as f64 / ops.max(1) as f64 / 1_000.0),
            _ => None,
        };
        (outcome, per_op)
    }

    /// A "server CPU per …" row from per-round samples.
    /// Adds the row (when both sides have samples) and returns it, for a goal.
    pub fn cpu_row(&mut self, figure: String, samples: &[Vec<f64>; 2]) -> Option<&mut Row> {
        if samples.iter().any(Vec::is_empty) {
            return None;
        }
        self.rows.push(Row::new(
            figure,
            Unit::Micros,
            median_f64(&samples[1]),
            Some(median_f64(&samples[0])),
        ));
        self.rows.last_mut()
    }

    async fn run_all(
        &mut self,
        selected: &dyn Fn(Scenario) -> bool,
        fake: &FakeProvider,
    ) -> Result<(), String> {
        let load = [
            Scenario::RoundTrip,
            Scenario::Pipelined,
            Scenario::Clients,
            Scenario::Streaming,
        ];
        if load.iter().any(|s| selected(*s)) {
            let floor = self
                .launcher
                .start(Kind::Floor)
                .map_err(ctx("start the floor"))?;
            let daemon = self
                .launcher
                .start(Kind::Daemon)
                .map_err(ctx("start the daemon"))?;
            self.pids = Some([floor.pid(), daemon.pid()]);
            let outcome = self.load_scenarios(selected, fake).await;
            self.pids = None;
            let after = (floor.rss(), daemon.rss());
            let stopped = daemon.stop();
            drop(floor);
            outcome?;
            if let (Ok(f), Ok(d)) = after {
                self.rows.push(Row::new(
                    "RSS after the load scenarios",
                    Unit::MiB,
                    mib(d),
                    Some(mib(f)),
                ));
            }
            match stopped {
                Ok(status) if status.success() => {}
                Ok(status) => self
                    .errors
                    .push(format!("the daemon exited with {status} on SIGTERM")),
                Err(e) => self.errors.push(e.to_string()),
            }
        }
        if selected(Scenario::Memory) {
            self.memory().await?;
        }
        if selected(Scenario::Startup) {
            self.startup()?;
        }
        if selected(Scenario::Gateway) {
            self.gateway(fake).await?;
        }
        if selected(Scenario::Sandbox) {
            self.sandbox()?;
        }
        if selected(Scenario::Checkpoints) {
            self.checkpoints()?;
        }
        if selected(Scenario::Growth) {
            let mut group =
                growth::Group::new(&self.launcher, &self.dir, self.plan.growth.clone())?;
            let outcome = group.run().await;
            self.growth_rows.append(&mut group.rows);
            self.errors.append(&mut group.errors);
            outcome?;
        }
        Ok(())
    }

    async fn load_scenarios(
        &mut self,
        selected: &dyn Fn(Scenario) -> bool,
        fake: &FakeProvider,
    ) -> Result<(), String> {
        if selected(Scenario::RoundTrip) {
            self.round_trip().await?;
        }
        if selected(Scenario::Pipelined) {
            self.pipelined().await?;
        }
        if selected(Scenario::Clients) {
            self.clients().await?;
        }
        if selected(Scenario::Streaming) {
            self.streaming(fake).await?;
        }
        Ok(())
    }
}

//! The run: set up the temp dir, the fake provider and both servers, measure each selected
//! scenario on the floor and on the daemon (alternating, so noise on a shared machine hits
//! both alike), and report.

use crate::client::Conn;
use crate::growth;
use crate::procs::{self, Kind, Launcher};
use crate::report::{self, Goal, Row, Unit, micros, millis, thousands};
use crate::scenarios::{self, median_f64, quantile};
use crate::{Args, Scenario};
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use zeroclaw_testkit::{FakeProvider, openai};

/// The text of every streamed chunk (about one token).
const CHUNK: &str = "tok ";
/// Same length as the daemon's uuids, so the floor's notification lines are the same size.
const FLOOR_SESSION: &str = "00000000-0000-4000-8000-000000000001";
const FLOOR_TURN: &str = "00000000-0000-4000-8000-000000000002";
/// Pause before reading RSS, so the servers have finished reacting to what just happened.
const SETTLE: Duration = Duration::from_millis(300);

/// The counts of one run.
#[derive(Debug, Clone)]
struct Plan {
    name: &'static str,
    check: bool,
    rt_calls: usize,
    rt_warmup: usize,
    rt_rounds: usize,
    pipe_total: usize,
    pipe_depth: usize,
    pipe_rounds: usize,
    clients: usize,
    per_client: usize,
    clients_rounds: usize,
    chunks: usize,
    stream_rounds: usize,
    idle_conns: usize,
    startups: usize,
    ephemeral_runs: usize,
    growth: growth::Sizes,
}

impl Plan {
    fn full() -> Plan {
        Plan {
            name: "full",
            check: true,
            rt_calls: 20_000,
            rt_warmup: 2_000,
            rt_rounds: 4,
            pipe_total: 200_000,
            pipe_depth: 256,
            pipe_rounds: 3,
            clients: 1_000,
            per_client: 100,
            clients_rounds: 3,
            chunks: 100_000,
            stream_rounds: 3,
            idle_conns: 10_000,
            startups: 20,
            ephemeral_runs: 3,
            growth: growth::Sizes::full(),
        }
    }

    fn quick() -> Plan {
        Plan {
            name: "quick",
            rt_calls: 5_000,
            rt_warmup: 500,
            rt_rounds: 2,
            pipe_total: 50_000,
            pipe_rounds: 2,
            clients: 250,
            per_client: 100,
            clients_rounds: 2,
            chunks: 25_000,
            stream_rounds: 2,
            idle_conns: 2_500,
            startups: 6,
            ephemeral_runs: 1,
            growth: growth::Sizes::quick(),
            ..Plan::full()
        }
    }

    fn smoke() -> Plan {
        Plan {
            name: "smoke",
            check: false,
            rt_calls: 200,
            rt_warmup: 20,
            rt_rounds: 1,
            pipe_total: 256,
            pipe_depth: 256,
            pipe_rounds: 1,
            clients: 20,
            per_client: 10,
            clients_rounds: 1,
            chunks: 1_000,
            stream_rounds: 1,
            idle_conns: 100,
            startups: 2,
            ephemeral_runs: 1,
            growth: growth::Sizes::smoke(),
        }
    }
}

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

/// `n` and the noun, plural unless `n` is 1.
fn count(n: usize, noun: &str) -> String {
    format!(
        "{} {noun}{}",
        thousands(n as u64),
        if n == 1 { "" } else { "s" }
    )
}

fn progress(what: impl AsRef<str>) {
    eprintln!("zeroclaw-bench: {}", what.as_ref());
}

/// Floor first on even rounds, the daemon first on odd ones.
fn order(round: usize) -> [Kind; 2] {
    if round.is_multiple_of(2) {
        [Kind::Floor, Kind::Daemon]
    } else {
        [Kind::Daemon, Kind::Floor]
    }
}

fn slot(kind: Kind) -> usize {
    match kind {
        Kind::Floor => 0,
        Kind::Daemon => 1,
    }
}

fn spread(values: &[f64], unit: &str) -> Option<String> {
    if values.len() < 2 {
        return None;
    }
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(format!(
        "{}–{}{unit} over {} rounds",
        thousands(min.round() as u64),
        thousands(max.round() as u64),
        values.len()
    ))
}

fn ctx(what: &str) -> impl Fn(io::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

struct Bench {
    plan: Plan,
    launcher: Launcher,
    dir: PathBuf,
    rows: Vec<Row>,
    /// The growth group's rows (issue 16): their own table and their own Markdown block.
    growth_rows: Vec<Row>,
    /// The floor's and the daemon's pids while the load scenarios run.
    pids: Option<[u32; 2]>,
    /// Correctness failures (lost or mismatched answers): the run fails.
    errors: Vec<String>,
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
    fn socket(&self, kind: Kind) -> PathBuf {
        self.launcher.socket(kind)
    }

    /// CPU time `kind` has used so far, ns.
    fn cpu(&self, kind: Kind) -> Option<u64> {
        self.pids.and_then(|p| procs::cpu_ns(p[slot(kind)]).ok())
    }

    /// Runs `f` and returns its outcome and the server's CPU time during it, in µs per `ops`.
    async fn metered<T, F: std::future::Future<Output = T>>(
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
    fn cpu_row(&mut self, figure: String, samples: &[Vec<f64>; 2]) {
        if samples.iter().all(|s| !s.is_empty()) {
            self.rows.push(Row::new(
                figure,
                Unit::Micros,
                median_f64(&samples[1]),
                Some(median_f64(&samples[0])),
            ));
        }
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

    async fn round_trip(&mut self) -> Result<(), String> {
        let p = &self.plan;
        let rounds = p.rt_rounds.max(1);
        let per_round = p.rt_calls.div_ceil(rounds);
        let warmup = p.rt_warmup.div_ceil(rounds);
        progress(format!(
            "round trip: {} of {} sequential `status` calls on each server",
            count(rounds, "round"),
            thousands(per_round as u64)
        ));
        let mut samples = [Vec::new(), Vec::new()];
        let mut cpu = [Vec::new(), Vec::new()];
        for round in 0..rounds {
            for kind in order(round) {
                let socket = self.socket(kind);
                let (s, per_op) = self
                    .metered(
                        kind,
                        warmup + per_round + 1,
                        scenarios::round_trips(&socket, warmup, per_round),
                    )
                    .await;
                let s = s.map_err(ctx(&format!("round trip on the {}", kind.name())))?;
                samples[slot(kind)].extend(s);
                cpu[slot(kind)].extend(per_op);
            }
        }
        for s in &mut samples {
            s.sort_unstable();
        }
        let [floor, daemon] = &samples;
        let n = thousands(daemon.len() as u64);
        self.rows.push(
            Row::new(
                format!("round trip p50 ({n} sequential `status`)"),
                Unit::Micros,
                micros(quantile(daemon, 0.5)),
                Some(micros(quantile(floor, 0.5))),
            )
            .goal(Goal::RatioAtMost(1.25)),
        );
        self.rows.push(Row::new(
            "round trip p99",
            Unit::Micros,
            micros(quantile(daemon, 0.99)),
            Some(micros(quantile(floor, 0.99))),
        ));
        self.cpu_row("round trip: server CPU per call".into(), &cpu);
        Ok(())
    }

    async fn pipelined(&mut self) -> Result<(), String> {
        let p = self.plan.clone();
        progress(format!(
            "pipelined: {} of {} requests, {} in flight",
            count(p.pipe_rounds, "round"),
            thousands(p.pipe_total as u64),
            p.pipe_depth
        ));
        let mut rates = [Vec::new(), Vec::new()];
        let mut cpu = [Vec::new(), Vec::new()];
        let mut client_cpu = [Vec::new(), Vec::new()];
        for round in 0..p.pipe_rounds.max(1) {
            for kind in order(round) {
                let socket = self.socket(kind);
                // The client shares the machine's cores with the server, so what it spends
                // reading the answers (bigger from `status` than the floor's `{}`) bounds
                // the rate too.
                let client_before = procs::cpu_ns(std::process::id()).ok();
                let (r, per_op) = self
                    .metered(
                        kind,
                        p.pipe_total,
                        scenarios::pipelined(&socket, p.pipe_total, p.pipe_depth),
                    )
                    .await;
                if let (Some(a), Ok(b)) = (client_before, procs::cpu_ns(std::process::id())) {
                    client_cpu[slot(kind)]
                        .push(b.saturating_sub(a) as f64 / p.pipe_total.max(1) as f64 / 1_000.0);
                }
                let r = r.map_err(ctx(&format!("pipelined on the {}", kind.name())))?;
                rates[slot(kind)].push(r);
                cpu[slot(kind)].extend(per_op);
            }
        }
        let mut row = Row::new(
            format!("pipelined, {} in flight, one connection", p.pipe_depth),
            Unit::PerSec,
            median_f64(&rates[1]),
            Some(median_f64(&rates[0])),
        )
        .goal(Goal::RatioAtLeast(0.8));
        if let Some(s) = spread(&rates[1], " /s") {
            row = row.note(s);
        }
        self.rows.push(row);
        self.cpu_row("pipelined: server CPU per request".into(), &cpu);
        self.cpu_row(
            "pipelined: client CPU per request (the same client)".into(),
            &client_cpu,
        );
        Ok(())
    }

    async fn clients(&mut self) -> Result<(), String> {
        let p = self.plan.clone();
        progress(format!(
            "many clients: {} of {} connections × {} sequential requests, all at once",
            count(p.clients_rounds, "round"),
            thousands(p.clients as u64),
            p.per_client
        ));
        let mut rates = [Vec::new(), Vec::new()];
        let mut latencies = [Vec::new(), Vec::new()];
        let mut bad = [0usize; 2];
        let mut cpu = [Vec::new(), Vec::new()];
        for round in 0..p.clients_rounds.max(1) {
            for kind in order(round) {
                let socket = self.socket(kind);
                let (o, per_op) = self
                    .metered(
                        kind,
                        p.clients * (p.per_client + 1),
                        scenarios::many_clients(&socket, p.clients, p.per_client),
                    )
                    .await;
                let o = o.map_err(ctx(&format!("many clients on the {}", kind.name())))?;
                let i = slot(kind);
                cpu[i].extend(per_op);
                rates[i].push(o.requests_per_sec);
                latencies[i].extend(o.latencies);
                bad[i] += o.lost + o.mismatched;
                if o.lost + o.mismatched > 0 {
                    self.errors.push(format!(
                        "many clients on the {}: {} lost and {} mismatched responses (first: {})",
                        kind.name(),
                        o.lost,
                        o.mismatched,
                        o.first_problem.unwrap_or_default()
                    ));
                }
            }
        }
        for l in &mut latencies {
            l.sort_unstable();
        }
        let label = format!(
            "{} clients × {}: throughput",
            thousands(p.clients as u64),
            p.per_client
        );
        let mut row = Row::new(
            label,
            Unit::PerSec,
            median_f64(&rates[1]),
            Some(median_f64(&rates[0])),
        );
        if let Some(s) = spread(&rates[1], " /s") {
            row = row.note(s);
        }
        self.rows.push(row);
        self.rows.push(Row::new(
            format!("{} clients: p99 latency", thousands(p.clients as u64)),
            Unit::Millis,
            micros(quantile(&latencies[1], 0.99)) / 1_000.0,
            Some(micros(quantile(&latencies[0], 0.99)) / 1_000.0),
        ));
        self.cpu_row(
            format!(
                "{} clients: server CPU per request (connect included)",
                thousands(p.clients as u64)
            ),
            &cpu,
        );
        self.rows.push(
            Row::new(
                format!(
                    "{} clients: lost or mismatched",
                    thousands(p.clients as u64)
                ),
                Unit::Count,
                bad[1] as f64,
                Some(bad[0] as f64),
            )
            .goal(Goal::AtMost(0.0, "")),
        );
        Ok(())
    }

    async fn streaming(&mut self, fake: &FakeProvider) -> Result<(), String> {
        let p = self.plan.clone();
        progress(format!(
            "streaming: {} of one turn of {} chunks",
            count(p.stream_rounds, "round"),
            thousands(p.chunks as u64)
        ));
        let mut floor_conn = Conn::open(&self.socket(Kind::Floor))
            .await
            .map_err(ctx("connect to the floor"))?;
        let mut daemon_conn = Conn::open(&self.socket(Kind::Daemon))
            .await
            .map_err(ctx("connect to the daemon"))?;
        let cwd = serde_json::to_string(&self.dir.display().to_string()).unwrap_or_default();
        let mut rates = [Vec::new(), Vec::new()];
        let mut firsts = [Vec::new(), Vec::new()];
        let mut asked = Vec::new();
        // Per daemon round: from the provider having the request (it answers at once) to
        // the client's first chunk, the issue's "provider's first byte to first chunk".
        let mut from_provider = Vec::new();
        let mut cpu = [Vec::new(), Vec::new()];
        'rounds: for round in 0..p.stream_rounds.max(1) {
            for kind in order(round) {
                let before = self.cpu(kind);
                let outcome = match kind {
                    Kind::Floor => {
                        let params = format!(
                            r#"{{"n":{},"text":"{CHUNK}","sessionId":"{FLOOR_SESSION}","turnId":"{FLOOR_TURN}"}}"#,
                            p.chunks
                        );
                        scenarios::stream(&mut floor_conn, "bench/stream", &params, p.chunks).await
                    }
                    Kind::Daemon => {
                        let created = daemon_conn
                            .call_value("session/new", &format!(r#"{{"cwd":{cwd}}}"#))
                            .await
                            .map_err(ctx("session/new"))?;
                        let session = created
                            .get("sessionId")
                            .and_then(|v| v.as_str())
                            .ok_or("session/new answered without a sessionId")?
                            .to_owned();
                        fake.push(openai::many_chunks(p.chunks, CHUNK));
                        let params =
                            format!(r#"{{"sessionId":"{session}","prompt":"stream please"}}"#);
                        let sent = std::time::Instant::now();
                        let (outcome, request) = tokio::join!(
                            scenarios::stream(
                                &mut daemon_conn,
                                "session/prompt",
                                &params,
                                p.chunks
                            ),
                            async {
                                fake.next_request_timeout(crate::client::HANG_GUARD)
                                    .await
                                    .map(|_| sent.elapsed())
                            }
                        );
                        if let (Some(request), Ok(outcome)) = (request, &outcome) {
                            asked.push(millis(request));
                            from_provider.push(millis(outcome.first_chunk.saturating_sub(request)));
                        }
                        outcome
                    }
                };
                let outcome = match outcome {
                    Ok(outcome) => outcome,
                    Err(e) => {
                        // Recorded as a failure; the other scenarios still run.
                        self.errors.push(format!(
                            "streaming on the {}: {e}{}",
                            kind.name(),
                            procs::log_tail(&self.launcher.log)
                        ));
                        break 'rounds;
                    }
                };
                rates[slot(kind)].push(outcome.chunks_per_sec);
                firsts[slot(kind)].push(millis(outcome.first_chunk));
                if let (Some(a), Some(b)) = (before, self.cpu(kind)) {
                    cpu[slot(kind)].push(b.saturating_sub(a) as f64 / p.chunks as f64 / 1_000.0);
                }
            }
        }
        if rates.iter().any(Vec::is_empty) {
            return Ok(());
        }
        let mut row = Row::new(
            format!(
                "streaming {} chunks: rate at the client",
                thousands(p.chunks as u64)
            ),
            Unit::PerSec,
            median_f64(&rates[1]),
            Some(median_f64(&rates[0])),
        );
        if let Some(s) = spread(&rates[1], " /s") {
            row = row.note(s);
        }
        let done = rates[1].len().min(rates[0].len());
        if done < p.stream_rounds {
            row = row.note(format!(
                "{done} of {} rounds; then chunks were lost",
                p.stream_rounds
            ));
        }
        self.rows.push(row);
        self.rows.push(Row::new(
            "streaming: time to first chunk",
            Unit::Millis,
            median_f64(&firsts[1]),
            Some(median_f64(&firsts[0])),
        ));
        if !asked.is_empty() {
            self.rows.push(Row::new(
                "streaming: prompt sent to provider request received",
                Unit::Millis,
                median_f64(&asked),
                None,
            ));
            // Against the floor's whole request-to-first-chunk time, which has no provider.
            self.rows.push(Row::new(
                "streaming: provider request to first chunk",
                Unit::Millis,
                median_f64(&from_provider),
                Some(median_f64(&firsts[0])),
            ));
        }
        self.cpu_row("streaming: server CPU per chunk".into(), &cpu);
        Ok(())
    }

    /// The gateway against its floor; see `gateway.rs`.
    async fn gateway(&mut self, fake: &FakeProvider) -> Result<(), String> {
        use crate::gateway as gw;
        let p = self.plan.clone();
        let idle = (p.idle_conns / 10).max(10);
        progress(format!(
            "gateway: {} WebSocket round trips, {} pipelined, {} REST `status`, {} chunks over SSE, {} idle WebSockets",
            thousands(p.rt_calls as u64),
            thousands(p.pipe_total as u64),
            thousands(p.rt_calls as u64),
            thousands(p.chunks as u64),
            thousands(idle as u64)
        ));
        let port_file = self.dir.join("gateway-floor.port");
        let _ = std::fs::remove_file(&port_file);
        let log = std::fs::File::options()
            .create(true)
            .append(true)
            .open(&self.launcher.log)
            .map_err(ctx("open the log"))?;
        let mut floor = std::process::Command::new(&self.launcher.bench_bin)
            .arg("--gateway-floor-server")
            .arg(&port_file)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(ctx("start the gateway floor"))?;
        let floor_pid = floor.id();
        let outcome = async {
            let floor_url = format!("http://{}", gw::floor_addr(&port_file).await.map_err(ctx("the gateway floor"))?);
            let daemon = self
                .launcher
                .start(Kind::Daemon)
                .map_err(ctx("start the daemon"))?;
            let mut conn = Conn::open(&daemon.socket).await.map_err(ctx("connect to the daemon"))?;
            let status = conn.call_value("status", "{}").await.map_err(ctx("status"))?;
            let url = status
                .get("gateway")
                .and_then(|g| g.get("url"))
                .and_then(|u| u.as_str())
                .ok_or_else(|| format!("the daemon's gateway is not serving: {status}"))?
                .to_owned();
            let created = conn
                .call_value(
                    "token/create",
                    &format!(r#"{{"name":"bench-{}","scope":"admin"}}"#, daemon.pid()),
                )
                .await
                .map_err(ctx("token/create"))?;
            let token = created
                .get("token")
                .and_then(|t| t.as_str())
                .ok_or("token/create answered without a token")?
                .to_owned();
            let ws_url = |base: &str| format!("{}/rpc", base.replacen("http", "ws", 1));
            let pids = [floor_pid, daemon.pid()];
            let cpu = |kind: Kind| procs::cpu_ns(pids[slot(kind)]).ok();

            // WebSocket round trips and pipelining.
            let rounds = p.rt_rounds.max(1);
            let per_round = p.rt_calls.div_ceil(rounds);
            let warmup = p.rt_warmup.div_ceil(rounds);
            let mut trips = [Vec::new(), Vec::new()];
            let mut rates = [Vec::new(), Vec::new()];
            let mut rest = [Vec::new(), Vec::new()];
            let mut ws_cpu = [Vec::new(), Vec::new()];
            for round in 0..rounds {
                for kind in order(round) {
                    let (base, token) = match kind {
                        Kind::Floor => (floor_url.as_str(), None),
                        Kind::Daemon => (url.as_str(), Some(token.as_str())),
                    };
                    let mut ws = gw::connect(&ws_url(base), token).await.map_err(ctx("open a WebSocket"))?;
                    let before = cpu(kind);
                    let t = gw::round_trips(&mut ws, warmup, per_round).await.map_err(ctx("WebSocket round trips"))?;
                    if let (Some(a), Some(b)) = (before, cpu(kind)) {
                        ws_cpu[slot(kind)].push(b.saturating_sub(a) as f64 / (warmup + per_round) as f64 / 1_000.0);
                    }
                    trips[slot(kind)].extend(t);
                    let r = gw::pipelined(&mut ws, p.pipe_total.div_ceil(rounds), p.pipe_depth)
                        .await
                        .map_err(ctx("WebSocket pipelined"))?;
                    rates[slot(kind)].push(r);
                    let r = gw::rest_status(base, token.unwrap_or("none"), per_round / 2 + 1, 8)
                        .await
                        .map_err(ctx("REST status"))?;
                    rest[slot(kind)].push(r);
                }
            }
            for t in &mut trips {
                t.sort_unstable();
            }
            let [f, d] = &trips;
            self.rows.push(
                Row::new(
                    format!("gateway: WebSocket round trip p50 ({} `status`)", thousands(d.len() as u64)),
                    Unit::Micros,
                    micros(quantile(d, 0.5)),
                    Some(micros(quantile(f, 0.5))),
                )
                .goal(Goal::RatioAtMost(1.25))
                .note("floor: axum WebSocket echo"),
            );
            self.rows.push(Row::new(
                "gateway: WebSocket round trip p99",
                Unit::Micros,
                micros(quantile(d, 0.99)),
                Some(micros(quantile(f, 0.99))),
            ));
            self.cpu_row("gateway: server CPU per WebSocket call".into(), &ws_cpu);
            self.rows.push(
                Row::new(
                    format!("gateway: WebSocket pipelined, {} in flight", p.pipe_depth),
                    Unit::PerSec,
                    median_f64(&rates[1]),
                    Some(median_f64(&rates[0])),
                )
                .goal(Goal::RatioAtLeast(0.8)),
            );
            self.rows.push(
                Row::new(
                    "gateway: REST GET /api/v1/status, 8 keep-alive connections",
                    Unit::PerSec,
                    median_f64(&rest[1]),
                    Some(median_f64(&rest[0])),
                )
                .note("floor: an axum handler with a fixed body; the daemon opens an in-process connection per request"),
            );

            // SSE against the daemon's own socket, the same turn.
            let mut sse = Vec::new();
            let mut socket = Vec::new();
            let cwd = serde_json::to_string(&self.dir.display().to_string()).unwrap_or_default();
            for _ in 0..p.stream_rounds.max(1) {
                let created = conn
                    .call_value("session/new", &format!(r#"{{"cwd":{cwd}}}"#))
                    .await
                    .map_err(ctx("session/new"))?;
                let session = created
                    .get("sessionId")
                    .and_then(|v| v.as_str())
                    .ok_or("session/new answered without a sessionId")?
                    .to_owned();
                fake.push(openai::many_chunks(p.chunks, CHUNK));
                let params = format!(r#"{{"sessionId":"{session}","prompt":"stream please"}}"#);
                let outcome = scenarios::stream(&mut conn, "session/prompt", &params, p.chunks)
                    .await
                    .map_err(ctx("streaming over the socket"))?;
                socket.push(outcome.chunks_per_sec);
                // Its own session, made over REST: the socket connection above stays attached
                // to the first one and is not read meanwhile.
                let sse_session = gw::rest_new_session(&url, &token, &self.dir.display().to_string())
                    .await
                    .map_err(ctx("POST /api/v1/sessions"))?;
                fake.push(openai::many_chunks(p.chunks, CHUNK));
                let rate = gw::sse_prompt(&url, &token, &sse_session, p.chunks)
                    .await
                    .map_err(ctx("streaming over SSE"))?;
                sse.push(rate);
            }
            self.rows.push(
                Row::new(
                    format!("gateway: SSE streaming {} chunks (floor: the socket)", thousands(p.chunks as u64)),
                    Unit::PerSec,
                    median_f64(&sse),
                    Some(median_f64(&socket)),
                )
                .note("floor column: the same turn over the daemon's socket"),
            );

            // Memory per idle WebSocket.
            let mut per = [0.0f64; 2];
            for kind in [Kind::Floor, Kind::Daemon] {
                let (base, tok) = match kind {
                    Kind::Floor => (floor_url.as_str(), None),
                    Kind::Daemon => (url.as_str(), Some(token.as_str())),
                };
                tokio::time::sleep(SETTLE).await;
                let before = procs::rss_of(pids[slot(kind)]).map_err(ctx("read RSS"))?;
                let conns = gw::open_many(&ws_url(base), tok, idle).await.map_err(ctx("open idle WebSockets"))?;
                tokio::time::sleep(SETTLE).await;
                let after = procs::rss_of(pids[slot(kind)]).map_err(ctx("read RSS"))?;
                drop(conns);
                per[slot(kind)] = after.saturating_sub(before) as f64 / idle as f64 / 1024.0;
            }
            self.rows.push(Row::new(
                format!("gateway: memory per idle WebSocket ({} open)", thousands(idle as u64)),
                Unit::KiB,
                per[1],
                Some(per[0]),
            ));
            drop(conn);
            daemon.stop().map_err(ctx("stop the daemon"))?;
            Ok::<(), String>(())
        }
        .await;
        let _ = floor.kill();
        let _ = floor.wait();
        outcome
    }

    async fn memory(&mut self) -> Result<(), String> {
        let n = self.plan.idle_conns;
        progress(format!(
            "memory: RSS idle, and with {} idle initialized connections",
            thousands(n as u64)
        ));
        let mut idle = [0u64; 2];
        let mut with = [0u64; 2];
        for kind in [Kind::Floor, Kind::Daemon] {
            let server = self
                .launcher
                .start(kind)
                .map_err(ctx(&format!("start the {}", kind.name())))?;
            tokio::time::sleep(SETTLE).await;
            idle[slot(kind)] = server.rss().map_err(ctx("read RSS"))?;
            let conns = scenarios::open_many(&server.socket, n)
                .await
                .map_err(ctx(&format!("open {n} connections to the {}", kind.name())))?;
            tokio::time::sleep(SETTLE).await;
            with[slot(kind)] = server.rss().map_err(ctx("read RSS"))?;
            drop(conns);
            server
                .stop()
                .map_err(ctx(&format!("stop the {}", kind.name())))?;
        }
        let per = |i: usize| with[i].saturating_sub(idle[i]) as f64 / n.max(1) as f64 / 1024.0;
        self.rows.push(
            Row::new("RSS idle", Unit::MiB, mib(idle[1]), Some(mib(idle[0])))
                .goal(Goal::Below(15.0, "MiB")),
        );
        self.rows.push(Row::new(
            format!("RSS with {} idle connections", thousands(n as u64)),
            Unit::MiB,
            mib(with[1]),
            Some(mib(with[0])),
        ));
        self.rows.push(
            Row::new("per idle connection", Unit::KiB, per(1), Some(per(0)))
                .goal(Goal::Below(16.0, "KiB")),
        );
        Ok(())
    }

    fn startup(&mut self) -> Result<(), String> {
        let p = self.plan.clone();
        progress(format!(
            "start-up: {} of each to accepting, {}",
            count(p.startups, "exec"),
            count(p.ephemeral_runs, "ephemeral exit")
        ));
        let config_dir = self.dir.join("start");
        std::fs::create_dir_all(&config_dir)
            .map_err(|e| format!("{}: {e}", config_dir.display()))?;
        // The first start creates the database; later ones are the usual case.
        self.start_once(Kind::Daemon, &config_dir)?;
        let mut times = [Vec::new(), Vec::new()];
        for round in 0..p.startups.max(1) {
            for kind in order(round) {
                let t = self.start_once(kind, &config_dir)?;
                times[slot(kind)].push(millis(t));
            }
        }
        self.rows.push(Row::new(
            format!("start-up: exec to accepting (median of {})", p.startups),
            Unit::Millis,
            median_f64(&times[1]),
            Some(median_f64(&times[0])),
        ));
        let mut exits = Vec::new();
        for _ in 0..p.ephemeral_runs.max(1) {
            let mut server = self
                .launcher
                .spawn_in(Kind::Daemon, &config_dir, true)
                .map_err(ctx("start an ephemeral daemon"))?;
            let stream = server
                .connect_when_accepting()
                .map_err(ctx("wait for the ephemeral daemon"))?;
            let stream = procs::initialize_on(stream)
                .map_err(|e| server.failure("initialize the ephemeral daemon", e))?;
            let left = std::time::Instant::now();
            drop(stream);
            server
                .wait_exit()
                .map_err(ctx("wait for the ephemeral daemon to exit"))?;
            exits.push(left.elapsed().as_secs_f64());
        }
        let mut row = Row::new(
            "ephemeral: last client leaves to exit (1 s grace)",
            Unit::Secs,
            median_f64(&exits),
            None,
        )
        .goal(Goal::AtMost(1.1, "s"));
        if exits.len() > 1 {
            let min = exits.iter().copied().fold(f64::INFINITY, f64::min);
            let max = exits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            row = row.note(format!("{min:.3}–{max:.3} s over {} runs", exits.len()));
        }
        self.rows.push(row);
        Ok(())
    }

    /// Exec to the socket accepting, then stop it.
    fn start_once(&self, kind: Kind, config_dir: &Path) -> Result<Duration, String> {
        let started = std::time::Instant::now();
        let mut server = self
            .launcher
            .spawn_in(kind, config_dir, false)
            .map_err(ctx(&format!("start the {}", kind.name())))?;
        server
            .wait_accepting()
            .map_err(ctx(&format!("wait for the {}", kind.name())))?;
        let took = started.elapsed();
        server
            .stop()
            .map_err(ctx(&format!("stop the {}", kind.name())))?;
        Ok(took)
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

//! `zeroclaw-bench`: measures the real `zeroclaw` daemon, and a minimal NDJSON server (the
//! floor) in the same run, on the same machine, with the same client code, and reports every
//! figure as a ratio to the floor's.
//!
//! Build both binaries first, so the bench finds the daemon beside itself:
//!
//! ```sh
//! cargo build --release -p zeroclaw -p zeroclaw-bench
//! target/release/zeroclaw-bench --markdown docs/benchmarks.md
//! target/release/zeroclaw-bench --smoke        # seconds, tiny counts, no thresholds (CI)
//! ```

use clap::{Parser, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[cfg(unix)]
mod client;
#[cfg(unix)]
mod fill;
#[cfg(unix)]
mod floor;
#[cfg(unix)]
mod gateway;
#[cfg(unix)]
mod plan;
#[cfg(unix)]
mod procs;
#[cfg(unix)]
mod replay_floor;
#[cfg(unix)]
mod report;
#[cfg(unix)]
mod run;
#[cfg(unix)]
mod scenarios;
#[cfg(unix)]
mod stats;
#[cfg(unix)]
mod workspace;

#[derive(Debug, Parser)]
#[command(
    name = "zeroclaw-bench",
    version,
    about = "Benchmark the zeroclaw daemon against a minimal NDJSON server (the floor)",
    long_about = "Starts the real daemon binary (`zeroclaw daemon`) in a temporary config dir and \
measures round-trip latency, pipelined throughput, many concurrent clients, streaming from a fake \
LLM provider, memory per connection and start-up. Every figure is also measured on a floor: a \
minimal tokio Unix-socket server (this binary in a hidden mode, as a separate process like the \
daemon) that parses each line with serde_json and answers without validation or dispatch. Both \
are driven by the same small NDJSON client, interleaved in time, so each ratio compares like with \
like on this machine, now.\n\n\
Build first: `cargo build --release -p zeroclaw -p zeroclaw-bench`. The daemon is looked for \
beside this executable (target/release/zeroclaw) unless --daemon is given. The bench raises its \
RLIMIT_NOFILE soft limit to the hard limit before it starts any process, so the daemon and the \
floor inherit it (10,000 idle connections need about 10,100 descriptors on each side).",
    after_help = "Exit status: 0 when every measurement ran and no answer or chunk was lost, 1 \
otherwise. A missed goal is reported in the table, not an error.\n\n\
Examples:\n  zeroclaw-bench                                  # the full run, about a minute here\n  zeroclaw-bench --markdown docs/benchmarks.md    # and write the report\n  zeroclaw-bench --smoke                          # seconds; for CI, no thresholds\n  zeroclaw-bench --quick --only round-trip,pipelined"
)]
pub struct Args {
    /// The `zeroclaw` binary to benchmark (default: `zeroclaw` beside this executable).
    #[arg(long, value_name = "PATH")]
    pub daemon: Option<PathBuf>,

    /// Also write the report (table, machine, command) to FILE as Markdown. If FILE already
    /// has the `<!-- bench:begin … -->` and `<!-- bench:end -->` markers, only the text
    /// between them is replaced, so hand-written sections (findings) survive a re-run.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,

    /// A seconds-long run with tiny counts (200 round trips, one pipelined burst, 20 clients
    /// × 10, 1,000 chunks, 100 idle connections, 2 start-ups; growth at 100 / 1,000 / 10,000
    /// messages, 10 / 100 / 1,000 sessions, 1 / 5 / 10 turns of 200 chunks; 10 sandboxed
    /// `bash -c true`; checkpoints of 200 files, no pauses) and no thresholds: for CI.
    /// Exits 0 unless something fails (a lost or mismatched response is a failure).
    #[arg(long, conflicts_with = "quick")]
    pub smoke: bool,

    /// A shorter run (about a quarter of the counts) that still checks the goals.
    #[arg(long)]
    pub quick: bool,

    /// Run only these scenarios (comma-separated; default: all).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "LIST")]
    pub only: Vec<Scenario>,

    /// Keep the temporary directory (config, database, daemon log) and print its path.
    #[arg(long)]
    pub keep_dir: bool,

    /// Internal: serve as the floor on this socket path (how the bench starts its floor).
    #[arg(long, hide = true, value_name = "SOCKET")]
    pub floor_server: Option<PathBuf>,

    /// Internal: serve as the replay floor on this socket path, reading --replay-floor-db.
    #[arg(long, hide = true, value_name = "SOCKET", requires = "replay_floor_db")]
    pub replay_floor_server: Option<PathBuf>,

    /// Internal: the database the replay floor reads.
    #[arg(long, hide = true, value_name = "FILE")]
    pub replay_floor_db: Option<PathBuf>,

    /// Internal: serve as the gateway's floor (axum) on 127.0.0.1:0, its port written to FILE.
    #[arg(long, hide = true, value_name = "FILE")]
    pub gateway_floor_server: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scenario {
    /// Sequential `status` calls on one connection: p50, p99.
    RoundTrip,
    /// One connection keeping 256 requests in flight: requests per second.
    Pipelined,
    /// 1,000 connections × 100 sequential requests, all at once.
    Clients,
    /// One turn streaming 100,000 chunks from the fake provider.
    Streaming,
    /// RSS idle and with 10,000 idle initialized connections.
    Memory,
    /// Exec to accepting (median of 20), and the `--ephemeral` exit delay.
    Startup,
    /// The gateway: WebSocket round trip and pipelined, REST `status`, SSE streaming, memory
    /// per idle WebSocket, against an axum floor (and the socket, for SSE).
    Gateway,
    /// Growth (issue 16), each at three sizes: `session/load` replay of 1k / 10k / 100k
    /// messages against a floor reading the same SQLite file, `session/list` with 100 / 1k /
    /// 10k sessions, 1 / 10 / 50 concurrent streaming turns, RSS per loaded session, and
    /// `session/compact` of ~1k / 10k / 100k tokens.
    Growth,
    /// The sandbox's added cost per `bash` call: `bash -c true` confined vs unconfined.
    Sandbox,
    /// Checkpoints: a turn's end snapshot, the bytes it adds and its rewind, on workspaces
    /// of 1k / 10k / 50k files with 1 and 100 files changed.
    Checkpoints,
}

fn main() -> ExitCode {
    let args = Args::parse();
    #[cfg(unix)]
    {
        if let Some(socket) = &args.floor_server {
            return floor::serve(socket);
        }
        if let (Some(socket), Some(db)) = (&args.replay_floor_server, &args.replay_floor_db) {
            return replay_floor::serve(socket, db);
        }
        if let Some(file) = &args.gateway_floor_server {
            return gateway::serve_floor(file);
        }
        run::main(args)
    }
    #[cfg(not(unix))]
    {
        let _ = args;
        eprintln!(
            "zeroclaw-bench: unix only (it measures the daemon's Unix socket); nothing to do here"
        );
        ExitCode::SUCCESS
    }
}

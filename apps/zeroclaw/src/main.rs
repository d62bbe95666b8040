//! `zeroclaw`: the daemon and its command-line client.

mod commands;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "zeroclaw",
    version,
    about = "A local AI-agent daemon and its command-line client",
    long_about = "zeroclaw runs an AI agent as a local daemon. Clients talk to it with JSON-RPC 2.0 \
over NDJSON on a Unix socket (a named pipe on Windows).\n\n\
The endpoint is <data dir>/daemon.sock, where the data dir is <config dir>/data and the config \
dir is --config-dir, $ZEROCLAW_CONFIG_DIR or ~/.zeroclaw. $ZEROCLAW_DATA_DIR overrides the data \
dir and $ZEROCLAW_SOCKET the endpoint itself.",
    after_help = "Examples:\n  zeroclaw daemon                 # run the daemon in the foreground\n  zeroclaw status                 # is it up? what is it doing?\n  socat READLINE UNIX-CONNECT:$(zeroclaw endpoint)\n  zeroclaw stop"
)]
struct Cli {
    /// Configuration directory (default: $ZEROCLAW_CONFIG_DIR, else ~/.zeroclaw).
    #[arg(long, global = true, value_name = "DIR")]
    config_dir: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the daemon in the foreground until SIGTERM, Ctrl-C or `zeroclaw stop`.
    #[command(
        after_help = "Examples:\n  zeroclaw daemon\n  ZEROCLAW_SOCKET=/tmp/zc.sock zeroclaw daemon\n  RUST_LOG=debug zeroclaw daemon --config-dir ./dev-config"
    )]
    Daemon {
        /// Exit one second after the last client disconnects (never before the first one
        /// has connected). Clients that start a daemon for themselves use this.
        #[arg(long)]
        ephemeral: bool,
    },
    /// Show whether a daemon is running, and what it is doing.
    #[command(after_help = "Examples:\n  zeroclaw status\n  zeroclaw status --json | jq .uptimeMs")]
    Status {
        /// Print the daemon's raw `status` result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Ask the running daemon to shut down, and wait until it has.
    #[command(after_help = "Example:\n  zeroclaw stop")]
    Stop,
    /// Print the endpoint the daemon listens on (socket path or pipe name).
    #[command(after_help = "Example:\n  socat READLINE UNIX-CONNECT:$(zeroclaw endpoint)")]
    Endpoint,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The daemon narrates its lifecycle; a client command stays quiet unless asked.
    init_logging(if matches!(cli.command, Command::Daemon { .. }) {
        "info"
    } else {
        "warn"
    });
    let paths = match zeroclaw_ipc::resolve(cli.config_dir.as_deref()) {
        Ok(paths) => paths,
        Err(e) => return fail(&e),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("cannot start the async runtime: {e}")),
    };
    let outcome = runtime.block_on(async move {
        match cli.command {
            Command::Daemon { ephemeral } => commands::daemon(paths, ephemeral).await,
            Command::Status { json } => commands::status(&paths, json).await,
            Command::Stop => commands::stop(&paths).await,
            Command::Endpoint => {
                println!("{}", paths.endpoint);
                Ok(())
            }
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => fail(&message),
    }
}

fn fail(message: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("zeroclaw: {message}");
    ExitCode::FAILURE
}

/// Logs go to stderr, never to a socket; `RUST_LOG` overrides the default level.
fn init_logging(default_level: &str) {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
}

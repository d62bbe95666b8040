//! `zerocode`: the interactive terminal client for the zeroclaw daemon. A line-mode client
//! (rustyline, not a full-screen TUI): the turn streams into the terminal's own scrollback.

mod app;
mod approval;
mod complete;
mod forms;
mod images;
mod input;
mod interrupts;
mod markdown;
mod mentions;
mod plan;
mod render;
mod status;
mod subagents;
mod summary;
mod term;
mod units;
mod usage;

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "zerocode",
    version,
    about = "Talk to the zeroclaw agent in your terminal",
    long_about = "Talk to the zeroclaw agent in your terminal. zerocode connects to the daemon of \
the config dir (--config-dir, $ZEROCLAW_CONFIG_DIR or ~/.zeroclaw; $ZEROCLAW_SOCKET overrides \
the endpoint). When none is running it starts `zeroclaw daemon --ephemeral`, which exits about a \
second after its last client leaves. The daemon binary is the `zeroclaw` beside zerocode's own \
executable, else `zeroclaw` on PATH.\n\n\
Answers stream into the terminal's scrollback. A tool call that needs approval first shows \
what it would do (a coloured diff of the file, or the command and its cwd), then one key \
answers: y allows once, a always (this tool, this session), n or Esc rejects; Ctrl-C rejects and \
cancels the turn. Questions from the agent are shown as short forms.\n\n\
The prompt history is kept in <data dir>/zerocode_history (1000 entries).\n\n\
Answers are rendered Markdown (code highlighted), each block printed once it is complete; \
set NO_COLOR (or pipe the output) for clean text. While a turn runs, a status line at the \
bottom shows the phase, elapsed time, an estimate of the tokens so far, how full the model's \
context window is and the session's cost (with [provider.pricing]); a provider's retries and \
fallbacks are said as they happen.\n\n\
Exit status: 0 on /quit, Ctrl-D or Ctrl-C twice at the prompt; 1 on an error or when the \
daemon went away; 130 on Ctrl-C twice during a turn.",
    after_help = "Commands at the prompt: /help, /status, /model [NAME], /new, /clear, /sessions, \
/load ID|N, /cancel, /compact, /quit (Tab completes them).\n\n\
Prompts: Alt-Enter or a trailing \\ adds a line, and a pasted block is sent as one prompt. \
@path attaches a file under the session's directory (Tab completes the name; at most 100 KiB \
a file and 256 KiB in all, binary files and paths leaving the directory refused); @shot.png, or \
an image's path pasted on a line of its own, sends the image (PNG, JPEG, GIF, WebP, at most \
5 MiB). Ctrl-R searches the prompt history.\n\n\
Examples:\n  zerocode                       # a new session in the current directory\n  zerocode --resume              # pick one of the recent sessions\n  zerocode --session 3b60b909-…  # continue a session, with its history shown\n  zerocode --cwd ~/src/project"
)]
struct Cli {
    /// Configuration directory (default: $ZEROCLAW_CONFIG_DIR, else ~/.zeroclaw).
    #[arg(long, value_name = "DIR")]
    config_dir: Option<PathBuf>,
    /// Resume this session: its id, or a unique prefix like the short id in the banner
    /// (its history is shown first).
    #[arg(long, value_name = "ID", conflicts_with = "resume")]
    session: Option<String>,
    /// Pick a recent session to resume from a numbered list.
    #[arg(long)]
    resume: bool,
    /// Working directory of new sessions (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let paths = match zeroclaw_ipc::resolve(cli.config_dir.as_deref()) {
        Ok(paths) => paths,
        Err(e) => {
            eprintln!("zerocode: {e}");
            return ExitCode::FAILURE;
        }
    };
    term::save();
    let _restore = term::RestoreOnDrop;
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("zerocode: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let options = app::Options {
        session: cli.session,
        resume: cli.resume,
        cwd: cli.cwd,
    };
    let code = runtime.block_on(app::run(paths, options));
    // A line read may still be blocked on the terminal (the daemon went away during it):
    // do not wait for it.
    runtime.shutdown_background();
    term::restore();
    ExitCode::from(code)
}

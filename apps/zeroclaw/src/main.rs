//! `zeroclaw`: the daemon and its command-line client.

mod acp;
mod commands;
mod help;
mod remote_args;
mod terminal;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use remote_args::RemoteArgs;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "zeroclaw",
    version,
    about = "A local AI-agent daemon and its command-line client",
    long_about = help::LONG_ABOUT,
    after_help = help::EXAMPLES
)]
struct Cli {
    /// Configuration directory (default: ZEROCLAW_CONFIG_DIR, else .zeroclaw in your home
    /// directory).
    #[arg(long, global = true, value_name = "DIR")]
    config_dir: Option<PathBuf>,

    /// For the commands that talk to a daemon: its gateway instead of the local socket.
    #[command(flatten)]
    remote: RemoteArgs,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApproveMode {
    /// Ask on the terminal, one key: y (once), n (reject), a (always, for this tool in this
    /// session), ? (show the whole call).
    Ask,
    /// Allow every tool call.
    All,
    /// Reject every tool call that needs approval.
    None,
}

/// A session's permission mode, as `--mode` takes it (docs/protocol.md, Permission modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Look and plan, change nothing: only read-only tools; the agent ends by asking to
    /// start with its plan.
    Plan,
    /// Ask as `[approvals]` says.
    Default,
    /// File edits inside the working directory go through without asking; bash still asks.
    AcceptEdits,
    /// Every tool call goes through without asking, inside the sandbox only.
    Auto,
}

impl ModeArg {
    pub fn mode(self) -> zeroclaw_client::protocol::methods::PermissionMode {
        use zeroclaw_client::protocol::methods::PermissionMode as M;
        match self {
            ModeArg::Plan => M::Plan,
            ModeArg::Default => M::Default,
            ModeArg::AcceptEdits => M::AcceptEdits,
            ModeArg::Auto => M::Auto,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the daemon in the foreground until SIGTERM, Ctrl-C or `zeroclaw stop`.
    #[command(after_help = help::DAEMON_EXAMPLES)]
    Daemon {
        /// Exit one second after the last client disconnects (never before the first one
        /// has connected). Clients that start a daemon for themselves use this.
        #[arg(long)]
        ephemeral: bool,
        /// Serve the HTTP/WebSocket gateway on ADDR (e.g. 127.0.0.1:0), whatever the
        /// config says.
        #[arg(long, value_name = "ADDR", conflicts_with = "no_gateway")]
        gateway: Option<String>,
        /// Do not serve the gateway.
        #[arg(long)]
        no_gateway: bool,
        /// Exit after DURATION (30s, 5m, 1h) with no connection open and no turn running.
        /// Meant for a socket-activated daemon: the service manager keeps the socket and
        /// starts it again on the next connection (docs/service.md).
        #[arg(long, value_name = "DURATION", value_parser = parse_duration, conflicts_with = "ephemeral")]
        exit_when_idle: Option<std::time::Duration>,
    },
    /// Send one prompt to the agent and stream its answer to stdout.
    #[command(
        long_about = "Send one prompt to the agent and stream its answer to stdout. Tool calls and \
their results go to stderr. Starts an ephemeral daemon if none is running.\n\n\
Exit status: 0 the agent finished its turn, 1 error, 3 it stopped at agent.max_steps, \
4 it stopped at a budget ([limits]), 130 the turn was cancelled (Ctrl-C).",
        after_help = "Examples:\n  zeroclaw prompt \"summarise README.md\"\n  git diff | zeroclaw prompt --approve none -\n  zeroclaw prompt --session 3b60b909 \"and now fix it\"\n  zeroclaw prompt --command fix-issue 123 high\n  zeroclaw prompt --mode plan \"how would you split src/main.rs?\"\n  zeroclaw prompt --image shot.png \"why is this button misaligned?\""
    )]
    Prompt {
        #[command(flatten)]
        remote: RemoteArgs,
        /// The prompt (`-` reads it from stdin); with --command, the command's arguments.
        #[arg(required_unless_present = "command")]
        text: Vec<String>,
        /// Send custom command NAME's prompt (a NAME.md of the project's .zeroclaw/commands/
        /// or the config dir's commands/), its arguments filled in (docs/project.md).
        #[arg(long, value_name = "NAME")]
        command: Option<String>,
        /// Continue this session instead of starting a new one.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Working directory of a new session (default: the current directory).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// How to answer approval requests (default: ask when stdin is a terminal, else none).
        #[arg(long, value_enum)]
        approve: Option<ApproveMode>,
        /// Set the session's permission mode before the prompt (it stays the session's).
        #[arg(long, value_enum)]
        mode: Option<ModeArg>,
        /// Send this image with the prompt (PNG, JPEG, GIF or WebP, at most 5 MiB; repeat
        /// for more, at most 10).
        #[arg(long, value_name = "FILE")]
        image: Vec<PathBuf>,
    },
    /// Make one raw JSON-RPC call and print its result.
    #[command(
        after_help = "Examples:\n  zeroclaw call status\n  zeroclaw call session/list\n  zeroclaw call session/messages '{\"sessionId\":\"...\",\"limit\":5}'\n  zeroclaw call --events session/load '{\"sessionId\":\"...\",\"replay\":true}'"
    )]
    Call {
        #[command(flatten)]
        remote: RemoteArgs,
        /// The method, e.g. `status` or `session/list`.
        method: String,
        /// The params, as a JSON object or array (default `{}`).
        params: Option<String>,
        /// Also print notifications that arrive meanwhile, as NDJSON on stderr.
        #[arg(long)]
        events: bool,
        /// Seconds to wait for the answer.
        #[arg(long, default_value_t = 30)]
        timeout: u64,
    },
    /// List sessions, show one's history, rewind or fork one.
    #[command(
        after_help = "Examples:\n  zeroclaw sessions\n  zeroclaw sessions --json\n  zeroclaw sessions show 3b60b909\n  zeroclaw sessions checkpoints 3b60b909\n  zeroclaw sessions rewind 3b60b909 2\n  zeroclaw sessions fork 3b60b909 2"
    )]
    Sessions {
        #[command(flatten)]
        remote: RemoteArgs,
        #[command(subcommand)]
        action: Option<SessionsAction>,
        /// Print JSON instead of a table.
        #[arg(long, global = true)]
        json: bool,
        /// List only sessions whose title or working directory contains TEXT.
        #[arg(long, value_name = "TEXT")]
        search: Option<String>,
    },
    /// Check, back up or recover the session database (<data dir>/zeroclaw.db).
    #[command(
        long_about = "Check, back up or recover the session database (<data dir>/zeroclaw.db). \
`check`, `recover` and `prune` refuse while a daemon runs on the data dir, whatever its endpoint \
(stop it first); `backup` works beside one, reading the live store. `prune` drops the checkpoint \
snapshots of sessions and rewinds the database no longer holds.\n\n\
Exit status of `check`: 0 healthy, 1 could not check, 2 problems found.",
        after_help = "Examples:\n  zeroclaw store check\n  zeroclaw store backup ~/zeroclaw-backup.db\n  zeroclaw stop && zeroclaw store recover\n  zeroclaw stop && zeroclaw store prune"
    )]
    Store {
        #[command(subcommand)]
        action: StoreAction,
    },
    /// Show whether a daemon is running, and what it is doing.
    #[command(after_help = "Examples:\n  zeroclaw status\n  zeroclaw status --json | jq .uptimeMs")]
    Status {
        #[command(flatten)]
        remote: RemoteArgs,
        /// Print the daemon's raw `status` result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the daemon's MCP servers (state, tool count, last error), or one's tools.
    #[command(
        after_help = "Examples:\n  zeroclaw mcp\n  zeroclaw mcp --wait --json\n  zeroclaw mcp tools github"
    )]
    Mcp {
        #[command(flatten)]
        remote: RemoteArgs,
        #[command(subcommand)]
        action: Option<McpAction>,
        /// Answer once no server is starting or restarting.
        #[arg(long)]
        wait: bool,
        /// Print JSON instead of a table.
        #[arg(long, global = true)]
        json: bool,
    },
    /// Unattended runs (webhooks and schedules), newest first.
    #[command(
        after_help = "Examples:\n  zeroclaw runs\n  zeroclaw runs ci-failed\n  zeroclaw runs --json"
    )]
    Runs {
        #[command(flatten)]
        remote: RemoteArgs,
        /// Only the runs of this webhook or schedule.
        name: Option<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// List the schedules with their next run, or run one now.
    #[command(
        after_help = "Examples:\n  zeroclaw schedules\n  zeroclaw schedules run morning-summary --wait"
    )]
    Schedules {
        #[command(flatten)]
        remote: RemoteArgs,
        #[command(subcommand)]
        action: Option<SchedulesAction>,
        /// Print JSON instead of a table.
        #[arg(long, global = true)]
        json: bool,
    },
    /// Ask the running daemon to shut down, and wait until it has.
    #[command(after_help = "Example:\n  zeroclaw stop")]
    Stop {
        #[command(flatten)]
        remote: RemoteArgs,
    },
    /// Mint, list or revoke the gateway's tokens (over the local socket only).
    #[command(
        after_help = "Examples:\n  zeroclaw token create ci --scope read --expires 30d\n  export ZEROCLAW_TOKEN=$(zeroclaw token create laptop)\n  zeroclaw token list\n  zeroclaw token revoke ci"
    )]
    Token {
        #[command(subcommand)]
        action: TokenAction,
    },
    /// Let a project's hooks (<project>/.zeroclaw/hooks.toml) run, or no longer (--revoke).
    #[command(
        long_about = "Let a project's hooks (<project>/.zeroclaw/hooks.toml) run: they are commands \
from a repository, so they run only in projects you trust. PATH is any directory of the project; \
its root (the nearest directory holding .git, else PATH) is what is trusted. The list is kept in \
<data dir>/trusted_projects.json; a running daemon follows it from each session's next turn. \
See docs/project.md.",
        after_help = "Examples:\n  zeroclaw trust .\n  zeroclaw trust --revoke ~/src/app"
    )]
    Trust {
        /// A directory of the project.
        path: PathBuf,
        /// Stop trusting it.
        #[arg(long)]
        revoke: bool,
    },
    /// Print a one-time login link to the gateway's dashboard (valid 5 minutes, once).
    #[command(after_help = "Examples:\n  zeroclaw dashboard\n  zeroclaw dashboard --open")]
    Dashboard {
        /// Open the link in the default browser (through a 0600 redirect file in the data
        /// dir: the code never goes on a command line).
        #[arg(long)]
        open: bool,
    },
    /// Print the endpoint the daemon listens on (socket path or pipe name).
    #[command(after_help = help::ENDPOINT_EXAMPLE)]
    Endpoint,
    /// Be an Agent Client Protocol agent on stdin/stdout, for editors (Zed and others).
    #[command(
        long_about = "Be an Agent Client Protocol (ACP v1) agent on stdin/stdout: an editor starts \
this as its agent and drives zeroclaw sessions through it. Bridges to the daemon of the config \
dir (starting one if none runs); sessions stay the daemon's and go on when the editor leaves. \
Only ACP messages go to stdout; diagnostics go to stderr. See docs/acp.md.\n\n\
Exit status: 0 the editor closed stdin, 1 the daemon went away or could not be reached.",
        after_help = "Example (Zed's settings.json):\n  \"agent_servers\": { \"zeroclaw\": { \"command\": \"zeroclaw\", \"args\": [\"acp\"] } }"
    )]
    Acp,
    /// Install, remove or inspect the daemon as a per-user service started on demand
    /// (systemd socket activation on Linux, a launchd agent on macOS, a logon task on
    /// Windows).
    #[command(
        after_help = "Examples:\n  zeroclaw service install --user --dry-run\n  zeroclaw service install --user\n  zeroclaw service status\n  zeroclaw service uninstall --user\n\nSee docs/service.md."
    )]
    Service {
        #[command(subcommand)]
        action: ServiceAction,
    },
    /// Print a shell completion script.
    #[command(
        after_help = "Examples:\n  zeroclaw completions bash > ~/.local/share/bash-completion/completions/zeroclaw\n  zeroclaw completions zsh > \"${fpath[1]}/_zeroclaw\"\n  zeroclaw completions fish > ~/.config/fish/completions/zeroclaw.fish"
    )]
    Completions { shell: Shell },
}

impl Command {
    /// The command's name, and its `--url` options if it talks to a daemon that may be
    /// remote (see `remote_args`).
    fn remote(&self) -> (&'static str, Option<&RemoteArgs>) {
        match self {
            Command::Prompt { remote, .. } => ("prompt", Some(remote)),
            Command::Call { remote, .. } => ("call", Some(remote)),
            Command::Sessions { remote, .. } => ("sessions", Some(remote)),
            Command::Status { remote, .. } => ("status", Some(remote)),
            Command::Mcp { remote, .. } => ("mcp", Some(remote)),
            Command::Runs { remote, .. } => ("runs", Some(remote)),
            Command::Schedules { remote, .. } => ("schedules", Some(remote)),
            Command::Stop { remote } => ("stop", Some(remote)),
            Command::Daemon { .. } => ("daemon", None),
            Command::Store { .. } => ("store", None),
            Command::Token { .. } => ("token", None),
            Command::Dashboard { .. } => ("dashboard", None),
            Command::Trust { .. } => ("trust", None),
            Command::Endpoint => ("endpoint", None),
            Command::Service { .. } => ("service", None),
            Command::Acp => ("acp", None),
            Command::Completions { .. } => ("completions", None),
        }
    }
}

#[derive(Debug, Subcommand)]
enum SessionsAction {
    /// Print a session's history.
    Show {
        /// The session id, or a unique prefix of it (at least 4 characters).
        id: String,
    },
    /// Set a session's title (an empty title clears it).
    Rename {
        /// The session id, or a unique prefix of it (at least 4 characters).
        id: String,
        /// The new title.
        title: String,
    },
    /// Delete a session and its history (cancelling its turn if one runs).
    Delete {
        /// The session id, or a unique prefix of it (at least 4 characters).
        id: String,
    },
    /// List a session's checkpoints: one before each turn, with the files the turn changed.
    Checkpoints {
        /// The session id, or a unique prefix of it (at least 4 characters).
        id: String,
    },
    /// Put a session's files and conversation back to before a turn (reversible).
    #[command(
        after_help = "CHECKPOINT is a turn number as `checkpoints` lists it, or a checkpoint id (or a unique prefix).\nExamples:\n  zeroclaw sessions rewind 3b60b909 2\n  zeroclaw sessions rewind 3b60b909 2 --files-only"
    )]
    Rewind {
        /// The session id, or a unique prefix of it (at least 4 characters).
        id: String,
        /// The checkpoint: its turn number, its id, or a unique prefix of its id.
        checkpoint: String,
        /// Restore the files only; the conversation stays as it is.
        #[arg(long, conflicts_with = "conversation_only")]
        files_only: bool,
        /// Drop the turns from the conversation only; the files stay as they are.
        #[arg(long)]
        conversation_only: bool,
        /// Overwrite files changed outside the agent since the checkpoint.
        #[arg(long)]
        force: bool,
    },
    /// Undo a session's last rewind (files and conversation).
    Unrewind {
        /// The session id, or a unique prefix of it (at least 4 characters).
        id: String,
        /// The undo id the rewind printed.
        undo_id: String,
        /// Overwrite files changed outside the agent since the rewind.
        #[arg(long)]
        force: bool,
    },
    /// Start a new session from a session's conversation up to a checkpoint (all of it
    /// without one), in the same directory.
    Fork {
        /// The session id, or a unique prefix of it (at least 4 characters).
        id: String,
        /// The checkpoint: its turn number, its id, or a unique prefix of its id.
        checkpoint: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum SchedulesAction {
    /// Run a schedule now: prints its run id (and, with --wait, its end; exit 1 unless done).
    Run {
        /// The schedule's name in `[[schedules]]`.
        name: String,
        /// Wait for the run to end.
        #[arg(long)]
        wait: bool,
    },
}

#[derive(Debug, Subcommand)]
enum McpAction {
    /// Print one server's tools as the model is offered them, with their input schemas.
    Tools {
        /// The server's name in `[[mcp_servers]]`.
        name: String,
    },
}

#[derive(Debug, Subcommand)]
enum TokenAction {
    /// Mint a token; prints it once, alone on stdout's first line.
    Create {
        // The protocol's rule, so help, daemon and docs say one thing.
        #[arg(help = format!("A unique name: {}", zeroclaw_protocol::TOKEN_NAME_RULE))]
        name: String,
        /// read: status, sessions, messages, events; operate: also prompt, cancel,
        /// approve, delete; admin: also shutdown.
        #[arg(long, value_enum, default_value = "operate")]
        scope: ScopeArg,
        /// Expire after this long: 30d, 12h, 90m (default: never).
        #[arg(long, value_name = "DURATION")]
        expires: Option<String>,
    },
    /// List the tokens: name, scope, created, last used, expires (never the secret).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a token: refused from now on, its open connections closed.
    Revoke {
        /// The token's name (or a dashboard session's, `dashboard-…`).
        name: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    Read,
    Operate,
    Admin,
}

impl From<ScopeArg> for zeroclaw_protocol::Scope {
    fn from(scope: ScopeArg) -> Self {
        match scope {
            ScopeArg::Read => zeroclaw_protocol::Scope::Read,
            ScopeArg::Operate => zeroclaw_protocol::Scope::Operate,
            ScopeArg::Admin => zeroclaw_protocol::Scope::Admin,
        }
    }
}

#[derive(Debug, Clone, Copy, clap::Args)]
struct ServiceFlags {
    /// A per-user service (the only kind offered; accepted so scripts can say it).
    #[arg(long)]
    user: bool,
    /// Print what would be written and run; change nothing.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Debug, Subcommand)]
enum ServiceAction {
    /// Write the service's files and enable it (socket activation on Linux).
    Install {
        #[command(flatten)]
        flags: ServiceFlags,
        /// With --dry-run: print another platform's files (linux, macos, windows).
        #[arg(long, value_enum, requires = "dry_run")]
        platform: Option<commands::service::Platform>,
    },
    /// Disable the service and remove its files.
    Uninstall {
        #[command(flatten)]
        flags: ServiceFlags,
    },
    /// Whether the service is installed, enabled and running, and its endpoint.
    Status {
        /// A per-user service (the only kind offered).
        #[arg(long)]
        user: bool,
    },
}

/// `30s`, `5m`, `1h` (humantime's spelling).
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let duration = humantime::parse_duration(text).map_err(|e| e.to_string())?;
    if duration.is_zero() {
        return Err("must be more than zero".into());
    }
    Ok(duration)
}

#[derive(Debug, Subcommand)]
enum StoreAction {
    /// Run SQLite's integrity check, and the rules the daemon opens the file by.
    Check,
    /// Write a consistent copy to FILE (which must not exist) with SQLite's online backup.
    Backup {
        /// Where to write the copy.
        file: PathBuf,
    },
    /// Rebuild the database from every row that can still be read; the old file is kept as
    /// zeroclaw.db.damaged-<unix seconds>.
    Recover,
    /// Drop the checkpoint snapshots (<data dir>/checkpoints) that no session holds any more.
    Prune,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Completions { shell } = cli.command {
        let shell = match shell {
            Shell::Bash => clap_complete::Shell::Bash,
            Shell::Zsh => clap_complete::Shell::Zsh,
            Shell::Fish => clap_complete::Shell::Fish,
        };
        clap_complete::generate(
            shell,
            &mut Cli::command(),
            "zeroclaw",
            &mut std::io::stdout(),
        );
        return ExitCode::SUCCESS;
    }
    // What a service manager passed the daemon, read (and removed from the environment)
    // before any thread starts, so no child process inherits it.
    let service = if matches!(cli.command, Command::Daemon { .. }) {
        // SAFETY: no other thread runs yet: the async runtime is built below, and nothing
        // before this line starts a thread.
        let taken = unsafe {
            zeroclaw_daemon::service::Activation::take_from_env().and_then(|activation| {
                zeroclaw_daemon::service::Notifier::take_from_env().map(|n| (activation, n))
            })
        };
        match taken {
            Ok(taken) => Some(taken),
            Err(e) => return fail(&e),
        }
    } else {
        None
    };
    // The daemon narrates its lifecycle; a client command stays quiet unless asked.
    // rmcp narrates every MCP message at info and debug (tool traffic, not ours to log).
    init_logging(if matches!(cli.command, Command::Daemon { .. }) {
        "info,rmcp=warn"
    } else {
        "warn"
    });
    let paths = match zeroclaw_ipc::resolve(cli.config_dir.as_deref()) {
        Ok(paths) => paths,
        Err(e) => return fail(&e),
    };
    match remote_args::choose(&cli.remote, cli.command.remote()) {
        Ok(Some(remote)) => commands::use_remote(remote),
        Ok(None) => {}
        Err(e) => return fail(&e),
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("cannot start the async runtime: {e}")),
    };
    let outcome = runtime.block_on(async move {
        match cli.command {
            Command::Daemon {
                ephemeral,
                gateway,
                no_gateway,
                exit_when_idle,
            } => {
                let gateway = match (gateway, no_gateway) {
                    (_, true) => zeroclaw_daemon::GatewayChoice::Off,
                    (Some(addr), false) => zeroclaw_daemon::GatewayChoice::Listen(addr),
                    (None, false) => zeroclaw_daemon::GatewayChoice::Config,
                };
                let (activation, notifier) = service.unwrap_or_default();
                let run = commands::DaemonRun {
                    ephemeral,
                    gateway,
                    exit_when_idle,
                    activation,
                    notifier,
                };
                commands::daemon(paths, run).await.map(|()| 0)
            }
            Command::Prompt {
                text,
                command,
                session,
                cwd,
                approve,
                mode,
                image,
                ..
            } => {
                let input = commands::prompt::Input::new(text, command);
                let how = commands::prompt::How {
                    approve,
                    mode: mode.map(ModeArg::mode),
                    images: image,
                };
                commands::prompt::run(&paths, input, session, cwd, how).await
            }
            Command::Call {
                method,
                params,
                events,
                timeout,
                ..
            } => commands::call::run(&paths, &method, params.as_deref(), events, timeout).await,
            Command::Sessions {
                action,
                json,
                search,
                ..
            } => match action {
                None => commands::sessions::list(&paths, json, search).await,
                Some(SessionsAction::Show { id }) => {
                    commands::sessions::show(&paths, &id, json).await
                }
                Some(SessionsAction::Rename { id, title }) => {
                    commands::sessions::rename(&paths, &id, &title).await
                }
                Some(SessionsAction::Delete { id }) => {
                    commands::sessions::delete(&paths, &id).await
                }
                Some(SessionsAction::Checkpoints { id }) => {
                    commands::checkpoints::list(&paths, &id, json).await
                }
                Some(SessionsAction::Rewind {
                    id,
                    checkpoint,
                    files_only,
                    conversation_only,
                    force,
                }) => {
                    let rewind = commands::checkpoints::Rewind {
                        id: &id,
                        checkpoint: &checkpoint,
                        files_only,
                        conversation_only,
                        force,
                        json,
                    };
                    commands::checkpoints::rewind(&paths, rewind).await
                }
                Some(SessionsAction::Unrewind { id, undo_id, force }) => {
                    commands::checkpoints::unrewind(&paths, &id, &undo_id, force).await
                }
                Some(SessionsAction::Fork { id, checkpoint }) => {
                    commands::checkpoints::fork(&paths, &id, checkpoint.as_deref(), json).await
                }
            }
            .map(|()| 0),
            Command::Store { action } => match action {
                StoreAction::Check => commands::store::check(&paths),
                StoreAction::Backup { file } => commands::store::backup(&paths, &file),
                StoreAction::Recover => commands::store::recover(&paths),
                StoreAction::Prune => commands::store::prune(&paths),
            },
            Command::Mcp {
                action, wait, json, ..
            } => match action {
                None => commands::mcp::list(&paths, wait, json).await.map(|()| 0),
                Some(McpAction::Tools { name }) => {
                    commands::mcp::tools(&paths, &name, json).await.map(|()| 0)
                }
            },
            Command::Runs { name, json, .. } => commands::runs::list(&paths, name.as_deref(), json)
                .await
                .map(|()| 0),
            Command::Schedules { action, json, .. } => match action {
                None => commands::runs::schedules(&paths, json).await.map(|()| 0),
                Some(SchedulesAction::Run { name, wait }) => {
                    commands::runs::run_now(&paths, &name, wait).await
                }
            },
            Command::Status { json, .. } => commands::status(&paths, json).await.map(|()| 0),
            Command::Stop { .. } => commands::stop(&paths).await.map(|()| 0),
            Command::Token { action } => match action {
                TokenAction::Create {
                    name,
                    scope,
                    expires,
                } => commands::token::create(&paths, &name, scope.into(), expires.as_deref()).await,
                TokenAction::List { json } => commands::token::list(&paths, json).await,
                TokenAction::Revoke { name } => commands::token::revoke(&paths, &name).await,
            }
            .map(|()| 0),
            Command::Dashboard { open } => {
                commands::token::dashboard(&paths, open).await.map(|()| 0)
            }
            Command::Trust { path, revoke } => commands::trust::run(&paths, &path, revoke),
            Command::Endpoint => {
                println!("{}", paths.endpoint);
                Ok(0)
            }
            Command::Acp => acp::run(paths).await,
            Command::Service { action } => match action {
                ServiceAction::Install { flags, platform } => {
                    commands::service::install(&paths, flags.user, flags.dry_run, platform)
                }
                ServiceAction::Uninstall { flags } => {
                    commands::service::uninstall(&paths, flags.user, flags.dry_run)
                }
                ServiceAction::Status { user } => commands::service::status(&paths, user),
            }
            .map(|()| 0),
            Command::Completions { .. } => Ok(0),
        }
    });
    // Turns and prompts may leave a blocking stdin read behind; do not wait for it.
    runtime.shutdown_background();
    match outcome {
        Ok(code) => ExitCode::from(code),
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

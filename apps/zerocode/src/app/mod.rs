//! The interactive client: start-up (the session to open), the prompt loop that reads a
//! line and hands it to a slash command or to the agent, and what those share.
//!
//! The parts, each an `impl App` of its own: `commands.rs` (the slash commands and `/help`),
//! `custom.rs` (the project's custom commands),
//! `sessions.rs` (choosing, creating and loading a session), `turn.rs` (a turn streamed on
//! screen, with its approvals, questions and Ctrl-C).

/// Public for [`commands::HELP`], which the completer checks against its command list.
mod checkpoints;
pub mod commands;
mod custom;
mod modes;
mod sandbox;
mod sessions;
mod turn;
mod typing;

pub use typing::Typing;

use crate::forms::{Forwarder, Question, TerminalForms};
use crate::input::{Input, Read};
use crate::interrupts::Interrupts;
use crate::render::Screen;
use crate::term::{self, bold, dim, red};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::mpsc;
use zeroclaw_client::{Client, ClientOptions, ElicitationResponse, SessionSummary, Turn};
use zeroclaw_ipc::Paths;
use zeroclaw_rpc::CallError;

/// The prompt at which a line is sent to the agent (plain text: the editor measures it).
pub const PROMPT: &str = "> ";
/// Sessions offered by `--resume` and listed by `/sessions`.
const RECENT: usize = 20;
pub const GONE: &str = "the daemon went away; your sessions are kept. Run zerocode again to start a new one (or `zeroclaw daemon`).";

/// How zerocode ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// `/quit`, Ctrl-D, Ctrl-C twice at the prompt.
    Quit,
    /// The connection to the daemon closed.
    DaemonGone,
    /// Ctrl-C twice during a turn.
    Interrupted,
}

impl Stop {
    pub fn exit_code(self) -> u8 {
        match self {
            Stop::Quit => 0,
            Stop::DaemonGone => 1,
            Stop::Interrupted => 130,
        }
    }
}

type Step = Result<(), Stop>;

pub struct Options {
    pub session: Option<String>,
    pub resume: bool,
    pub cwd: Option<PathBuf>,
}

struct Current {
    id: String,
    cwd: String,
    model: String,
    /// Whether the session has a title; one without gets its first prompt's, as the CLI
    /// gives it.
    titled: bool,
    /// Its sandbox; `None` from a daemon that does not report one.
    sandbox: Option<zeroclaw_client::SessionSandbox>,
    /// Its permission mode (`modes.rs`), as last said by the daemon.
    mode: zeroclaw_client::protocol::methods::PermissionMode,
}

struct App {
    client: Client,
    input: Input,
    screen: Arc<Mutex<Screen>>,
    forms: TerminalForms,
    /// The daemon's questions (`ask_user`), from the client's elicitation handler.
    questions: mpsc::Receiver<Question>,
    interrupts: Interrupts,
    session: Current,
    /// The directory of new sessions: `--cwd`, else the current directory.
    cwd: String,
    /// The last numbered list shown (`/sessions`, `--resume`), for `/load N`.
    listed: Vec<SessionSummary>,
    /// Set by [`App::attach`] when the loaded session has a turn running (started by
    /// another client), to follow it.
    running: Option<Turn>,
    /// The undo id of this session's last rewind (`/rewind back`).
    last_undo: Option<String>,
    /// Prompts typed with Alt-Enter during a turn, sent one by one after it
    /// (`typing.rs`; at most [`typing::MAX_QUEUED`]).
    queued: typing::Queued,
}

/// Runs zerocode to its end; returns the exit status. Every exit path leaves the terminal
/// as it was found (`main` restores it too, and so does the panic hook).
pub async fn run(paths: Paths, options: Options) -> u8 {
    match start(paths, options).await {
        Ok(stop) => {
            if stop == Stop::DaemonGone {
                term::restore();
                println!();
                eprintln!("{}", red(GONE));
            }
            stop.exit_code()
        }
        Err(message) => {
            term::restore();
            eprintln!("zerocode: {message}");
            1
        }
    }
}

async fn start(paths: Paths, options: Options) -> Result<Stop, String> {
    let cwd = match &options.cwd {
        Some(dir) => {
            std::path::absolute(dir).map_err(|e| format!("bad --cwd {}: {e}", dir.display()))?
        }
        None => std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
    };
    if !cwd.is_dir() {
        return Err(format!("--cwd {} is not a directory", cwd.display()));
    }
    let history = create_private_dir(&paths.data_dir)
        .ok()
        .map(|()| paths.data_dir.join("zerocode_history"));
    let input = Input::new(history)?;
    let screen = Arc::new(Mutex::new(Screen::default()));
    let forms = TerminalForms {
        input: input.clone(),
        screen: screen.clone(),
    };
    let (ask, questions) = mpsc::channel(4);
    let client_options = ClientOptions {
        name: "zerocode".into(),
        elicitation: Some(Arc::new(Forwarder { questions: ask })),
        ..ClientOptions::default()
    };
    let client = zeroclaw_client::connect_or_start(&paths, client_options)
        .await
        .map_err(|e| e.to_string())?;
    let interrupts = Interrupts::new().map_err(|e| format!("cannot listen for Ctrl-C: {e}"))?;
    let mut app = App {
        client,
        input,
        screen,
        forms,
        questions,
        interrupts,
        session: Current {
            id: String::new(),
            cwd: String::new(),
            model: String::new(),
            titled: false,
            sandbox: None,
            mode: Default::default(),
        },
        cwd: cwd.to_string_lossy().into_owned(),
        listed: Vec::new(),
        running: None,
        last_undo: None,
        queued: typing::Queued::new(),
    };
    let opened = match options.session {
        Some(id) => match app.find_session(&id, false).await {
            Ok(Some(id)) => app.attach(&id).await,
            Ok(None) => Ok(false),
            Err(stop) => Err(stop),
        },
        None if options.resume => app.pick().await,
        None => app.new_session(false).await,
    };
    match opened {
        Ok(true) => {}
        Ok(false) => return Err("no session to work in".into()),
        Err(stop) => return Ok(stop),
    }
    app.banner();
    if let Err(stop) = app.follow_running().await {
        return Ok(stop);
    }
    Ok(app.repl().await)
}

/// The data dir as the daemon wants it (0700 on Unix), so it need not tighten it later.
fn create_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// "no session \"x\" (error -32004)" for a failed call.
pub fn describe(e: &CallError) -> String {
    match e {
        CallError::Rpc(e) => format!("{} (error {})", e.message, e.code),
        other => other.to_string(),
    }
}

fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

impl App {
    fn screen(&self) -> MutexGuard<'_, Screen> {
        self.screen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn line(&self, text: &str) {
        self.screen().line(text);
    }

    /// Shows a failed call as one line; a lost connection ends zerocode.
    fn failed(&self, what: &str, e: &CallError) -> Step {
        if matches!(e, CallError::Closed) {
            return Err(Stop::DaemonGone);
        }
        self.line(&red(&format!("{what}: {}", describe(e))));
        Ok(())
    }

    fn banner(&self) {
        let server = self.client.server_info();
        self.line(&format!(
            "{} · daemon {} · session {} · {} · {}",
            bold("zerocode"),
            server.server_version,
            short(&self.session.id),
            self.session.cwd,
            dim("/help for commands")
        ));
    }

    async fn repl(&mut self) -> Stop {
        let mut interrupted = false;
        // The line Shift-Tab interrupted, read on after the mode changed.
        let mut initial = String::new();
        loop {
            // A prompt queued during the last turn (Alt-Enter) goes first.
            if let Some(queued) = self.next_queued() {
                self.line(&format!("{PROMPT}{queued}"));
                if let Err(stop) = self.prompt(&queued).await {
                    return stop;
                }
                continue;
            }
            self.refresh_completion().await;
            // Another client's mode change shows while the prompt is read (`modes.rs`).
            let mut idle = self.client.subscribe(&self.session.id);
            let prompt = self.prompt_text();
            let start_with = std::mem::take(&mut initial);
            let read = {
                let input = self.input.clone();
                let read = input.read_prompt(&prompt, &start_with);
                tokio::pin!(read);
                loop {
                    tokio::select! {
                        read = &mut read => break read,
                        () = self.client.closed() => return Stop::DaemonGone,
                        Ok(event) = idle.recv() => {
                            // Another client's turn: its usage fills the gauge (a
                            // subagent's counts are its child session's).
                            if let zeroclaw_client::Update::UsageUpdate(report) = &event.update
                                && event.parent_tool_call_id.is_none()
                            {
                                self.screen().set_gauge(crate::usage::Gauge::from_report(report));
                            }
                            self.idle_event(event.update);
                        }
                        Some((_, answer)) = self.questions.recv() => {
                            // Only a turn of ours asks, and none runs: nowhere to show it.
                            let _ = answer.send(ElicitationResponse::cancel());
                        }
                    }
                }
            };
            let line = match read {
                Read::Line(line) => line,
                Read::Eof => return Stop::Quit,
                Read::Interrupted if interrupted => return Stop::Quit,
                Read::Interrupted => {
                    interrupted = true;
                    self.line(&dim("(Ctrl-C again or /quit to exit)"));
                    continue;
                }
            };
            interrupted = false;
            if self.input.take_cycle() {
                if let Err(stop) = self.cycle_mode().await {
                    return stop;
                }
                initial = line;
                continue;
            }
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            self.input.remember(line);
            // A pasted block starting with `/` is text for the agent, not a command; so is
            // the pasted path of an image (`/home/me/shot.png`), which goes with it.
            let command = line.starts_with('/')
                && !line.contains('\n')
                && crate::images::pasted_path(line, std::path::Path::new(&self.session.cwd))
                    .is_none();
            let step = if command {
                self.command(line).await
            } else {
                self.prompt(line).await
            };
            if let Err(stop) = step {
                return stop;
            }
        }
    }
}

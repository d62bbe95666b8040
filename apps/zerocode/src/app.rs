//! The interactive loop: the prompt, slash commands, and streaming a turn.

use crate::approval;
use crate::forms::{Forwarder, Question, TerminalForms};
use crate::input::{Input, Read};
use crate::interrupts::Interrupts;
use crate::mentions;
use crate::render::{self, Screen};
use crate::status::{self, Phase};
use crate::term::{self, bold, dim, red};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::broadcast;
use tokio::sync::mpsc;
use zeroclaw_client::{
    Approval, Client, ClientOptions, Decision, ElicitationResponse, NewSession, SessionSummary,
    Turn, TurnEvent, Update,
};
use zeroclaw_ipc::Paths;
use zeroclaw_rpc::CallError;

/// The prompt at which a line is sent to the agent (plain text: the editor measures it).
pub const PROMPT: &str = "> ";
/// Sessions offered by `--resume` and listed by `/sessions`.
const RECENT: usize = 20;
pub const GONE: &str = "the daemon went away; your sessions are kept. Run zerocode again to start a new one (or `zeroclaw daemon`).";

pub const HELP: &str = "\
Type a message and press Enter to send it to the agent. Alt-Enter, or \\ at the end of a
line, starts another line; a pasted block is one prompt. @path attaches a file under the
session's directory (Tab completes it, and /commands). Ctrl-R searches the history.
  /help             this help
  /status           the daemon, this session, its model and message count
  /model [NAME]     set this session's model from the next turn (alone: show it)
  /new              start a new session (in zerocode's directory)
  /clear            start a new session in this session's directory
  /sessions         list recent sessions, numbered
  /load ID|N        resume a session by id (or a unique prefix) or by its /sessions number
  /cancel           cancel a turn running in this session
  /compact          fold older turns into a summary the model is sent instead (all stay stored)
  /quit             exit (also Ctrl-D, or Ctrl-C twice)
While a turn runs: Ctrl-C cancels it (twice quits). Approvals show the change (a diff) or
the command and its cwd, then one key answers: y = allow once, a = allow always (this tool,
this session), n or Esc = reject (Ctrl-C also cancels the turn).";

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
        },
        cwd: cwd.to_string_lossy().into_owned(),
        listed: Vec::new(),
        running: None,
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
        loop {
            let read = {
                let read = self.input.read_prompt(PROMPT);
                tokio::pin!(read);
                loop {
                    tokio::select! {
                        read = &mut read => break read,
                        () = self.client.closed() => return Stop::DaemonGone,
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
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            self.input.remember(line);
            // A pasted block starting with `/` is text for the agent, not a command.
            let step = if line.starts_with('/') && !line.contains('\n') {
                self.command(line).await
            } else {
                self.prompt(line).await
            };
            if let Err(stop) = step {
                return stop;
            }
        }
    }

    async fn command(&mut self, line: &str) -> Step {
        let (name, arg) = line
            .split_once(char::is_whitespace)
            .map_or((line, ""), |(n, a)| (n, a.trim()));
        match name {
            "/help" | "/?" => self.line(HELP),
            "/quit" | "/exit" | "/q" => return Err(Stop::Quit),
            "/new" => {
                self.new_session(true).await?;
            }
            "/clear" => {
                self.new_session_in(self.session.cwd.clone(), true).await?;
            }
            "/model" if arg.is_empty() => {
                self.line(&format!("model: {}", self.session.model));
            }
            "/model" => self.set_model(arg).await?,
            "/status" => self.show_status().await?,
            "/sessions" | "/ls" => self.list_sessions().await?,
            "/load" | "/resume" if arg.is_empty() => {
                self.line("usage: /load ID or /load N (a number from /sessions)");
            }
            "/load" | "/resume" => {
                if let Some(id) = self.find_session(arg, true).await?
                    && self.attach(&id).await?
                {
                    self.line(&dim(&format!(
                        "now in session {} · {}",
                        short(&self.session.id),
                        self.session.cwd
                    )));
                    self.follow_running().await?;
                }
            }
            "/compact" => {
                self.line(&dim(
                    "compacting: the model is summarising the older turns…",
                ));
                match self.client.session_compact(&self.session.id).await {
                    Ok(done) if done.messages_folded == 0 => {
                        self.line(&dim(
                            "nothing to compact: the session has one turn since the last summary",
                        ));
                    }
                    // The `context_compacted` event says the rest.
                    Ok(_) => {}
                    Err(e) => self.failed("compact failed", &e)?,
                }
            }
            "/cancel" => match self.client.session_cancel(&self.session.id).await {
                Ok(true) => self.line(&dim("cancelled the turn running in this session")),
                Ok(false) => self.line(&dim("nothing is running")),
                Err(e) => self.failed("cancel failed", &e)?,
            },
            other => self.line(&format!(
                "unknown command {other}; /help lists the commands"
            )),
        }
        Ok(())
    }

    /// Works in `session` from now on (`@` completes under its cwd).
    fn enter(&mut self, session: Current) {
        self.input.set_cwd(std::path::Path::new(&session.cwd));
        self.session = session;
    }

    /// Creates a session in the directory of new sessions and works in it from now on.
    async fn new_session(&mut self, announce: bool) -> Result<bool, Stop> {
        self.new_session_in(self.cwd.clone(), announce).await
    }

    /// Creates a session in `cwd` and works in it from now on.
    async fn new_session_in(&mut self, cwd: String, announce: bool) -> Result<bool, Stop> {
        let params = NewSession {
            cwd: Some(cwd),
            ..NewSession::default()
        };
        match self.client.session_new(params).await {
            Ok(info) => {
                self.enter(Current {
                    id: info.session_id,
                    cwd: info.cwd,
                    model: info.model,
                });
                if announce {
                    self.line(&dim(&format!(
                        "new session {} · {}",
                        short(&self.session.id),
                        self.session.cwd
                    )));
                }
                Ok(true)
            }
            Err(e) => {
                self.failed("cannot create a session", &e)?;
                Ok(false)
            }
        }
    }

    async fn recent_sessions(&mut self) -> Result<Option<Vec<SessionSummary>>, Stop> {
        match self.client.session_list().await {
            Ok(mut sessions) => {
                sessions.truncate(RECENT);
                self.listed = sessions.clone();
                Ok(Some(sessions))
            }
            Err(e) => {
                self.failed("cannot list the sessions", &e)?;
                Ok(None)
            }
        }
    }

    fn show_sessions(&self, sessions: &[SessionSummary]) {
        for (i, s) in sessions.iter().enumerate() {
            let here = if s.session_id == self.session.id {
                "*"
            } else {
                " "
            };
            let title = render::truncate(s.title.as_deref().unwrap_or("(untitled)"), 30);
            let updated: String = s
                .updated_at
                .chars()
                .take(16)
                .collect::<String>()
                .replace('T', " ");
            let running = if s.running { "  (running)" } else { "" };
            self.line(&format!(
                "{here}{:>3}) {}  {title:<30}  {:>4} msgs  {updated}  {}{running}",
                i + 1,
                short(&s.session_id),
                s.message_count,
                s.cwd
            ));
        }
    }

    async fn list_sessions(&mut self) -> Step {
        let Some(sessions) = self.recent_sessions().await? else {
            return Ok(());
        };
        if sessions.is_empty() {
            self.line("no sessions yet");
        } else {
            self.show_sessions(&sessions);
            self.line(&dim("/load N resumes one"));
        }
        Ok(())
    }

    /// `--resume`: a numbered list of recent sessions; Enter starts a new one.
    async fn pick(&mut self) -> Result<bool, Stop> {
        let Some(sessions) = self.recent_sessions().await? else {
            return Ok(false);
        };
        if sessions.is_empty() {
            self.line(&dim("no sessions yet; starting a new one"));
            return self.new_session(false).await;
        }
        self.line("recent sessions:");
        self.show_sessions(&sessions);
        let question = format!("resume which? [1-{}, Enter = new session] ", sessions.len());
        loop {
            let read = tokio::select! {
                read = self.input.read(&question) => read,
                () = self.client.closed() => return Err(Stop::DaemonGone),
            };
            let answer = match read {
                Read::Line(answer) => answer,
                Read::Interrupted | Read::Eof => return Err(Stop::Quit),
            };
            let answer = answer.trim();
            if answer.is_empty() {
                return self.new_session(false).await;
            }
            match answer.parse::<usize>().ok().and_then(|n| n.checked_sub(1)) {
                Some(i) if i < sessions.len() => return self.attach(&sessions[i].session_id).await,
                _ => self.line(&format!(
                    "type a number from 1 to {}, or just Enter",
                    sessions.len()
                )),
            }
        }
    }

    /// The session `/load ARG` means: a number (up to 3 digits) from the last list, when
    /// `numbered`; else an id, or a unique prefix of one (like the short ids shown).
    async fn find_session(&mut self, arg: &str, numbered: bool) -> Result<Option<String>, Stop> {
        if let Some(n) = arg
            .parse::<usize>()
            .ok()
            .filter(|_| numbered && arg.len() <= 3)
        {
            if self.listed.is_empty() && self.recent_sessions().await?.is_none() {
                return Ok(None);
            }
            return Ok(match n.checked_sub(1).and_then(|i| self.listed.get(i)) {
                Some(s) => Some(s.session_id.clone()),
                None => {
                    self.line(&format!(
                        "there is no session {n} in the list; /sessions shows the numbers"
                    ));
                    None
                }
            });
        }
        let sessions = match self.client.session_list().await {
            Ok(sessions) => sessions,
            Err(e) => {
                self.failed("cannot list the sessions", &e)?;
                return Ok(None);
            }
        };
        if sessions.iter().any(|s| s.session_id == arg) {
            return Ok(Some(arg.to_owned()));
        }
        let matching: Vec<&SessionSummary> = sessions
            .iter()
            .filter(|s| s.session_id.starts_with(arg))
            .collect();
        Ok(match matching.as_slice() {
            [one] => Some(one.session_id.clone()),
            [] => {
                self.line(&format!("no session matches {arg}; /sessions lists them"));
                None
            }
            _ => {
                self.line(&format!(
                    "{arg} matches {} sessions; type more of the id",
                    matching.len()
                ));
                None
            }
        })
    }

    /// Loads a session with its history replayed (compactly) and works in it from now on.
    async fn attach(&mut self, id: &str) -> Result<bool, Stop> {
        let mut events = self.client.subscribe(id);
        let summary = match self.client.session_load(id, true).await {
            Ok(summary) => summary,
            Err(e) => {
                self.failed(&format!("cannot load session {id}"), &e)?;
                return Ok(false);
            }
        };
        // The replay arrives before the answer, so it is all queued by now.
        let mut pending = Vec::new();
        loop {
            match events.try_recv() {
                Ok(event) => match &event.update {
                    Update::ApprovalRequest { .. } => pending.push(event),
                    update => self.screen().replay(update),
                },
                Err(broadcast::error::TryRecvError::Lagged(n)) => {
                    self.line(&dim(&format!("… {n} earlier messages not shown")));
                }
                Err(_) => break,
            }
        }
        self.screen().end_line();
        self.enter(Current {
            id: summary.session_id.clone(),
            cwd: summary.cwd.clone(),
            model: summary.model.clone(),
        });
        self.running = (summary.running || summary.turn_id.is_some())
            .then(|| self.client.follow(&summary.session_id, events, pending));
        Ok(true)
    }

    /// `/model NAME`: the session's model from its next turn on.
    async fn set_model(&mut self, model: &str) -> Step {
        match self.client.session_set_model(&self.session.id, model).await {
            Ok(set) => {
                self.line(&dim(&format!(
                    "model: {} (was {}; from the next turn)",
                    set.model, set.previous
                )));
                self.session.model = set.model;
                Ok(())
            }
            Err(e) => self.failed("cannot set the model", &e),
        }
    }

    /// `/status`: the daemon, and this session as the store has it.
    async fn show_status(&mut self) -> Step {
        let status = match self.client.status().await {
            Ok(status) => status,
            Err(e) => return self.failed("cannot ask the daemon's status", &e),
        };
        let summary = match self.session_summary().await {
            Ok(summary) => summary,
            Err(e) => return self.failed("cannot read the session", &e),
        };
        if let Some(summary) = &summary {
            self.session.model = summary.model.clone();
        }
        let rows = [
            (
                "daemon",
                format!(
                    "{} (pid {}{})",
                    status.server_version,
                    status.pid,
                    if status.ephemeral { ", ephemeral" } else { "" }
                ),
            ),
            ("endpoint", status.endpoint),
            ("session", self.session.id.clone()),
            ("cwd", self.session.cwd.clone()),
            ("model", self.session.model.clone()),
            (
                "messages",
                summary
                    .as_ref()
                    .map_or("?".into(), |s| s.message_count.to_string()),
            ),
            (
                "running",
                match summary.as_ref().map(|s| s.running) {
                    Some(true) => "yes".into(),
                    Some(false) => "no".into(),
                    None => "?".into(),
                },
            ),
        ];
        for (name, value) in rows {
            self.line(&format!("  {name:<9} {value}"));
        }
        Ok(())
    }

    /// This session's row in `session/list` (searched by its cwd, page by page).
    async fn session_summary(&self) -> Result<Option<SessionSummary>, CallError> {
        let mut cursor = None;
        loop {
            let page = self
                .client
                .session_list_page(zeroclaw_client::protocol::methods::ListParams {
                    cursor,
                    // `search` takes at most 1 KiB: a longer cwd is found among all.
                    search: (self.session.cwd.len() <= 1024).then(|| self.session.cwd.clone()),
                    ..Default::default()
                })
                .await?;
            if let Some(found) = page
                .sessions
                .into_iter()
                .find(|s| s.session_id == self.session.id)
            {
                return Ok(Some(found));
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(None),
            }
        }
    }

    /// Sends a line to the agent, with the files its `@path` mentions name, and streams
    /// the turn until it ends.
    async fn prompt(&mut self, text: &str) -> Step {
        let expanded = mentions::expand(text, std::path::Path::new(&self.session.cwd));
        for refused in &expanded.refused {
            self.line(&dim(&format!("{}: {}", refused.mention, refused.why)));
        }
        if let Some(summary) = mentions::summary(&expanded.attached) {
            self.line(&dim(&summary));
        }
        let turn = self.client.turn(&self.session.id, &expanded.prompt);
        self.stream(turn, false).await
    }

    /// Streams a turn that was already running when the session was loaded.
    async fn follow_running(&mut self) -> Step {
        let Some(turn) = self.running.take() else {
            return Ok(());
        };
        self.line(&dim(
            "a turn is running in this session; following it (Ctrl-C cancels it)",
        ));
        self.stream(turn, true).await
    }

    /// Streams a turn with the live status line below it, erased when the turn is over.
    async fn stream(&mut self, turn: Turn, following: bool) -> Step {
        self.screen().status_start();
        let step = self.stream_events(turn, following).await;
        self.screen().status_stop();
        step
    }

    /// The turn loop: events as they arrive, approvals, questions, Ctrl-C, and the status
    /// line's ticks. A turn of ours ends with its answer; a `following` one at its
    /// `turn_complete`.
    async fn stream_events(&mut self, mut turn: Turn, following: bool) -> Step {
        let _quiet = term::QuietInput::new();
        self.interrupts.clear();
        let mut cancelling = false;
        let mut ticker = tokio::time::interval(status::FRAME);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                biased;
                () = self.interrupts.recv() => {
                    if cancelling {
                        self.line(&dim("quitting; the turn may still be winding down in the daemon"));
                        return Err(Stop::Interrupted);
                    }
                    self.cancel(&turn, &mut cancelling).await?;
                }
                Some(event) = turn.next() => {
                    if self.event(&turn, event, following, &mut cancelling).await? {
                        return Ok(());
                    }
                }
                Some((request, answer)) = self.questions.recv() => {
                    // Everything the daemon sent before the question is queued: show it first.
                    while let Some(event) = turn.try_next() {
                        if self.event(&turn, event, following, &mut cancelling).await? {
                            return Ok(());
                        }
                    }
                    // The form reads lines: no status line meanwhile.
                    self.screen().status_suspend(true);
                    let response = tokio::select! {
                        response = self.forms.ask(request) => response,
                        () = self.client.closed() => return Err(Stop::DaemonGone),
                    };
                    self.screen().status_suspend(false);
                    let _ = answer.send(response);
                }
                () = self.client.closed() => return Err(Stop::DaemonGone),
                _ = ticker.tick() => self.screen().status_tick(),
            }
        }
    }

    async fn cancel(&mut self, turn: &Turn, cancelling: &mut bool) -> Step {
        *cancelling = true;
        self.screen().status_phase(Phase::Cancelling);
        self.line(&dim("cancelling… (Ctrl-C again to quit)"));
        match turn.cancel().await {
            Ok(_) => Ok(()),
            Err(e) => self.failed("cancel failed", &e),
        }
    }

    /// Shows one event of the turn (asking about approval requests). `true` when the
    /// turn is over.
    async fn event(
        &mut self,
        turn: &Turn,
        event: TurnEvent,
        following: bool,
        cancelling: &mut bool,
    ) -> Result<bool, Stop> {
        match event {
            TurnEvent::Update(update) => return Ok(self.update(update, following)),
            TurnEvent::Approval(request) => {
                // The question is read on the status line's row: no status meanwhile.
                self.screen().status_phase(Phase::WaitingForApproval);
                self.screen().status_suspend(true);
                let decision = tokio::select! {
                    decision = self.ask_approval(&request) => decision,
                    () = self.client.closed() => return Err(Stop::DaemonGone),
                };
                self.screen().status_suspend(false);
                self.screen()
                    .status_phase(Phase::Running(request.name.clone()));
                // `None` is Ctrl-C at the question: reject the call and cancel the turn.
                if let Err(e) = request.answer(decision.unwrap_or(Decision::Reject)).await {
                    self.failed("could not answer the approval", &e)?;
                }
                if decision.is_none() && !*cancelling {
                    self.cancel(turn, cancelling).await?;
                }
            }
            TurnEvent::Lagged(n) => {
                self.line(&dim(&format!(
                    "… {n} events were missed (the terminal fell behind)"
                )));
            }
            TurnEvent::Done(result) => {
                self.screen().end_line();
                let elapsed = self.screen().status_elapsed();
                match result {
                    Ok(result) => {
                        let line = render::status_line(result.stop_reason, result.usage, elapsed);
                        self.line(&dim(&line));
                    }
                    Err(e) => self.failed("the turn failed", &e)?,
                }
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Shows one update. `true` when it ends a followed turn.
    fn update(&mut self, update: Update, following: bool) -> bool {
        match update {
            Update::AgentMessageChunk { text } => self.screen().answer(&text),
            Update::AgentThoughtChunk { text } => self.screen().thought(&text),
            Update::ToolCall {
                name, raw_input, ..
            } => self.screen().tool_call(&name, &raw_input),
            Update::ToolResult {
                name,
                raw_output,
                is_error,
                ..
            } => self.screen().tool_result(&name, &raw_output, is_error),
            Update::ContextCompacted {
                messages_folded, ..
            } => {
                self.screen().end_line();
                self.line(&dim(&render::compacted(messages_folded)));
            }
            Update::TurnComplete { stop_reason, error } if following => {
                self.screen().end_line();
                if let Some(error) = error {
                    self.line(&red(&format!("the turn failed: {error}")));
                }
                let elapsed = self.screen().status_elapsed();
                self.line(&dim(&render::status_line(stop_reason, None, elapsed)));
                return true;
            }
            _ => {}
        }
        false
    }

    /// The preview, then `Allow bash `ls`? [y]es / [n]o / [a]lways` answered with one key
    /// (`approval.rs`): `None` for Ctrl-C.
    async fn ask_approval(&self, request: &Approval) -> Option<Decision> {
        self.screen().end_line();
        for line in request
            .preview
            .iter()
            .flat_map(|p| approval::preview_lines(p))
        {
            self.line(&line);
        }
        let question = approval::question(&request.name, &request.raw_input);
        approval::decide(&self.input, &question).await
    }
}

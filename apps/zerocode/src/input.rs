//! Reading lines: one rustyline editor, shared by the prompt, approvals, elicitation forms
//! and the session picker, behind a mutex (one question on the terminal at a time). Each
//! read runs the blocking `readline` on tokio's blocking pool.
//!
//! At the prompt ([`Input::read_prompt`]) the editor completes `/` commands and `@path`
//! mentions, and takes multi-line prompts: Alt-Enter or a
//! trailing `\` adds a line, and a bracketed paste (which the editor turns on while it
//! reads) is inserted whole, new lines included, so a pasted block is one prompt. Ctrl-R
//! searches the history backwards; a multi-line prompt is one entry (the history file
//! escapes its new lines).

use crate::complete::{AltEnter, Continue, PromptHelper, Shared, ShiftTab};
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::{
    CompletionType, Config, Editor, EventHandler, ExternalPrinter, KeyCode, KeyEvent, Modifiers,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// Entries kept in the history file.
pub const HISTORY_SIZE: usize = 1000;

type LineEditor = Editor<PromptHelper, FileHistory>;

/// What one read produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    Line(String),
    /// Ctrl-C (the editor reads it as a key, so no SIGINT is raised).
    Interrupted,
    /// Ctrl-D on an empty line, or the end of input.
    Eof,
}

#[derive(Clone)]
pub struct Input {
    editor: Arc<Mutex<LineEditor>>,
    history: Option<PathBuf>,
    shared: Shared,
    printer: Option<Arc<Mutex<Box<dyn ExternalPrinter + Send>>>>,
}

impl Input {
    /// An editor whose prompt history lives in `history` (loaded now when it exists).
    pub fn new(history: Option<PathBuf>) -> Result<Self, String> {
        let config = Config::builder()
            .max_history_size(HISTORY_SIZE)
            .and_then(|c| c.history_ignore_dups(true))
            .map_err(|e| format!("cannot configure the line editor: {e}"))?
            .history_ignore_space(true)
            .auto_add_history(false)
            .completion_type(CompletionType::List)
            .build();
        let mut editor = LineEditor::with_config(config)
            .map_err(|e| format!("cannot start the line editor: {e}"))?;
        let shared = Shared::default();
        editor.set_helper(Some(PromptHelper {
            shared: shared.clone(),
        }));
        editor.bind_sequence(
            KeyEvent(KeyCode::Enter, Modifiers::ALT),
            EventHandler::Conditional(Box::new(AltEnter(shared.clone()))),
        );
        editor.bind_sequence(
            KeyEvent(KeyCode::Enter, Modifiers::NONE),
            EventHandler::Conditional(Box::new(Continue(shared.clone()))),
        );
        editor.bind_sequence(
            KeyEvent(KeyCode::BackTab, Modifiers::NONE),
            EventHandler::Conditional(Box::new(ShiftTab(shared.clone()))),
        );
        // Lines printed while a prompt is being read (another client changed the mode),
        // above it; `None` where the terminal has none (not a terminal).
        let printer = editor
            .create_external_printer()
            .ok()
            .map(|p| Arc::new(Mutex::new(Box::new(p) as Box<dyn ExternalPrinter + Send>)));
        if let Some(path) = &history {
            match editor.load_history(path) {
                Ok(()) => {}
                Err(ReadlineError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => eprintln!("zerocode: cannot read the history {}: {e}", path.display()),
            }
        }
        Ok(Self {
            editor: Arc::new(Mutex::new(editor)),
            history,
            shared,
            printer,
        })
    }

    /// The directory `@` mentions complete under: the current session's.
    pub fn set_cwd(&self, cwd: &Path) {
        self.shared.set_cwd(cwd);
    }

    /// The custom commands `/` completes.
    pub fn set_custom(&self, custom: Vec<crate::complete::Custom>) {
        self.shared.set_custom(custom);
    }

    /// Reads a prompt for the agent, with completion, hints and multi-line editing,
    /// starting from `initial` (the line Shift-Tab interrupted, else empty).
    pub async fn read_prompt(&self, prompt: &str, initial: &str) -> Read {
        self.read_as(prompt, true, initial).await
    }

    /// Whether Shift-Tab ended the last prompt's read (its line is the one read so far).
    pub fn take_cycle(&self) -> bool {
        self.shared.take_cycle()
    }

    /// Prints `line` above the prompt being read (and redraws it); `false` where the
    /// terminal cannot, so the caller prints it itself.
    pub fn print_above(&self, line: &str) -> bool {
        let Some(printer) = &self.printer else {
            return false;
        };
        let mut printer = printer.lock().unwrap_or_else(PoisonError::into_inner);
        printer.print(format!("{line}\n")).is_ok()
    }

    /// Shows `prompt` and reads one line (an answer to a question: no completion, and
    /// Enter always ends it). The prompt must be plain text (no ANSI styles: the editor
    /// measures it to place the cursor).
    pub async fn read(&self, prompt: &str) -> Read {
        self.read_as(prompt, false, "").await
    }

    async fn read_as(&self, prompt: &str, is_prompt: bool, initial: &str) -> Read {
        let editor = self.editor.clone();
        let shared = self.shared.clone();
        let prompt = prompt.to_owned();
        let initial = initial.to_owned();
        let outcome = tokio::task::spawn_blocking(move || {
            let mut editor = editor.lock().unwrap_or_else(PoisonError::into_inner);
            shared.set_prompt(is_prompt);
            shared.clear_continuations();
            shared.take_cycle();
            editor
                .readline_with_initial(&prompt, (&initial, ""))
                .map(|line| shared.take_continuations(line))
        })
        .await;
        match outcome {
            Ok(Ok(line)) => Read::Line(line),
            Ok(Err(ReadlineError::Interrupted)) => Read::Interrupted,
            Ok(Err(ReadlineError::Eof)) => Read::Eof,
            Ok(Err(e)) => {
                eprintln!("zerocode: cannot read from the terminal: {e}");
                Read::Eof
            }
            Err(_) => Read::Eof,
        }
    }

    /// Adds a prompt line to the history and appends it to the history file (which the
    /// editor keeps at [`HISTORY_SIZE`] entries). Only called between reads.
    pub fn remember(&self, line: &str) {
        let mut editor = self.editor.lock().unwrap_or_else(PoisonError::into_inner);
        if !matches!(editor.add_history_entry(line), Ok(true)) {
            return;
        }
        if let Some(path) = &self.history
            && let Err(e) = editor.append_history(path)
        {
            eprintln!(
                "zerocode: cannot save the history to {}: {e}",
                path.display()
            );
        }
    }
}

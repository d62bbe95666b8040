//! Reading lines: one rustyline editor, shared by the prompt, approvals, elicitation forms
//! and the session picker, behind a mutex (one question on the terminal at a time). Each
//! read runs the blocking `readline` on tokio's blocking pool.

use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::{Config, Editor};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// Entries kept in the history file.
pub const HISTORY_SIZE: usize = 1000;

type LineEditor = Editor<(), FileHistory>;

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
            .build();
        let mut editor = LineEditor::with_config(config)
            .map_err(|e| format!("cannot start the line editor: {e}"))?;
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
        })
    }

    /// Shows `prompt` and reads one line. The prompt must be plain text (no ANSI styles:
    /// the editor measures it to place the cursor).
    pub async fn read(&self, prompt: &str) -> Read {
        let editor = self.editor.clone();
        let prompt = prompt.to_owned();
        let outcome = tokio::task::spawn_blocking(move || {
            let mut editor = editor.lock().unwrap_or_else(PoisonError::into_inner);
            editor.readline(&prompt)
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

//! Typing while a turn runs: the keys are read one at a time (`zeroclaw_client::keys`) by
//! a task of their own for the whole turn, and handed over a bounded channel, so the turn
//! loop can take them as they come. Enter steers the turn with what was typed
//! (`session/steer`: the model gets it at its next step), Alt-Enter keeps it as the next
//! prompt, sent when the turn ends; Shift-Tab cycles the permission mode; Backspace edits; what is typed shows on the status
//! line. An approval question takes its answer from the same reader (so no key is lost
//! between two readers); a question form (`ask_user`) reads lines, so the reader is stopped
//! while it is shown and started again after.

use super::{App, Step};
use crate::term::{dim, red};
use std::collections::VecDeque;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use zeroclaw_client::keys::{self, Key};
use zeroclaw_client::protocol::codes;
use zeroclaw_rpc::CallError;

/// Keys read but not yet taken. Overflow rule: when it is full the reader waits, and the
/// terminal holds the keys typed meanwhile.
const KEY_QUEUE: usize = 64;
/// Prompts kept for after the running turn (Alt-Enter). Overflow rule: one more is refused
/// with a line saying so, and stays typed.
pub const MAX_QUEUED: usize = 8;
/// The longest line typed during a turn, in bytes (the daemon takes at most 64 KiB of a
/// steer): further keys are ignored.
const MAX_TYPED: usize = 16 * 1024;

/// The running turn's key reader: `None` keys when stdin is not a terminal.
pub struct Typing {
    keys: mpsc::Receiver<Key>,
    reader: Option<JoinHandle<()>>,
    sender: mpsc::Sender<Key>,
    /// What has been typed so far.
    pub line: String,
}

impl Typing {
    /// Starts reading keys (on a terminal only).
    pub fn start() -> Self {
        let (sender, keys) = mpsc::channel(KEY_QUEUE);
        let mut typing = Self {
            keys,
            reader: None,
            sender,
            line: String::new(),
        };
        typing.resume();
        typing
    }

    /// Stops reading keys (a form reads lines meanwhile).
    pub fn pause(&mut self) {
        if let Some(reader) = self.reader.take() {
            reader.abort();
        }
    }

    /// Reads keys again after [`Typing::pause`].
    pub fn resume(&mut self) {
        if self.reader.is_some() || !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            return;
        }
        let sender = self.sender.clone();
        self.reader = Some(tokio::spawn(async move {
            while let Some(key) = keys::read().await {
                if sender.send(key).await.is_err() {
                    return;
                }
            }
        }));
    }

    /// The next key; waits forever when none can be read (not a terminal).
    pub async fn next(&mut self) -> Option<Key> {
        if self.reader.is_none() {
            return std::future::pending().await;
        }
        self.keys.recv().await
    }
}

impl Drop for Typing {
    fn drop(&mut self) {
        self.pause();
    }
}

/// What a key typed during a turn asks of the turn loop.
pub enum Typed {
    Nothing,
    /// Ctrl-C: as the terminal's interrupt.
    Interrupt,
}

impl App {
    /// Takes one key typed during a turn in session `session_id`.
    pub(super) async fn typed(
        &mut self,
        typing: &mut Typing,
        key: Key,
    ) -> Result<Typed, super::Stop> {
        match key {
            Key::Char(c) if typing.line.len() < MAX_TYPED => typing.line.push(c),
            Key::Backspace => {
                typing.line.pop();
            }
            Key::CtrlC => return Ok(Typed::Interrupt),
            // The mode changes at any time: the running turn's next tool call is gated by
            // the new one (`modes.rs`).
            Key::ShiftTab => {
                self.screen().end_line();
                self.cycle_mode().await?;
            }
            Key::Enter if !typing.line.trim().is_empty() => {
                let text = std::mem::take(&mut typing.line);
                self.steer(text).await?;
            }
            Key::AltEnter if !typing.line.trim().is_empty() => {
                if self.queued.len() >= MAX_QUEUED {
                    self.line(&red(&format!(
                        "{MAX_QUEUED} prompts are already queued for after this turn"
                    )));
                } else {
                    let text = std::mem::take(&mut typing.line);
                    self.screen().end_line();
                    self.line(&dim(&format!("queued for after this turn: {text}")));
                    self.queued.push_back(text);
                }
            }
            _ => {}
        }
        self.screen().status_typed(&typing.line);
        Ok(Typed::Nothing)
    }

    /// Sends `text` to the running turn (`session/steer`); the daemon shows it back as a
    /// `user_message` when the turn takes it. When the turn has just ended, it is queued as
    /// the next prompt instead.
    async fn steer(&mut self, text: String) -> Step {
        match self.client.session_steer(&self.session.id, &text).await {
            Ok(_) => {
                self.screen().end_line();
                self.line(&dim(&format!(
                    "steer sent (the model reads it after the current step): {}",
                    crate::term::sanitize(&text)
                )));
                Ok(())
            }
            Err(CallError::Rpc(e)) if e.code == codes::NO_TURN_RUNNING => {
                self.screen().end_line();
                self.line(&dim(&format!(
                    "the turn is ending; sent as the next prompt: {text}"
                )));
                self.queued.push_back(text);
                Ok(())
            }
            Err(e) => self.failed("could not steer the turn", &e),
        }
    }

    /// The next prompt queued with Alt-Enter during a turn, if any.
    pub(super) fn next_queued(&mut self) -> Option<String> {
        self.queued.pop_front()
    }
}

/// The queue of prompts for after the turn.
pub type Queued = VecDeque<String>;

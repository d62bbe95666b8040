//! The session's permission mode in zerocode: Shift-Tab, at the prompt or while a turn
//! runs (`typing.rs`), cycles it
//! (`session/set_mode`: default → accept-edits → plan → auto → default, skipping a mode the
//! daemon refuses, such as `auto` without a sandbox), the prompt and the status line show
//! it, and a change made elsewhere (another client, an accepted plan) is followed: shown as
//! a line, above the prompt being read or in the turn.

use super::{App, PROMPT, Step};
use crate::term::dim;
use zeroclaw_client::Update;
use zeroclaw_client::protocol::methods::PermissionMode;
use zeroclaw_rpc::CallError;

/// The mode as the status line says it.
pub fn label(mode: PermissionMode) -> String {
    format!("mode {mode}")
}

/// The line that says the mode changed.
pub fn changed_line(mode: PermissionMode) -> String {
    format!("mode: {mode} ({})", meaning(mode))
}

/// What a mode does, in a few words.
fn meaning(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "asks before edits and commands",
        PermissionMode::AcceptEdits => "edits in the workspace without asking; commands ask",
        PermissionMode::Plan => "read-only: the agent plans, then asks to start",
        PermissionMode::Auto => "everything without asking, inside the sandbox",
    }
}

impl App {
    /// The prompt: `> ` in `default`, else the mode first (`plan > `).
    pub(super) fn prompt_text(&self) -> String {
        match self.session.mode {
            PermissionMode::Default => PROMPT.to_owned(),
            mode => format!("{mode} {PROMPT}"),
        }
    }

    /// The session's mode is `mode` now (the daemon said so).
    pub(super) fn mode_is(&mut self, mode: PermissionMode) {
        self.session.mode = mode;
        self.screen().set_mode(Some(label(mode)));
    }

    /// Shift-Tab: sets the next mode; one the daemon refuses is said and skipped. The
    /// daemon's `mode_changed` (queued for this connection) is what the idle prompt or the
    /// turn shows next, and is skipped there as the mode already shown; here the line is
    /// printed at once.
    pub(super) async fn cycle_mode(&mut self) -> Step {
        let mut mode = self.session.mode.next();
        for _ in 0..PermissionMode::ALL.len() {
            match self.client.session_set_mode(&self.session.id, mode).await {
                Ok(set) => {
                    self.mode_is(set.mode);
                    self.line(&dim(&format!(
                        "{} · Shift-Tab for the next",
                        changed_line(set.mode)
                    )));
                    return Ok(());
                }
                Err(CallError::Rpc(e)) => {
                    self.line(&dim(&format!("mode {mode} skipped: {}", e.message)));
                    mode = mode.next();
                }
                Err(e) => return self.failed("cannot set the mode", &e),
            }
        }
        Ok(())
    }

    /// An event of the session while the prompt is read: a mode change is followed (it
    /// is this client's own Shift-Tab, already shown, or another client's).
    pub(super) fn idle_event(&mut self, update: Update) {
        let Update::ModeChanged { mode, .. } = update else {
            return;
        };
        if mode == self.session.mode {
            return;
        }
        self.mode_is(mode);
        let line = dim(&changed_line(mode));
        if !self.input.print_above(&line) {
            self.line(&line);
        }
    }
}

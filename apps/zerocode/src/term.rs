//! The terminal: its mode saved at start and restored on every exit path (and from a panic
//! hook), quiet input while a turn streams, and the few styles zerocode prints.

use std::io::{IsTerminal, Write};
use std::sync::OnceLock;

#[cfg(unix)]
static SAVED: OnceLock<rustix::termios::Termios> = OnceLock::new();

/// Saves the terminal's mode (when stdin is a terminal) and installs a panic hook that puts
/// it back before the panic message is printed. Call once, before anything reads a line.
pub fn save() {
    #[cfg(unix)]
    if std::io::stdin().is_terminal()
        && let Ok(mode) = rustix::termios::tcgetattr(std::io::stdin())
    {
        let _ = SAVED.set(mode);
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}

/// Puts the terminal back as [`save`] found it. Idempotent; safe from any thread, including
/// while a line editor is blocked in raw mode on another thread.
pub fn restore() {
    #[cfg(unix)]
    if let Some(mode) = SAVED.get() {
        let _ = rustix::termios::tcsetattr(
            std::io::stdin(),
            rustix::termios::OptionalActions::Now,
            mode,
        );
    }
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        // The line editor turns bracketed paste on while it reads a line.
        let mut out = std::io::stdout();
        let _ = out.write_all(b"\x1b[?2004l");
        let _ = out.flush();
    }
}

/// Restores the terminal when dropped: held by `main` for the whole run.
pub struct RestoreOnDrop;

impl Drop for RestoreOnDrop {
    fn drop(&mut self) {
        restore();
    }
}

/// While it lives, keys typed on the terminal are not echoed into the streaming output
/// (they stay queued and show up at the next prompt); Ctrl-C still raises SIGINT.
pub struct QuietInput {
    #[cfg(unix)]
    before: Option<rustix::termios::Termios>,
}

impl QuietInput {
    pub fn new() -> Self {
        #[cfg(unix)]
        {
            use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
            let stdin = std::io::stdin();
            let before = stdin
                .is_terminal()
                .then(|| tcgetattr(&stdin).ok())
                .flatten();
            if let Some(before) = &before {
                let mut quiet = before.clone();
                quiet.local_modes.remove(LocalModes::ECHO);
                quiet.local_modes.insert(LocalModes::ISIG);
                let _ = tcsetattr(&stdin, OptionalActions::Now, &quiet);
            }
            Self { before }
        }
        #[cfg(not(unix))]
        {
            Self {}
        }
    }
}

impl Drop for QuietInput {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(before) = &self.before {
            let _ = rustix::termios::tcsetattr(
                std::io::stdin(),
                rustix::termios::OptionalActions::Now,
                before,
            );
        }
    }
}

/// Whether output gets ANSI styles: stdout is a terminal and `NO_COLOR` is not set.
pub fn styled() -> bool {
    static STYLED: OnceLock<bool> = OnceLock::new();
    *STYLED.get_or_init(|| {
        std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
    })
}

fn paint(code: &str, text: &str) -> String {
    if styled() {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

pub fn dim(text: &str) -> String {
    paint("2", text)
}

pub fn bold(text: &str) -> String {
    paint("1", text)
}

pub fn red(text: &str) -> String {
    paint("31", text)
}

/// The terminal's width in columns (100 when it cannot be told).
pub fn width() -> usize {
    #[cfg(unix)]
    if let Ok(size) = rustix::termios::tcgetwinsize(std::io::stdout())
        && size.ws_col >= 20
    {
        return usize::from(size.ws_col);
    }
    100
}

/// Text from the agent or a tool made safe to print: control characters (escape sequences
/// above all) are dropped, tabs and newlines kept.
pub fn sanitize(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect()
}

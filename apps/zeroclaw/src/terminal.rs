//! The few terminal helpers the CLI needs: is it a terminal, a line or a key from it, dim
//! text.

use std::io::{IsTerminal, Write};
use tokio::sync::Mutex;

/// One question on the terminal at a time (an approval and an elicitation never interleave).
static ASKING: Mutex<()> = Mutex::const_new(());

pub fn stdin_is_terminal() -> bool {
    std::io::stdin().is_terminal()
}

pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// `text` dimmed when stderr is a terminal.
pub fn dim(text: &str) -> String {
    if stderr_is_terminal() {
        format!("\x1b[2m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// Shows `question` on stderr and reads one line from stdin; `None` at end of input.
pub async fn ask(question: &str) -> Option<String> {
    let _turn = ASKING.lock().await;
    let mut err = std::io::stderr();
    let _ = write!(err, "{question}");
    let _ = err.flush();
    tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\r', '\n']).to_owned()),
        }
    })
    .await
    .ok()
    .flatten()
}

/// Shows `question` on stderr and reads one key from the terminal on stdin, without Enter
/// (`zeroclaw_client::keys`, zerocode's reader); `None` when stdin is not a terminal.
pub async fn ask_key(question: &str) -> Option<zeroclaw_client::keys::Key> {
    let _turn = ASKING.lock().await;
    let mut err = std::io::stderr();
    let _ = write!(err, "{question}");
    let _ = err.flush();
    zeroclaw_client::keys::read().await
}

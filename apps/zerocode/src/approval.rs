//! Approvals: what the call would do (the `preview` the daemon sent: a coloured unified
//! diff, or a command and its cwd), then the question, answered with a single key: y allows
//! once, a always (this tool, this session), n or Esc rejects, Ctrl-D rejects, Ctrl-C
//! rejects and cancels the turn. When stdin is not a terminal, a line is read instead.

use crate::input::{Input, Read};
use crate::render::summarize;
use crate::term::{self, bold, dim, sanitize};
use serde_json::Value;
use std::io::{IsTerminal, Write};
use zeroclaw_client::keys::{self, Key};
use zeroclaw_client::{ApprovalPreview, Decision};

/// The hint shown when a key that is no answer was pressed.
const HINT: &str = "press y (allow once), a (always), n or Esc (reject)";
/// The same, where "always" is not offered (leaving the sandbox).
const ONCE_HINT: &str = "press y (allow once), n or Esc (reject)";

/// The preview's lines, styled when the terminal takes styles, every piece of the file or
/// command made safe to print.
pub fn preview_lines(preview: &ApprovalPreview) -> Vec<String> {
    match preview {
        ApprovalPreview::Diff {
            path,
            created,
            diff,
            omitted_lines,
        } => {
            let what = if *created { "new file" } else { "changes to" };
            let mut lines = vec![bold(&format!("{what} {}", sanitize(path)))];
            lines.extend(diff.lines().map(diff_line));
            if *omitted_lines > 0 {
                lines.push(dim(&format!("… {omitted_lines} more diff lines not shown")));
            }
            lines
        }
        ApprovalPreview::Unavailable { path, reason } => vec![format!(
            "{} {}: {}",
            bold("no diff for"),
            sanitize(path),
            sanitize(reason)
        )],
        ApprovalPreview::Command { command, cwd } => {
            let mut lines: Vec<String> = sanitize(command)
                .lines()
                .enumerate()
                .map(|(i, line)| {
                    let lead = if i == 0 { "$ " } else { "  " };
                    bold(&format!("{lead}{line}"))
                })
                .collect();
            lines.push(dim(&format!("in {}", sanitize(cwd))));
            lines
        }
        ApprovalPreview::Unknown => Vec::new(),
    }
}

/// One diff line, coloured by what it is: added green, removed red, hunk headers cyan.
fn diff_line(line: &str) -> String {
    let line = sanitize(line);
    let code = match line.as_bytes().first() {
        Some(b'+') => "32",
        Some(b'-') => "31",
        Some(b'@') => "36",
        Some(b'\\') => "2",
        _ => return line,
    };
    paint(code, &line)
}

fn paint(code: &str, text: &str) -> String {
    if term::styled() {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// What an approval to leave the sandbox says before its question: that the command would
/// run with the user's full rights, and the model's reason.
pub fn escape_lines(justification: &str) -> Vec<String> {
    vec![
        paint(
            "1;31",
            "⚠ this command asks to run OUTSIDE the sandbox: with your full rights, writing \
             anywhere you can and reaching the network",
        ),
        format!(
            "{} {}",
            bold("why (the model's words):"),
            sanitize(justification)
        ),
    ]
}

/// `Run bash `make` outside the sandbox, once? [y]es / [n]o` (no "always": leaving the
/// sandbox is asked every time).
pub fn escape_question(name: &str, input: &Value) -> String {
    let width = term::width().saturating_sub(name.len() + 50).max(20);
    let what = summarize(name, input, width);
    format!("Run {name} `{what}` OUTSIDE the sandbox, once? [y]es / [n]o ")
}

/// `Allow bash `ls`? [y]es / [n]o / [a]lways` (plain text: the line editor measures it
/// when stdin is not a terminal).
pub fn question(name: &str, input: &Value) -> String {
    let width = term::width().saturating_sub(name.len() + 40).max(20);
    let what = summarize(name, input, width);
    if what.is_empty() {
        format!("Allow {name}? [y]es / [n]o / [a]lways ")
    } else {
        format!("Allow {name} `{what}`? [y]es / [n]o / [a]lways ")
    }
}

/// Asks `question` and reads the answer: one key on a terminal, else a line. `None` for
/// Ctrl-C (reject, and cancel the turn). `always`: whether "always" is among the answers
/// (not for an escape from the sandbox).
/// `typed`: the running turn's key reader (`app/typing.rs`), which then has the keys; else
/// one key is read here.
pub async fn decide(
    input: &Input,
    question: &str,
    always: bool,
    mut typed: Option<&mut crate::app::Typing>,
) -> Option<Decision> {
    if !std::io::stdin().is_terminal() {
        return by_line(input, question, always).await;
    }
    loop {
        print(question);
        let key = match typed.as_deref_mut() {
            Some(typing) => typing.next().await,
            None => keys::read().await,
        };
        let Some(key) = key else {
            // The terminal could not be read key by key: a line, then.
            print("\n");
            return by_line(input, question, always).await;
        };
        let (echo, decision) = match key {
            Key::Char('y' | 'Y') => ("y", Some(Decision::AllowOnce)),
            Key::Char('a' | 'A') if always => ("a", Some(Decision::AllowAlways)),
            Key::Char('n' | 'N') => ("n", Some(Decision::Reject)),
            Key::Esc => ("Esc", Some(Decision::Reject)),
            Key::CtrlD => ("^D", Some(Decision::Reject)),
            Key::CtrlC => ("^C", None),
            Key::Char(_)
            | Key::Enter
            | Key::AltEnter
            | Key::Backspace
            | Key::ShiftTab
            | Key::Other => {
                let hint = if always { HINT } else { ONCE_HINT };
                print(&format!("\n{}\n", dim(hint)));
                continue;
            }
        };
        print(&format!("{echo}\n"));
        if decision == Some(Decision::Reject) {
            print(&format!("{}\n", dim("rejected")));
        }
        return decision;
    }
}

/// The answer as a line (stdin is not a terminal): y, a, n or an empty line.
async fn by_line(input: &Input, question: &str, always: bool) -> Option<Decision> {
    loop {
        let answer = match input.read(question).await {
            Read::Line(answer) => answer,
            Read::Eof => return Some(Decision::Reject),
            Read::Interrupted => return None,
        };
        match answer.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => return Some(Decision::AllowOnce),
            "a" | "always" if always => return Some(Decision::AllowAlways),
            "" | "n" | "no" => {
                print(&format!("{}\n", dim("rejected")));
                return Some(Decision::Reject);
            }
            _ if always => print("answer y, n or a\n"),
            _ => print("answer y or n\n"),
        }
    }
}

fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_preview_is_a_header_its_lines_and_the_count_left_out() {
        let lines = preview_lines(&ApprovalPreview::Diff {
            path: "/w/a.rs".into(),
            created: false,
            diff: "@@ -1 +1 @@\n-old\n+new\x1b[2J\n".into(),
            omitted_lines: 7,
        });
        // Not a terminal under `cargo test`: plain, and the escape in the file dropped.
        assert_eq!(
            lines,
            [
                "changes to /w/a.rs",
                "@@ -1 +1 @@",
                "-old",
                "+new[2J",
                "… 7 more diff lines not shown"
            ]
        );
    }

    #[test]
    fn an_escape_says_what_is_asked_and_why_and_offers_no_always() {
        let lines = escape_lines("the cache\x1b[2J is in ~/.cache");
        assert!(lines[0].contains("OUTSIDE the sandbox"), "{lines:?}");
        assert_eq!(
            lines[1],
            "why (the model's words): the cache[2J is in ~/.cache"
        );
        let q = escape_question("bash", &serde_json::json!({"command": "make"}));
        assert!(q.contains("OUTSIDE the sandbox, once?"), "{q}");
        assert!(!q.contains("[a]lways"), "{q}");
    }

    #[test]
    fn a_command_preview_shows_every_line_and_the_cwd() {
        let lines = preview_lines(&ApprovalPreview::Command {
            command: "cd sub &&\nmake all".into(),
            cwd: "/w".into(),
        });
        assert_eq!(lines, ["$ cd sub &&", "  make all", "in /w"]);
    }
}

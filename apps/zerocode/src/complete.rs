//! The prompt's line-editor helper: Tab completion of `/` commands — zerocode's own, then
//! the project's custom commands (docs/project.md) that none of them hides — (when several
//! match, Tab again lists them, each with its line of help) and of `@path` mentions under
//! the session's cwd, and the keys of multi-line prompts (Alt-Enter, a trailing `\`).
//!
//! No hints as one types: they make the editor redraw the whole line, prompt included, at
//! every key, so the prompt would show up in the scrollback between the keys.
//!
//! The editor is shared by the prompt and by questions (approvals, forms, the session
//! picker): all of this applies to the prompt only ([`Shared::prompt`]).

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Cmd, ConditionalEventHandler, Event, EventContext, RepeatCount};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// One slash command: its name, what it takes, and one line about it.
pub struct Command {
    pub name: &'static str,
    pub args: &'static str,
    pub about: &'static str,
}

/// Every command, in the order `/help` lists them (aliases are not completed).
pub const COMMANDS: &[Command] = &[
    Command {
        name: "/help",
        args: "",
        about: "this help",
    },
    Command {
        name: "/status",
        args: "",
        about: "the daemon, this session, its model and message count",
    },
    Command {
        name: "/model",
        args: "[NAME]",
        about: "set this session's model from the next turn (alone: show it)",
    },
    Command {
        name: "/sandbox",
        args: "",
        about: "what this session's commands and file tools may touch",
    },
    Command {
        name: "/new",
        args: "",
        about: "start a new session (in zerocode's directory)",
    },
    Command {
        name: "/clear",
        args: "",
        about: "start a new session in this session's directory",
    },
    Command {
        name: "/sessions",
        args: "",
        about: "list recent sessions, numbered",
    },
    Command {
        name: "/load",
        args: "ID|N",
        about: "resume a session by id (or a unique prefix) or by its /sessions number",
    },
    Command {
        name: "/title",
        args: "NAME",
        about: "rename this session",
    },
    Command {
        name: "/cancel",
        args: "",
        about: "cancel a turn running in this session",
    },
    Command {
        name: "/compact",
        args: "",
        about: "fold older turns into a summary the model is sent instead",
    },
    Command {
        name: "/undo",
        args: "",
        about: "put the files and the conversation back to before the last turn",
    },
    Command {
        name: "/rewind",
        args: "[N]",
        about: "list earlier prompts with the files each turn changed; N: back to before turn N",
    },
    Command {
        name: "/fork",
        args: "[N]",
        about: "continue in a new session with this one's history (up to turn N)",
    },
    Command {
        name: "/context",
        args: "",
        about: "the AGENTS.md files, skills and custom commands this session's turns load",
    },
    Command {
        name: "/quit",
        args: "",
        about: "exit (also Ctrl-D, or Ctrl-C twice)",
    },
];

/// Directory entries read for one completion: a huge directory is completed from its first
/// entries rather than stalling the prompt.
const MAX_ENTRIES_READ: usize = 5000;

/// What the helper and the key handlers share with the app.
#[derive(Clone, Default)]
pub struct Shared {
    /// The current session's cwd: `@` completes under it (it changes with /load, /clear).
    cwd: Arc<Mutex<PathBuf>>,
    /// Whether the line being read is the prompt (not an answer to a question).
    prompt: Arc<AtomicBool>,
    /// Where the line being read has a `\` the user typed before Enter to go on: taken out
    /// when the line is read ([`Shared::take_continuations`]). One entry per Enter, and
    /// cleared for each read.
    continuations: Arc<Mutex<Vec<usize>>>,
    /// The session's custom commands as last listed (before each prompt is read).
    custom: Arc<Mutex<Vec<Custom>>>,
    /// Shift-Tab ended the prompt's read: cycle the permission mode, then read it on
    /// ([`ShiftTab`]).
    cycle: Arc<AtomicBool>,
}

/// A custom command, as completion shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Custom {
    /// Its name without the `/`.
    pub name: String,
    pub argument_hint: Option<String>,
    pub description: Option<String>,
}

impl Shared {
    pub fn set_cwd(&self, cwd: &Path) {
        *self.cwd.lock().unwrap_or_else(PoisonError::into_inner) = cwd.to_path_buf();
    }

    pub fn cwd(&self) -> PathBuf {
        self.cwd
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The custom commands `/` completes from now on.
    pub fn set_custom(&self, custom: Vec<Custom>) {
        *self.custom.lock().unwrap_or_else(PoisonError::into_inner) = custom;
    }

    fn custom(&self) -> Vec<Custom> {
        self.custom
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether Shift-Tab ended the last read (and forgets it).
    pub fn take_cycle(&self) -> bool {
        self.cycle.swap(false, Ordering::Relaxed)
    }

    pub fn set_prompt(&self, prompt: bool) {
        self.prompt.store(prompt, Ordering::Relaxed);
    }

    fn is_prompt(&self) -> bool {
        self.prompt.load(Ordering::Relaxed)
    }

    pub fn clear_continuations(&self) {
        self.continuations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// `line` without the `\` of each typed continuation (one still followed by its new
    /// line where it was typed; a backslash that was pasted or moved by later edits stays).
    pub fn take_continuations(&self, line: String) -> String {
        let mut at = std::mem::take(
            &mut *self
                .continuations
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        at.sort_unstable();
        at.dedup();
        let mut line = line;
        for i in at.into_iter().rev() {
            if line.get(i..i + 2) == Some("\\\n") {
                line.remove(i);
            }
        }
        line
    }
}

/// zerocode's names besides those [`COMMANDS`] lists (its aliases).
const ALIASES: &[&str] = &["/?", "/exit", "/q", "/ls", "/resume"];

/// Whether `/name` is one of zerocode's own commands (which win over a custom command of
/// the same name).
pub fn built_in(name: &str) -> bool {
    let slashed = format!("/{name}");
    COMMANDS.iter().any(|c| c.name == slashed) || ALIASES.contains(&slashed.as_str())
}

/// The editor's helper.
pub struct PromptHelper {
    pub shared: Shared,
}

impl rustyline::Helper for PromptHelper {}

impl Validator for PromptHelper {}

impl Completer for PromptHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        if !self.shared.is_prompt() {
            return Ok((0, Vec::new()));
        }
        Ok(complete(
            line,
            pos,
            &self.shared.cwd(),
            &self.shared.custom(),
        ))
    }
}

impl Hinter for PromptHelper {
    type Hint = String;
}

impl Highlighter for PromptHelper {}

/// Candidates for the word before `pos`: `/` commands at the start of the line (zerocode's
/// own, then the `custom` ones none of them hides), `@path` mentions anywhere. Answers
/// where the replaced text starts.
pub fn complete(line: &str, pos: usize, cwd: &Path, custom: &[Custom]) -> (usize, Vec<Pair>) {
    let Some(before) = line.get(..pos) else {
        return (0, Vec::new());
    };
    let start = before
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let word = &before[start..];
    if let Some(partial) = word.strip_prefix('@') {
        return (start, complete_path(cwd, partial));
    }
    if start == 0 && word.starts_with('/') {
        let own = COMMANDS
            .iter()
            .filter(|c| c.name.starts_with(word))
            .map(|c| Pair {
                display: format!("{:<16}  {}", format!("{} {}", c.name, c.args), c.about),
                replacement: c.name.to_owned(),
            });
        let theirs = custom
            .iter()
            .filter(|c| !built_in(&c.name) && c.name.starts_with(&word[1..]))
            .map(|c| {
                let usage = format!("/{} {}", c.name, c.argument_hint.as_deref().unwrap_or(""));
                let about = c.description.as_deref().unwrap_or("(custom command)");
                Pair {
                    display: format!("{usage:<16}  {about}"),
                    replacement: format!("/{}", c.name),
                }
            });
        return (0, own.chain(theirs).collect());
    }
    (0, Vec::new())
}

/// The names under `cwd` that `partial` (`dir/dir/prefix`) can become, as `@` mentions;
/// directories end with `/`. Nothing for a path leaving the cwd (absolute, or with `..`).
fn complete_path(cwd: &Path, partial: &str) -> Vec<Pair> {
    let (dir, prefix) = match partial.rfind('/') {
        Some(i) => (&partial[..=i], &partial[i + 1..]),
        None => ("", partial),
    };
    let inside = Path::new(dir)
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !inside {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(cwd.join(dir)) else {
        return Vec::new();
    };
    let mut found: Vec<Pair> = entries
        .take(MAX_ENTRIES_READ)
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            // A mention ends at white space, so such a name cannot be mentioned; hidden
            // files only when asked for.
            if !name.starts_with(prefix)
                || name.contains(char::is_whitespace)
                || (name.starts_with('.') && !prefix.starts_with('.'))
            {
                return None;
            }
            let is_dir = std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir());
            let slash = if is_dir { "/" } else { "" };
            Some(Pair {
                display: format!("{name}{slash}"),
                replacement: format!("@{dir}{name}{slash}"),
            })
        })
        .collect();
    found.sort_by(|a, b| a.display.cmp(&b.display));
    found
}

/// Alt-Enter at the prompt: a new line in the prompt instead of sending it.
pub struct AltEnter(pub Shared);

impl ConditionalEventHandler for AltEnter {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, _: &EventContext) -> Option<Cmd> {
        self.0.is_prompt().then_some(Cmd::Newline)
    }
}

/// Shift-Tab at the prompt: ends the read with the line as it is, marked so the app cycles
/// the session's permission mode and reads the same line on (`app/modes.rs`).
pub struct ShiftTab(pub Shared);

impl ConditionalEventHandler for ShiftTab {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, _: &EventContext) -> Option<Cmd> {
        if !self.0.is_prompt() {
            return None;
        }
        self.0.cycle.store(true, Ordering::Relaxed);
        Some(Cmd::AcceptLine)
    }
}

/// Enter after a trailing `\` at the prompt: a new line, as in a shell. The `\` stays on
/// screen while the prompt is edited and is taken out when it is sent (the editor has no
/// command that replaces text and leaves the cursor after it); a backslash that was pasted
/// stays as it is.
pub struct Continue(pub Shared);

impl ConditionalEventHandler for Continue {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, ctx: &EventContext) -> Option<Cmd> {
        let line = ctx.line();
        if !(self.0.is_prompt() && ctx.pos() == line.len() && line.ends_with('\\')) {
            return None;
        }
        self.0
            .continuations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(line.len() - 1);
        Some(Cmd::Newline)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn replacements(line: &str, cwd: &Path) -> (usize, Vec<String>) {
        let (start, pairs) = complete(line, line.len(), cwd, &[]);
        (start, pairs.into_iter().map(|p| p.replacement).collect())
    }

    #[test]
    fn commands_complete_at_the_start_of_the_line_only() {
        let cwd = Path::new("/nonexistent");
        assert_eq!(replacements("/st", cwd), (0, vec!["/status".to_owned()]));
        assert_eq!(
            replacements("/c", cwd).1,
            ["/clear", "/cancel", "/compact", "/context"]
        );
        assert!(replacements("say /st", cwd).1.is_empty());
        let (_, listed) = complete("/mo", 3, cwd, &[]);
        assert_eq!(
            listed[0].display,
            "/model [NAME]     set this session's model from the next turn (alone: show it)"
        );
    }

    #[test]
    fn custom_commands_complete_after_zerocode_s_own_and_never_hide_them() {
        let cwd = Path::new("/nonexistent");
        let custom = |name: &str, hint: Option<&str>| Custom {
            name: name.to_owned(),
            argument_hint: hint.map(str::to_owned),
            description: Some(format!("the {name} command")),
        };
        let custom = [
            custom("review", Some("[FILE]")),
            custom("status", None),
            custom("q", None),
            custom("ship", None),
        ];
        let (_, pairs) = complete("/s", 2, cwd, &custom);
        let names: Vec<_> = pairs.iter().map(|p| p.replacement.as_str()).collect();
        // zerocode's /status and /sandbox first; the project's /status is hidden by ours.
        assert_eq!(names, ["/status", "/sandbox", "/sessions", "/ship"]);
        let (_, pairs) = complete("/rev", 4, cwd, &custom);
        assert_eq!(pairs.len(), 1);
        assert_eq!(pairs[0].replacement, "/review");
        assert_eq!(pairs[0].display, "/review [FILE]    the review command");
        // An alias hides a custom command too.
        assert!(
            complete("/q", 2, cwd, &custom)
                .1
                .iter()
                .all(|p| p.replacement != "/q")
        );
    }

    #[test]
    fn mentions_complete_names_under_the_cwd_and_never_leave_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/deep")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
        std::fs::write(dir.path().join("src/mod.rs"), "").unwrap();
        std::fs::write(dir.path().join(".hidden"), "").unwrap();
        std::fs::write(dir.path().join("README.md"), "").unwrap();
        assert_eq!(
            replacements("look at @s", dir.path()),
            (8, vec!["@src/".to_owned()])
        );
        assert_eq!(
            replacements("@src/m", dir.path()).1,
            ["@src/main.rs", "@src/mod.rs"]
        );
        assert_eq!(replacements("@src/d", dir.path()).1, ["@src/deep/"]);
        assert_eq!(replacements("@", dir.path()).1, ["@README.md", "@src/"]);
        assert_eq!(replacements("@.h", dir.path()).1, ["@.hidden"]);
        assert!(replacements("@../", dir.path()).1.is_empty());
        assert!(replacements("@/etc/", dir.path()).1.is_empty());
    }

    #[test]
    fn typed_continuations_lose_their_backslash_and_pasted_ones_keep_it() {
        let shared = Shared::default();
        shared.continuations.lock().unwrap().extend([5, 12, 40]);
        // 5 and 12 were typed; 40 is past the end (edited away).
        assert_eq!(
            shared.take_continuations("alpha\\\nbeta \\\nx \\\ny".into()),
            "alpha\nbeta \nx \\\ny"
        );
        assert!(shared.continuations.lock().unwrap().is_empty());
    }

    #[test]
    fn help_lists_every_command() {
        for command in COMMANDS {
            assert!(
                crate::app::commands::HELP.contains(command.name),
                "HELP does not list {}",
                command.name
            );
        }
    }
}

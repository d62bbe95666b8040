//! Custom commands: `NAME.md` files whose body is a prompt template, typed as `/NAME ARGS`
//! in a client. Found in `<project>/.zeroclaw/commands/`, `<project>/.claude/commands/`
//! and `<config dir>/commands/`, in that order (a name found twice is the first one's).
//! Front matter, optional: `description`, `argument-hint`.
//!
//! Expansion ([`expand`]): `$ARGUMENTS` is what followed the name, as typed (trimmed);
//! `$1`, `$2`… are its words split as a shell would (whitespace separates, `"…"` and
//! `'…'` group, a backslash outside single quotes takes the next character as it is); a
//! number past the last word is empty. A template that uses none of them gets the
//! arguments, if any, on a line `ARGUMENTS: …` after it, as Claude Code does.

use super::Project;
use super::files::{Files, Text};
use super::front_matter;
use std::path::PathBuf;
use std::sync::Arc;

/// The most of a command file read.
const COMMAND_CAP: usize = 64 * 1024;

#[derive(Debug, Clone)]
pub struct Command {
    pub name: String,
    pub description: Option<String>,
    pub argument_hint: Option<String>,
    pub path: PathBuf,
    pub file: Arc<Text>,
}

impl Command {
    /// The template: the file after its front matter.
    pub fn template(&self) -> &str {
        front_matter::parse(&self.file.text)
            .map(|p| p.body)
            .unwrap_or(&self.file.text)
    }
}

fn roots(project: &Project) -> [PathBuf; 3] {
    [
        project.root.join(".zeroclaw").join("commands"),
        project.root.join(".claude").join("commands"),
        project.config_dir.join("commands"),
    ]
}

/// Whether `name` can be typed as `/name`: letters, digits, `-`, `_`, `.`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Every command found (blocking); what was skipped is told in `warnings`.
pub fn load(project: &Project, files: &Files, warnings: &mut Vec<String>) -> Vec<Command> {
    let mut out: Vec<Command> = Vec::new();
    for root in roots(project) {
        for path in super::sorted_entries_all(&root) {
            if path.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let Some(name) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
                continue;
            };
            let Some(file) = files.read(&path, COMMAND_CAP) else {
                continue;
            };
            let skip = |why: String| format!("command {} skipped: {why}", path.display());
            if !valid_name(&name) {
                warnings.push(skip(format!(
                    "{name:?} is not a command name (letters, digits, `-`, `_`, `.`)"
                )));
                continue;
            }
            if out.iter().any(|c| c.name == name) {
                warnings.push(skip(format!(
                    "the name {name:?} is taken by a command found before it"
                )));
                continue;
            }
            let parsed = match front_matter::parse(&file.text) {
                Ok(parsed) => parsed,
                Err(why) => {
                    warnings.push(skip(why));
                    continue;
                }
            };
            out.push(Command {
                description: parsed.get("description").map(str::to_owned),
                argument_hint: parsed.get("argument-hint").map(str::to_owned),
                name,
                path,
                file: file.clone(),
            });
        }
    }
    out
}

/// `template` with `arguments` filled in.
pub fn expand(template: &str, arguments: &str) -> String {
    let all = arguments.trim();
    let words = split(all);
    let mut out = String::with_capacity(template.len() + all.len());
    let mut used = false;
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(all);
            used = true;
            rest = tail;
            continue;
        }
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        match after[..digits].parse::<usize>() {
            Ok(n) if n > 0 => {
                out.push_str(words.get(n - 1).map(String::as_str).unwrap_or(""));
                used = true;
                rest = &after[digits..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    if !used && !all.is_empty() {
        out = format!("{}\n\nARGUMENTS: {all}", out.trim_end());
    }
    out
}

/// The words of `text`, split as a shell would (without its expansions); an unclosed
/// quote runs to the end.
pub fn split(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => word.get_or_insert_default().push(c),
            (_, '\\') => {
                if let Some(next) = chars.next() {
                    word.get_or_insert_default().push(next);
                }
            }
            (Some(_), c) => word.get_or_insert_default().push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_default();
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_default().push(c),
        }
    }
    words.extend(word);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_and_positions_are_filled_in() {
        assert_eq!(
            expand("Fix issue #$ARGUMENTS now.", "  123 quickly "),
            "Fix issue #123 quickly now."
        );
        assert_eq!(
            expand("Review PR #$1 with priority $2 ($3).", "456 \"very high\""),
            "Review PR #456 with priority very high ()."
        );
        assert_eq!(expand("Costs $5, $x and $", ""), "Costs , $x and $");
        assert_eq!(
            expand("Summarise.\n", "the diff"),
            "Summarise.\n\nARGUMENTS: the diff"
        );
        assert_eq!(expand("Summarise.\n", ""), "Summarise.\n");
    }

    #[test]
    fn words_split_as_a_shell_splits_them() {
        assert_eq!(
            split(r#"a "b c" 'd "e"' f\ g "" h"#),
            ["a", "b c", "d \"e\"", "f g", "", "h"]
        );
        assert!(split("   ").is_empty());
    }
}

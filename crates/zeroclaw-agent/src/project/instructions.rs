//! Instruction files: the config dir's `AGENTS.md`, then one file per directory from the
//! project root down to the session's cwd (its `AGENTS.md`, or its `CLAUDE.md` when it has
//! none), each cut at [`FILE_CAP`] and all together at [`TOTAL_CAP`], the cut said where it
//! falls. The most general come first, so a nearer file's word comes later and wins.

use super::Project;
use super::files::{Files, Text};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the prompt takes of one file.
pub const FILE_CAP: usize = 32 * 1024;
/// What the prompt takes of all of them: a deep tree of files cannot crowd out the
/// conversation.
pub const TOTAL_CAP: usize = 96 * 1024;

/// One instruction file, as the prompt has it.
#[derive(Debug)]
pub struct Instruction {
    pub path: PathBuf,
    pub file: Arc<Text>,
    /// How much of `file.text` the prompt has (less than all of it past the total cap).
    pub shown: usize,
}

impl Instruction {
    pub fn truncated(&self) -> bool {
        self.file.truncated || self.shown < self.file.text.len()
    }
}

/// The directories whose instruction file is read, in prompt order.
fn dirs(project: &Project) -> Vec<PathBuf> {
    let mut down: Vec<PathBuf> = project
        .cwd
        .ancestors()
        .take_while(|d| d.starts_with(&project.root))
        .map(Path::to_path_buf)
        .collect();
    down.reverse();
    down
}

/// Reads the instruction files (blocking); the files left out are told in `warnings`.
pub fn load(project: &Project, files: &Files, warnings: &mut Vec<String>) -> Vec<Instruction> {
    let mut found: Vec<(PathBuf, Arc<Text>)> = Vec::new();
    let user = project.config_dir.join("AGENTS.md");
    if let Some(text) = files.read(&user, FILE_CAP) {
        found.push((user, text));
    }
    for dir in dirs(project) {
        let file = ["AGENTS.md", "CLAUDE.md"].into_iter().find_map(|name| {
            let path = dir.join(name);
            files.read(&path, FILE_CAP).map(|text| (path, text))
        });
        if let Some((path, text)) = file
            && !found.iter().any(|(p, _)| *p == path)
        {
            found.push((path, text));
        }
    }
    let mut left = TOTAL_CAP;
    let mut out = Vec::new();
    for (path, file) in found {
        if left == 0 {
            warnings.push(format!(
                "{} was not loaded: the instruction files before it reached the {} KiB total cap",
                path.display(),
                TOTAL_CAP / 1024
            ));
            continue;
        }
        let shown = floor_boundary(&file.text, left);
        left -= shown;
        out.push(Instruction { path, file, shown });
    }
    out
}

/// The largest char boundary of `text` at or below `max`.
fn floor_boundary(text: &str, max: usize) -> usize {
    if text.len() <= max {
        return text.len();
    }
    (0..=max)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

/// The system prompt's section for them; empty if there are none.
pub fn section(loaded: &[Instruction]) -> String {
    if loaded.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n\n# Project instructions\n\nThe user's instructions for this project and this \
         machine, from these files, the most general first (where two disagree, the later one \
         wins). Follow them.",
    );
    for i in loaded {
        out.push_str(&format!("\n\n## {}\n\n", i.path.display()));
        out.push_str(i.file.text[..i.shown].trim_end());
        if i.truncated() {
            let why = if i.file.truncated && i.shown == i.file.text.len() {
                format!("the {} KiB cap per file", FILE_CAP / 1024)
            } else {
                format!("the {} KiB cap on all instruction files", TOTAL_CAP / 1024)
            };
            out.push_str(&format!(
                "\n\n[... cut here: this is the first {} of its {} bytes ({why}); read the \
                 file for the rest ...]",
                i.shown, i.file.bytes
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_directories_run_from_the_root_down_to_the_cwd() {
        let project = Project {
            config_dir: PathBuf::from("/cfg"),
            root: PathBuf::from("/repo"),
            cwd: PathBuf::from("/repo/a/b"),
        };
        let want: Vec<PathBuf> = ["/repo", "/repo/a", "/repo/a/b"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(dirs(&project), want);
    }
}

//! A project's skills may carry scripts (`scripts/collect.sh` beside a `SKILL.md`): code from
//! a repository someone may have just cloned. Like the project's hooks, they run only once
//! the user trusts the project (`zeroclaw trust`, `project/trust.rs`): until then a `bash`
//! command that names the folder of one of the project's skills is refused, saying how to
//! trust it. The user's own skills (`<config dir>/skills/`) are not gated.
//!
//! This guards against running a skill's script because its instructions said so; it is
//! not a containment (a command that rebuilds a script's text is just a command, asked
//! about and sandboxed like any other). What is matched: the folder's absolute path, its
//! path from the project root (`.zeroclaw/skills/NAME`) and from the cwd, and
//! `skills/NAME` (a command run from `.zeroclaw/`), each followed by `/`, a quote, a
//! space or the end; `\` counts as `/`.

use super::step::Turn;
use crate::project::Skill;
use crate::provider::ToolCall;
use serde_json::Value;
use std::path::Path;

impl Turn<'_> {
    /// The refusal of a `bash` call that names an untrusted project skill's folder.
    pub(super) fn untrusted_skill_script(&self, call: &ToolCall, args: &Value) -> Option<String> {
        if self.project_trusted || call.name != crate::tools::BASH {
            return None;
        }
        let command = args.get("command")?.as_str()?;
        let cwd = Path::new(&self.session.cwd);
        let skill = named_skill(command, &self.tools_context.skills, &self.project_root, cwd)?;
        Some(format!(
            "refused: this command runs files of the project skill {:?} ({}), and the project \
             {} is not trusted, so its skills' scripts do not run; it did not run. Read the \
             skill's files with the `skill` tool instead. The user can allow its scripts with \
             `zeroclaw trust {}`",
            skill.name,
            skill.dir.display(),
            self.project_root.display(),
            self.project_root.display()
        ))
    }
}

/// The first of the project's skills (those in `root`) whose folder `command` names.
fn named_skill<'s>(
    command: &str,
    skills: &'s [Skill],
    root: &Path,
    cwd: &Path,
) -> Option<&'s Skill> {
    let command = command.replace('\\', "/");
    skills.iter().find(|skill| {
        let Ok(in_root) = skill.dir.strip_prefix(root) else {
            return false; // the user's own skill
        };
        let mut names = vec![slashed(&skill.dir), slashed(in_root)];
        if let Ok(in_cwd) = skill.dir.strip_prefix(cwd) {
            names.push(slashed(in_cwd));
        }
        if let Some(folder) = skill.dir.file_name() {
            names.push(format!("skills/{}", folder.to_string_lossy()));
        }
        names
            .iter()
            .any(|name| !name.is_empty() && mentions(&command, name))
    })
}

fn slashed(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// `command` holds `name` followed by a path separator, a quote, a space, a `;` or the end
/// (so `skills/notes` is not found in `skills/notes-old`).
fn mentions(command: &str, name: &str) -> bool {
    command.match_indices(name).any(|(at, _)| {
        command[at + name.len()..].chars().next().is_none_or(|c| {
            matches!(c, '/' | '"' | '\'' | ';' | ')' | '&' | '|') || c.is_whitespace()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::sync::Arc;

    fn skill(dir: &str) -> Skill {
        Skill {
            name: "notes".into(),
            description: "d".into(),
            dir: PathBuf::from(dir),
            file: Arc::new(crate::project::Text {
                text: String::new(),
                bytes: 0,
                truncated: false,
            }),
        }
    }

    #[test]
    fn a_command_naming_a_project_skills_folder_is_found_however_it_is_written() {
        let skills = [skill("/p/.zeroclaw/skills/notes")];
        let (root, cwd) = (Path::new("/p"), Path::new("/p"));
        for command in [
            "sh .zeroclaw/skills/notes/scripts/run.sh",
            "bash /p/.zeroclaw/skills/notes/run.sh",
            "cd .zeroclaw && ./skills/notes/run.sh",
            "python3 '.zeroclaw/skills/notes'/x.py",
            "cat .zeroclaw\\skills\\notes\\run.ps1",
            "ls .zeroclaw/skills/notes",
        ] {
            assert!(
                named_skill(command, &skills, root, cwd).is_some(),
                "{command}"
            );
        }
        for command in ["ls", "cat skills/notes-old/run.sh", "echo notes"] {
            assert!(
                named_skill(command, &skills, root, cwd).is_none(),
                "{command}"
            );
        }
    }

    #[test]
    fn the_users_own_skills_are_not_gated() {
        let skills = [skill("/home/me/.zeroclaw/skills/notes")];
        let command = "sh /home/me/.zeroclaw/skills/notes/run.sh";
        assert!(named_skill(command, &skills, Path::new("/p"), Path::new("/p")).is_none());
    }
}

//! Skills in the Agent Skills format: a folder holding `SKILL.md` (front matter `name` and
//! `description`, then Markdown instructions) and any other files. Only the names and
//! descriptions go in the system prompt; the `skill` tool reads a body, or another file of
//! the folder, when the model asks for it.
//!
//! Found in `<project>/.zeroclaw/skills/`, `<project>/.claude/skills/` and
//! `<config dir>/skills/`, in that order: a name found twice is the first one's, the
//! other skipped with a warning, as is a `SKILL.md` whose front matter is malformed.

use super::Project;
use super::files::{Files, Text};
use super::front_matter;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// The most of a `SKILL.md` read.
const SKILL_CAP: usize = 256 * 1024;
/// The most of a description the prompt has (the format's own limit).
const DESCRIPTION_CAP: usize = 1024;
/// The most files a skill's listing names.
const LISTING_CAP: usize = 200;

#[derive(Debug, Clone)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// Its folder.
    pub dir: PathBuf,
    pub file: Arc<Text>,
}

/// The folders skills are looked for in, first first.
fn roots(project: &Project) -> [PathBuf; 3] {
    [
        project.root.join(".zeroclaw").join("skills"),
        project.root.join(".claude").join("skills"),
        project.config_dir.join("skills"),
    ]
}

/// Every skill found (blocking); what was skipped is told in `warnings`.
pub fn load(project: &Project, files: &Files, warnings: &mut Vec<String>) -> Vec<Skill> {
    let mut out: Vec<Skill> = Vec::new();
    for root in roots(project) {
        for dir in super::sorted_entries(&root) {
            let path = dir.join("SKILL.md");
            let Some(file) = files.read(&path, SKILL_CAP) else {
                continue;
            };
            match parse(&file.text) {
                Err(why) => warnings.push(format!("skill {} skipped: {why}", path.display())),
                Ok((name, _)) if out.iter().any(|s| s.name == name) => {
                    warnings.push(format!(
                        "skill {} skipped: the name {name:?} is taken by a skill found before it",
                        path.display()
                    ));
                }
                Ok((name, description)) => out.push(Skill {
                    name,
                    description,
                    dir,
                    file,
                }),
            }
        }
    }
    out
}

/// The name and description of a `SKILL.md`, or why it cannot be a skill.
fn parse(text: &str) -> Result<(String, String), String> {
    let parsed = front_matter::parse(text)?;
    let Some(name) = parsed.get("name") else {
        return Err("its front matter has no `name`".into());
    };
    let Some(description) = parsed.get("description") else {
        return Err("its front matter has no `description`".into());
    };
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if !valid {
        return Err(format!(
            "the name {name:?} is not 1 to 64 lowercase letters, digits and single hyphens"
        ));
    }
    let description: String = description.chars().take(DESCRIPTION_CAP).collect();
    Ok((name.to_owned(), description))
}

impl Skill {
    /// The body, the Markdown after the front matter.
    pub fn body(&self) -> &str {
        front_matter::parse(&self.file.text)
            .map(|p| p.body)
            .unwrap_or(&self.file.text)
    }
}

/// The system prompt's section for them; empty if there are none.
pub fn section(skills: &[Skill]) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n\n# Skills\n\nInstructions for particular tasks, loaded when needed: before doing a \
         task one of these describes, call the `skill` tool with its name and follow what it \
         returns.\n",
    );
    for s in skills {
        out.push_str(&format!(
            "\n- {}: {}",
            s.name,
            s.description.replace('\n', " ")
        ));
    }
    out
}

/// `file` of the skill in `dir`, confined to that folder: a relative path without `..`
/// whose real path (symbolic links followed) is still inside it. Blocking.
pub fn read_file(dir: &Path, file: &str, cap: usize) -> Result<Arc<Text>, String> {
    let rel = Path::new(file);
    if rel.as_os_str().is_empty()
        || !rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(format!(
            "{file:?} is not a path inside the skill's folder (relative, without `..`)"
        ));
    }
    let inside = |p: &Path| -> Result<PathBuf, String> {
        std::fs::canonicalize(p).map_err(|e| format!("{file:?}: {e}"))
    };
    let real_dir = inside(dir)?;
    let real = inside(&dir.join(rel))?;
    if !real.starts_with(&real_dir) {
        return Err(format!(
            "{file:?} leads outside the skill's folder (through a symbolic link)"
        ));
    }
    if !real.is_file() {
        return Err(format!("{file:?} is not a file"));
    }
    Files::default()
        .read(&real, cap)
        .ok_or_else(|| format!("{file:?} cannot be read"))
}

/// The skill's other files, relative to its folder, sorted; at most [`LISTING_CAP`].
/// Symbolic links are not followed: what they lead to is not the skill's.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in super::sorted_entries_all(&d) {
            if out.len() >= LISTING_CAP {
                return out;
            }
            let Ok(meta) = std::fs::symlink_metadata(&entry) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(entry);
            } else if meta.is_file()
                && let Ok(rel) = entry.strip_prefix(dir)
                && rel != Path::new("SKILL.md")
            {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn names_follow_the_format_and_both_members_are_needed() {
        let ok = parse("---\nname: pdf-tools\ndescription: PDFs\n---\nbody").unwrap();
        assert_eq!(ok, ("pdf-tools".to_owned(), "PDFs".to_owned()));
        for (text, says) in [
            ("---\ndescription: d\n---\n", "no `name`"),
            ("---\nname: x\n---\n", "no `description`"),
            ("---\nname: PDF Tools\ndescription: d\n---\n", "not 1 to 64"),
            ("---\nname: a--b\ndescription: d\n---\n", "not 1 to 64"),
            ("no front matter", "no `name`"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_file_outside_the_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("s");
        std::fs::create_dir_all(skill.join("docs")).unwrap();
        std::fs::write(skill.join("docs/a.md"), "inside").unwrap();
        std::fs::write(dir.path().join("secret"), "outside").unwrap();
        assert_eq!(read_file(&skill, "docs/a.md", 100).unwrap().text, "inside");
        for bad in ["../secret", "/etc/passwd", "docs/../../secret", ""] {
            assert!(read_file(&skill, bad, 100).is_err(), "{bad}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret"), skill.join("link")).unwrap();
            let e = read_file(&skill, "link", 100).unwrap_err();
            assert!(e.contains("outside"), "{e}");
        }
        assert_eq!(listing(&skill), ["docs/a.md"]);
    }
}

//! Agent profiles: what a subagent (a `task` call's child session) is. A profile is a
//! Markdown file `NAME.md` in `<project>/.zeroclaw/agents/` or `<config dir>/agents/`, in
//! that order (a name found twice is the first one's), whose YAML front matter says
//! `name` (optional: the file's stem), `description` (required: what the parent model is
//! told it is for), `tools` (optional: the tools it may use, a comma-separated string, a
//! `[a, b]` flow list or a block list; absent: every tool of its parent but `task`) and
//! `model` (optional: a model of the configured provider, or `inherit`), and whose body is
//! the child's system prompt. The built-in `explore` profile (read-only tools) comes last,
//! unless a file took its name.

use super::Project;
use super::files::Files;
use super::front_matter;
use std::path::PathBuf;
use zeroclaw_protocol::methods::AgentInfo;

/// The most of a profile file read.
const PROFILE_CAP: usize = 64 * 1024;

/// The built-in read-only profile's name.
pub const EXPLORE: &str = "explore";

/// Which tools a subagent may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// Every tool its parent is offered (but `task`).
    All,
    /// Only the read-only ones (`ToolDef::read_only`).
    ReadOnly,
    /// Only these, by name (a name no tool has is ignored).
    Named(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentProfile {
    pub name: String,
    pub description: String,
    pub tools: ToolChoice,
    /// `None`: the parent session's model.
    pub model: Option<String>,
    /// The child's system prompt.
    pub prompt: String,
    /// Its file; `None` for the built-in profile.
    pub path: Option<PathBuf>,
}

impl AgentProfile {
    /// The built-in `explore` profile.
    pub fn explore() -> Self {
        Self {
            name: EXPLORE.into(),
            description: "Investigates the code base and reports what it found, changing \
                          nothing: reads files, lists directories and searches. Use it for \
                          questions that need looking at many files."
                .into(),
            tools: ToolChoice::ReadOnly,
            model: None,
            prompt: "You are a read-only investigator working for another agent. Look at the \
                     files with the tools you have (you cannot change anything), then end \
                     with a concise report of what you found: the answer first, then the \
                     evidence (paths and line numbers). Your final message is all the other \
                     agent will read."
                .into(),
            path: None,
        }
    }

    pub fn info(&self) -> AgentInfo {
        AgentInfo {
            name: self.name.clone(),
            description: self.description.clone(),
            tools: match &self.tools {
                ToolChoice::All => None,
                ToolChoice::ReadOnly => Some(vec!["(read-only tools)".into()]),
                ToolChoice::Named(names) => Some(names.clone()),
            },
            model: self.model.clone(),
            path: self.path.as_ref().map(|p| p.to_string_lossy().into_owned()),
        }
    }
}

fn roots(project: &Project) -> [PathBuf; 2] {
    [
        project.root.join(".zeroclaw").join("agents"),
        project.config_dir.join("agents"),
    ]
}

/// Whether `name` can name a profile: letters, digits, `-` and `_`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_'))
}

/// A `tools` value written as one string: `a, b` or `[a, b]`.
fn tool_names(value: &str) -> Vec<String> {
    let value = value.trim();
    let value = value
        .strip_prefix('[')
        .and_then(|v| v.strip_suffix(']'))
        .unwrap_or(value);
    value
        .split(',')
        .map(|t| t.trim().trim_matches(['"', '\'']).trim())
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Every profile found (blocking), then the built-in one; what was skipped is told in
/// `warnings`.
pub fn load(project: &Project, files: &Files, warnings: &mut Vec<String>) -> Vec<AgentProfile> {
    let mut out: Vec<AgentProfile> = Vec::new();
    for root in roots(project) {
        for path in super::sorted_entries_all(&root) {
            if path.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
                continue;
            };
            let Some(file) = files.read(&path, PROFILE_CAP) else {
                continue;
            };
            let skip = |why: String| format!("agent {} skipped: {why}", path.display());
            let parsed = match front_matter::parse(&file.text) {
                Ok(parsed) => parsed,
                Err(why) => {
                    warnings.push(skip(why));
                    continue;
                }
            };
            let name = parsed.get("name").unwrap_or(&stem).trim().to_owned();
            if !valid_name(&name) {
                warnings.push(skip(format!(
                    "{name:?} is not an agent name (1 to 64 letters, digits, `-`, `_`)"
                )));
                continue;
            }
            if out.iter().any(|a| a.name == name) {
                warnings.push(skip(format!(
                    "the name {name:?} is taken by an agent found before it"
                )));
                continue;
            }
            let Some(description) = parsed.get("description") else {
                warnings.push(skip("its front matter has no `description`".into()));
                continue;
            };
            let tools = match (parsed.get("tools"), parsed.list("tools")) {
                (Some(value), _) => ToolChoice::Named(tool_names(value)),
                (None, Some(items)) if !items.is_empty() => ToolChoice::Named(
                    items
                        .iter()
                        .map(|t| t.trim().to_owned())
                        .filter(|t| !t.is_empty())
                        .collect(),
                ),
                _ => ToolChoice::All,
            };
            let model = parsed
                .get("model")
                .map(str::trim)
                .filter(|m| *m != "inherit")
                .map(str::to_owned);
            out.push(AgentProfile {
                name,
                description: description.trim().to_owned(),
                tools,
                model,
                prompt: parsed.body.trim().to_owned(),
                path: Some(path.clone()),
            });
        }
    }
    if !out.iter().any(|a| a.name == EXPLORE) {
        out.push(AgentProfile::explore());
    }
    out
}

/// A subagent's system prompt: its profile's body (or the general one), then where it
/// works.
pub fn system_prompt(profile: Option<&AgentProfile>, cwd: &str) -> String {
    let own = profile
        .map(|p| p.prompt.trim())
        .filter(|p| !p.is_empty())
        .unwrap_or(
            "You are a subagent of zeroclaw: another agent handed you the task in the user's \
             message. Do it with the tools you have, then end with a concise final answer: \
             it is all the other agent will read.",
        );
    format!(
        "{own}\n\nYou work on the user's machine in the directory {cwd}; paths are relative \
         to it. Changes and commands may need the user's approval."
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn project(dir: &std::path::Path) -> Project {
        Project {
            config_dir: dir.join("config"),
            root: dir.join("repo"),
            cwd: dir.join("repo"),
        }
    }

    fn write(path: PathBuf, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn profiles_are_read_project_first_with_every_tools_form_and_explore_last() {
        let dir = tempfile::tempdir().unwrap();
        let p = project(dir.path());
        let agents = p.root.join(".zeroclaw/agents");
        write(
            agents.join("reviewer.md"),
            "---\ndescription: Reviews diffs\ntools: read_file, grep\nmodel: inherit\n---\nYou review.\n",
        );
        write(
            agents.join("tester.md"),
            "---\nname: runner\ndescription: Runs tests\ntools:\n  - bash\n  - read_file\nmodel: small\n---\nRun them.",
        );
        write(
            agents.join("flow.md"),
            "---\ndescription: Flow\ntools: [list_dir, \"grep\"]\n---\nBody",
        );
        write(agents.join("nodesc.md"), "---\ntools: bash\n---\nBody");
        write(
            p.config_dir.join("agents/reviewer.md"),
            "---\ndescription: The user's reviewer\n---\nOther.",
        );
        write(
            p.config_dir.join("agents/all.md"),
            "---\ndescription: Everything\n---\nAll tools.",
        );
        let mut warnings = Vec::new();
        let found = load(&p, &Files::default(), &mut warnings);
        let names: Vec<&str> = found.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["flow", "reviewer", "runner", "all", "explore"]);
        let get = |n: &str| found.iter().find(|a| a.name == n).unwrap();
        assert_eq!(
            get("reviewer").tools,
            ToolChoice::Named(vec!["read_file".into(), "grep".into()])
        );
        assert_eq!(get("reviewer").model, None);
        assert_eq!(get("reviewer").prompt, "You review.");
        assert_eq!(
            get("runner").tools,
            ToolChoice::Named(vec!["bash".into(), "read_file".into()])
        );
        assert_eq!(get("runner").model.as_deref(), Some("small"));
        assert_eq!(
            get("flow").tools,
            ToolChoice::Named(vec!["list_dir".into(), "grep".into()])
        );
        assert_eq!(get("all").tools, ToolChoice::All);
        assert_eq!(get("explore").tools, ToolChoice::ReadOnly);
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("nodesc.md") && w.contains("description")),
            "{warnings:?}"
        );
        assert!(
            warnings
                .iter()
                // `\` on Windows.
                .any(
                    |w| w.replace('\\', "/").contains("config/agents/reviewer.md")
                        && w.contains("taken")
                ),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_file_named_explore_replaces_the_built_in_profile() {
        let dir = tempfile::tempdir().unwrap();
        let p = project(dir.path());
        write(
            p.root.join(".zeroclaw/agents/explore.md"),
            "---\ndescription: Mine\n---\nMine.",
        );
        let found = load(&p, &Files::default(), &mut Vec::new());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].description, "Mine");
        assert_eq!(found[0].tools, ToolChoice::All);
    }
}

//! What the agent knows of a session's project (docs/project.md), read from disk at each
//! turn's start: the instruction files (`instructions.rs`), the skills (`skills.rs`) and
//! the custom commands (`commands.rs`), the latter two with YAML front matter
//! (`front_matter.rs`); the hooks (`hooks.rs`: the user's and, if the project is trusted
//! (`trust.rs`), the project's); every file through one cache that reads a file again only
//! when it changed (`files.rs`). The project root is found once per load ([`Project::find`]).
//!
//! Finding and reading here is blocking: callers on the async reactor go through
//! [`load_async`].

pub mod agents;
mod commands;
mod files;
pub mod front_matter;
pub mod hooks;
mod instructions;
mod skills;
pub mod trust;

pub use agents::{AgentProfile, ToolChoice};
pub use commands::{Command, expand, split};
pub use files::{Files, Text};
pub use instructions::{FILE_CAP, Instruction, TOTAL_CAP};
pub use skills::{Skill, listing as skill_listing, read_file as read_skill_file};

use std::path::{Path, PathBuf};
use std::sync::Arc;
use zeroclaw_protocol::methods::{
    CommandInfo, HookInfo, InstructionFile, ProjectContext, SkillInfo,
};

/// Where a session's project files are looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The config dir (`~/.zeroclaw`): the user's own `AGENTS.md`, skills and commands.
    pub config_dir: PathBuf,
    /// The nearest directory at or above `cwd` holding `.git` (a directory, or a file in a
    /// worktree), else `cwd`.
    pub root: PathBuf,
    /// The session's working directory.
    pub cwd: PathBuf,
}

impl Project {
    pub fn find(config_dir: &Path, cwd: &Path) -> Self {
        let root = cwd
            .ancestors()
            .find(|d| d.join(".git").exists())
            .unwrap_or(cwd);
        Self {
            config_dir: config_dir.to_path_buf(),
            root: root.to_path_buf(),
            cwd: cwd.to_path_buf(),
        }
    }
}

/// What was read for one turn.
#[derive(Debug)]
pub struct Loaded {
    pub project: Project,
    pub instructions: Vec<Instruction>,
    pub skills: Vec<Skill>,
    pub commands: Vec<Command>,
    /// The agent profiles the `task` tool runs (`agents.rs`), the built-in one last.
    pub agents: Vec<AgentProfile>,
    /// The hooks that run: the user's, and the project's if it is trusted.
    pub hooks: hooks::HookSet,
    /// Every hook configured, those that do not run marked `skipped`.
    pub hook_infos: Vec<HookInfo>,
    /// The user trusts the project (`trust.rs`).
    pub trusted: bool,
    pub warnings: Vec<String>,
}

/// The user's side of what a session loads: the config dir (its `AGENTS.md`, skills and
/// commands), the data dir (the trusted projects) and config.toml's `[hooks]`.
#[derive(Debug, Clone)]
pub struct UserSide {
    pub config_dir: PathBuf,
    pub data_dir: PathBuf,
    pub hooks: hooks::HooksConfig,
}

/// Reads the project's files (blocking).
pub fn load(project: Project, files: &Files, user: &UserSide) -> Loaded {
    let mut warnings = Vec::new();
    let instructions = instructions::load(&project, files, &mut warnings);
    let skills = skills::load(&project, files, &mut warnings);
    let commands = commands::load(&project, files, &mut warnings);
    let agents = agents::load(&project, files, &mut warnings);
    let trusted = trust::is_trusted(&user.data_dir, &project.root).unwrap_or_else(|why| {
        warnings.push(format!("no project is trusted: {why}"));
        false
    });
    let (hooks, hook_infos) = hooks::load(&project, files, &user.hooks, trusted, &mut warnings);
    Loaded {
        project,
        instructions,
        skills,
        commands,
        agents,
        hooks,
        hook_infos,
        trusted,
        warnings,
    }
}

/// The project of `cwd` found and [`load`]ed on the blocking pool (finding the root stats
/// every directory up to it). Never fails: reading the project must not fail a turn, so a
/// reading task that panicked loads nothing (no hooks either) and says so in the warnings.
pub async fn load_async(user: UserSide, cwd: PathBuf, files: Arc<Files>) -> Loaded {
    let fallback = Project {
        config_dir: user.config_dir.clone(),
        root: cwd.clone(),
        cwd: cwd.clone(),
    };
    let read = move || load(Project::find(&user.config_dir, &cwd), &files, &user);
    match tokio::task::spawn_blocking(read).await {
        Ok(loaded) => loaded,
        Err(e) => Loaded {
            project: fallback,
            instructions: Vec::new(),
            skills: Vec::new(),
            commands: Vec::new(),
            agents: vec![AgentProfile::explore()],
            hooks: hooks::HookSet::default(),
            hook_infos: Vec::new(),
            trusted: false,
            warnings: vec![format!("the project's files could not be read: {e}")],
        },
    }
}

impl Loaded {
    /// What the system prompt gets after its own text: the instructions, then the skills.
    pub fn prompt_sections(&self) -> String {
        instructions::section(&self.instructions) + &skills::section(&self.skills)
    }

    pub fn skill(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    pub fn agent(&self, name: &str) -> Option<&AgentProfile> {
        self.agents.iter().find(|a| a.name == name)
    }

    pub fn command(&self, name: &str) -> Option<&Command> {
        self.commands.iter().find(|c| c.name == name)
    }

    pub fn instruction_files(&self) -> Vec<InstructionFile> {
        self.instructions
            .iter()
            .map(|i| InstructionFile {
                path: display(&i.path),
                bytes: i.file.bytes,
                truncated: i.truncated(),
            })
            .collect()
    }

    pub fn command_infos(&self) -> Vec<CommandInfo> {
        self.commands
            .iter()
            .map(|c| CommandInfo {
                name: c.name.clone(),
                description: c.description.clone(),
                argument_hint: c.argument_hint.clone(),
                path: display(&c.path),
            })
            .collect()
    }

    /// `session/context`'s answer.
    pub fn report(&self) -> ProjectContext {
        ProjectContext {
            project_root: display(&self.project.root),
            instructions: self.instruction_files(),
            skills: self
                .skills
                .iter()
                .map(|s| SkillInfo {
                    name: s.name.clone(),
                    description: s.description.clone(),
                    path: display(&s.dir.join("SKILL.md")),
                })
                .collect(),
            commands: self.command_infos(),
            warnings: self.warnings.clone(),
            hooks: self.hook_infos.clone(),
            project_trusted: self.trusted,
            agents: self.agents.iter().map(AgentProfile::info).collect(),
        }
    }
}

fn display(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The entries of `dir` (none if it cannot be read), sorted by name.
fn sorted_entries_all(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = read.filter_map(|e| e.ok().map(|e| e.path())).collect();
    out.sort();
    out
}

/// The subdirectories of `dir`, sorted by name.
fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    sorted_entries_all(dir)
        .into_iter()
        .filter(|p| p.is_dir())
        .collect()
}

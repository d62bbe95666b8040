//! `skill`: a skill's instructions (the body of its `SKILL.md`), or another file of its
//! folder, for the model to follow. The system prompt lists the skills by name and
//! description only (`project/skills.rs`); the turn puts the ones it listed in the
//! [`ToolContext`], so a call names one the prompt showed.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Tool, ToolContext, ToolOutput, blocking};
use crate::config::Policy;
use crate::project;

pub(super) struct SkillTool;

/// Its name, as its messages begin.
const TOOL: &str = SkillTool::NAME;

#[derive(Deserialize, JsonSchema)]
pub(super) struct Args {
    /// The skill's name, as the system prompt lists it.
    name: String,
    /// Another file of the skill, relative to its folder (as its instructions name it);
    /// absent for the instructions themselves.
    file: Option<String>,
}

impl Tool for SkillTool {
    const NAME: &'static str = "skill";
    const DESCRIPTION: &'static str = "Load a skill listed in the system prompt: returns its instructions and the other \
        files of its folder; call it again with `file` to read one of those.";
    const READ_ONLY: bool = true;
    const APPROVAL: Policy = Policy::Allow;
    type Args = Args;

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let Some(skill) = ctx.skills.iter().find(|s| s.name == args.name) else {
            let names: Vec<&str> = ctx.skills.iter().map(|s| s.name.as_str()).collect();
            return ToolOutput::error(if names.is_empty() {
                format!(
                    "{TOOL}: there is no skill {:?}: this session has no skills",
                    args.name
                )
            } else {
                format!(
                    "{TOOL}: there is no skill {:?}; the skills are: {}",
                    args.name,
                    names.join(", ")
                )
            });
        };
        let skill = skill.clone();
        let cap = ctx.limits.read_limit_bytes;
        blocking(TOOL, move || match args.file {
            Some(file) => match project::read_skill_file(&skill.dir, &file, cap) {
                Ok(text) if text.truncated => ToolOutput::ok(format!(
                    "{}\n[... cut: the first {} of {} bytes ...]",
                    text.text,
                    text.text.len(),
                    text.bytes
                )),
                Ok(text) => ToolOutput::ok(text.text.clone()),
                Err(why) => ToolOutput::error(format!("{TOOL}: {why}")),
            },
            None => {
                let mut out = format!(
                    "Skill {} (folder {}):\n\n{}",
                    skill.name,
                    skill.dir.display(),
                    skill.body().trim_end()
                );
                let files = project::skill_listing(&skill.dir);
                if !files.is_empty() {
                    out.push_str(
                        "\n\nIts other files (read one with this tool's `file`, or run a \
                         script by its path in the folder above):",
                    );
                    for f in files {
                        out.push_str(&format!("\n- {f}"));
                    }
                }
                ToolOutput::ok(out)
            }
        })
        .await
    }
}

//! The tools the model can call.
//!
//! A tool is one type implementing [`Tool`], in one file of this folder: its name,
//! description, read-only flag and default approval policy as constants, its arguments as a
//! serde type whose JSON Schema (what the model sees) is derived from it (`schema.rs`), and
//! its run. [`builtin!`] lists the built-in ones once; a [`Tools`] registry is built from it
//! once per daemon, and tools known only at run time (MCP servers) are registered and
//! unregistered as [`DynTool`]s, the erased form every tool takes in the registry.
//!
//! Every failure a model can cause (bad arguments, missing files, non-zero exits,
//! time-outs) comes back as a [`ToolOutput`] with `is_error = true`, never as a Rust
//! error: the text is meant to be shown to the model so it can correct itself.
//!
//! Adding a built-in tool: a file here with the type implementing [`Tool`], its `mod`
//! line and its line in [`builtin!`]. Its `APPROVAL` is its `[approvals]` default.

mod args;
mod ask_user;
mod bash;
mod client_files;
mod confine;
#[cfg(target_os = "linux")]
mod descendants;
mod edit_file;
mod grep;
mod list_dir;
pub mod orphans;
pub mod preview;
mod read_file;
mod registry;
mod schema;
pub mod scrub;
mod skill;
pub mod spill;
pub mod task;
mod text;
mod write_file;
// Issue 33: the agent's plan and the tools users expect.
mod apply_patch;
mod glob;
mod todo_write;
mod web_fetch;

#[cfg(test)]
mod testing;

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use ask_user::{Answer, AskUser};
pub use client_files::ClientFiles;
pub use registry::{Checked, DynTool, ToolPolicy, ToolSet, Tools, not_started};
pub use scrub::EnvScrub;

/// The `todo_write` tool's name: a successful call of it is the session's new plan.
pub const TODO_WRITE: &str = <todo_write::TodoWrite as Tool>::NAME;
pub use todo_write::plan as todo_plan;

/// The `skill` tool's name: a turn offers it only when the project has skills.
pub const SKILL: &str = <skill::SkillTool as Tool>::NAME;

/// The `bash` tool's name: in a project the user has not trusted, a command of it that
/// names a project skill's folder is refused (`turn/skill_scripts.rs`).
pub const BASH: &str = <bash::Bash as Tool>::NAME;

/// The `ask_user` tool's name: a subagent, which has no client of its own, is not offered it.
pub const ASK_USER: &str = <ask_user::AskUserTool as Tool>::NAME;

/// The `task` tool's name: a turn offers it (`tools/task.rs`) unless its session is a
/// subagent's or `[agents] max_concurrent` is 0.
pub const TASK: &str = <task::TaskTool as Tool>::NAME;

use crate::config::Policy;

/// Lists the built-in tools once, in the order the model is shown them: the registry's
/// tools and their names both come from this list.
macro_rules! builtin {
    ($($tool:path),* $(,)?) => {
        /// The built-in tools' names, in the order the model is shown them.
        pub const BUILTIN_NAMES: &[&str] = &[$(<$tool as Tool>::NAME),*];

        /// The built-in tools, in the order the model is shown them.
        fn builtin() -> Vec<Arc<dyn DynTool>> {
            vec![$(registry::erase($tool)),*]
        }
    };
}

builtin![
    bash::Bash,
    read_file::ReadFile,
    write_file::WriteFile,
    edit_file::EditFile,
    list_dir::ListDir,
    grep::Grep,
    ask_user::AskUserTool,
    skill::SkillTool,
    todo_write::TodoWrite,
    glob::Glob,
    web_fetch::WebFetch,
    apply_patch::ApplyPatch,
];

/// One built-in tool, typed. [`Tools::builtin`] turns it into a [`DynTool`]: the definition
/// is built once there from the constants and [`Tool::Args`]' derived schema (`schema.rs`),
/// and each call's JSON arguments are checked against that schema (`args.rs`: object, known
/// members, required members, JSON types, integer minimums — the messages the model reads)
/// and then decoded into [`Tool::Args`].
pub trait Tool: Send + Sync + 'static {
    /// What the model calls it; also its key in `[approvals]`.
    const NAME: &'static str;
    /// What the model is told it does.
    const DESCRIPTION: &'static str;
    /// True if the tool never changes anything.
    const READ_ONLY: bool;
    /// Its policy when `[approvals]` does not name it.
    const APPROVAL: Policy;

    /// The call's arguments; their doc comments are the members' descriptions the model
    /// reads. Optional members must be `Option`s: `null` counts as absent.
    type Args: DeserializeOwned + schemars::JsonSchema + Send;

    /// What the schema cannot say about valid arguments (a command that is not blank…):
    /// the problem, for "invalid arguments for <tool>: …". Runs before the approval, so a
    /// call that cannot run is answered with its error instead of being asked about.
    fn check(&self, _args: &Self::Args) -> Result<(), String> {
        Ok(())
    }

    /// The path the call reads or writes, as the model wrote it (relative to the working
    /// directory unless absolute); `None` if it names none. The turn resolves it for the
    /// approval request and guards the daemon's own files with it (`turn/target.rs`).
    fn path<'a>(&self, _args: &'a Self::Args) -> Option<&'a str> {
        None
    }

    /// The justification of a call that asks to run outside the session's sandbox
    /// (`bash`'s `sandbox: "escape"`); `None` for a call that stays inside. Such a call is
    /// always asked about, whatever the policy (`turn/permission.rs`).
    fn escape<'a>(&self, _args: &'a Self::Args) -> Option<&'a str> {
        None
    }

    /// Runs one call whose arguments passed the schema check.
    fn run(&self, args: Self::Args, ctx: &ToolContext) -> impl Future<Output = ToolOutput> + Send;

    /// What the call would do, for the person asked to approve it (`approval_request`'s
    /// `preview`); asked only when the call is asked about. `at.path` is [`Tool::path`]
    /// resolved. File reading must stay off the async reactor ([`preview::blocking`]).
    /// `None`: nothing to show beyond the arguments.
    fn preview(
        &self,
        _args: Self::Args,
        _at: &preview::PreviewAt,
    ) -> impl Future<Output = Option<zeroclaw_protocol::events::ApprovalPreview>> + Send {
        async { None }
    }
}

/// One tool as presented to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// A JSON Schema object (`"type": "object"`) for the call's arguments.
    pub input_schema: Value,
    /// True if the tool never changes anything (safe to run without confirmation).
    pub read_only: bool,
}

/// The result of one tool call, as shown to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub text: String,
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
        }
    }

    /// A failed result; `text` explains what went wrong.
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
        }
    }
}

/// Size and time limits for tool calls.
#[derive(Debug, Clone)]
pub struct ToolLimits {
    /// Maximum captured bash output (stdout + stderr), head and tail kept; also the most
    /// grep returns. Default 32 KiB.
    pub output_limit_bytes: usize,
    /// bash time limit when the call gives none. Default 120 s.
    pub bash_default_timeout: Duration,
    /// Upper bound for a requested bash time limit. Default 600 s.
    pub bash_max_timeout: Duration,
    /// Maximum bytes of a file returned by read_file. Default 256 KiB.
    pub read_limit_bytes: usize,
    /// Maximum entries returned by list_dir. Default 1000.
    pub list_limit: usize,
}

impl Default for ToolLimits {
    fn default() -> Self {
        Self {
            output_limit_bytes: 32 * 1024,
            bash_default_timeout: Duration::from_secs(120),
            bash_max_timeout: Duration::from_secs(600),
            read_limit_bytes: 256 * 1024,
            list_limit: 1000,
        }
    }
}

/// What a tool call runs against.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Working directory: bash runs here and relative paths are resolved against it.
    pub cwd: PathBuf,
    /// Cancelling it stops a running call (a bash process group is killed, a grep
    /// stops, a question stops waiting).
    pub cancel: CancellationToken,
    pub limits: ToolLimits,
    /// Where running bash process groups are recorded (`orphans.rs`); `None` records none.
    pub process_records: Option<PathBuf>,
    /// How `ask_user` reaches the person; `None`: the client that sent the prompt cannot
    /// show questions.
    pub ask_user: Option<Arc<dyn AskUser>>,
    /// The daemon's variables a started process does not inherit (the provider's key).
    pub scrub: EnvScrub,
    /// Where bash saves an output too long for its result (`spill.rs`); `None` saves none.
    pub spill: Option<spill::SpillTo>,
    /// The client that prompted does file reads and writes for the file tools (an editor's
    /// buffers, `fs/*`); `None`: they use the disk.
    pub client_files: Option<Arc<dyn ClientFiles>>,
    /// What the session's commands run under (`bash` prepares it per command).
    pub sandbox: crate::sandbox::ToolSandbox,
    /// The skills the turn's system prompt lists, which `skill` reads.
    pub skills: Vec<crate::project::Skill>,
}

/// `args` checked against `def`'s schema (as a built-in tool's are), for a tool known only
/// at run time that passes them on as JSON; otherwise the error result for the model.
pub fn check_args(def: &ToolDef, args: &Value) -> Result<Value, ToolOutput> {
    args::decode::<Value>(def, args)
}

/// `path` relative to `cwd` unless it is absolute.
pub fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// Runs `work` on the call's `path` argument (resolved against the working directory;
/// [`Tool::path`] has made sure it is not empty) on the blocking pool, off the async
/// reactor, once the session's sandbox allows `access` to it (`confine.rs`).
async fn on_path<F>(
    tool: &'static str,
    path: &str,
    ctx: &ToolContext,
    access: confine::Access,
    work: F,
) -> ToolOutput
where
    F: FnOnce(&Path) -> ToolOutput + Send + 'static,
{
    let path = match confine::checked(tool, path, ctx, access).await {
        Ok(path) => path,
        Err(refused) => return refused,
    };
    blocking(tool, move || work(&path)).await
}

/// Runs blocking work on the blocking pool, off the async reactor.
async fn blocking<F>(tool: &'static str, f: F) -> ToolOutput
where
    F: FnOnce() -> ToolOutput + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(out) => out,
        Err(e) => ToolOutput::error(format!("{tool}: internal error: {e}")),
    }
}

/// An I/O failure as the model reads it: the tool, what it tried, the path and why.
fn io_error(tool: &str, path: &Path, what: &str, e: &io::Error) -> ToolOutput {
    let reason = match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    };
    ToolOutput::error(format!("{tool}: {what} {}: {reason}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn limits_default() {
        let l = ToolLimits::default();
        assert_eq!(l.output_limit_bytes, 32 * 1024);
        assert_eq!(l.bash_default_timeout, Duration::from_secs(120));
        assert_eq!(l.bash_max_timeout, Duration::from_secs(600));
        assert_eq!(l.read_limit_bytes, 256 * 1024);
        assert_eq!(l.list_limit, 1000);
    }

    #[test]
    fn definitions_are_complete_and_ordered() {
        let set = Tools::builtin().snapshot();
        let defs = set.definitions();
        let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "bash",
                "read_file",
                "write_file",
                "edit_file",
                "list_dir",
                "grep",
                "ask_user",
                "skill",
                "todo_write",
                "glob",
                "web_fetch",
                "apply_patch"
            ]
        );
        for d in defs {
            let s = &d.input_schema;
            assert_eq!(s["type"], "object", "{}", d.name);
            assert_eq!(s["additionalProperties"], false, "{}", d.name);
            let props = s["properties"].as_object().map(|p| p.len()).unwrap_or(0);
            assert!(props > 0, "{}", d.name);
            for r in s["required"].as_array().into_iter().flatten() {
                let r = r.as_str().unwrap_or("");
                assert!(s["properties"].get(r).is_some(), "{}: {r}", d.name);
            }
            assert!(!d.description.is_empty());
        }
        let def = |n: &str| set.get(n).map(|t| t.definition().input_schema.clone());
        let req = |n: &str| def(n).map(|s| s["required"].clone());
        assert_eq!(req("bash"), Some(json!(["command"])));
        assert_eq!(req("read_file"), Some(json!(["path"])));
        assert_eq!(req("write_file"), Some(json!(["path", "content"])));
        assert_eq!(
            req("edit_file"),
            Some(json!(["path", "old_text", "new_text"]))
        );
        assert_eq!(req("list_dir"), Some(json!(["path"])));
        assert_eq!(req("grep"), Some(json!(["pattern"])));
        assert_eq!(req("ask_user"), Some(json!(["question"])));
        assert_eq!(req("skill"), Some(json!(["name"])));
        assert_eq!(req("todo_write"), Some(json!(["todos"])));
        assert_eq!(req("glob"), Some(json!(["pattern"])));
        assert_eq!(req("web_fetch"), Some(json!(["url"])));
        assert_eq!(req("apply_patch"), Some(json!(["patch"])));
        assert_eq!(
            def("todo_write").map(|s| s["properties"]["todos"]["items"]["required"].clone()),
            Some(json!(["content", "status"]))
        );
        assert_eq!(
            def("ask_user").map(|s| s["properties"]["choices"]["items"]["type"].clone()),
            Some(json!("string"))
        );
        assert_eq!(
            def("bash").map(|s| s["properties"]["timeout_secs"]["type"].clone()),
            Some(json!("integer"))
        );
        let ro: Vec<bool> = defs.iter().map(|d| d.read_only).collect();
        assert_eq!(
            ro,
            [
                false, true, false, false, true, true, true, true, true, true, true, false
            ]
        );
        assert_eq!(names, BUILTIN_NAMES);
        // What `[approvals]` falls back to: asking before a change, not before a look.
        let defaults: Vec<ToolPolicy> = names
            .iter()
            .filter_map(|n| set.get(n).map(|t| t.policy()))
            .collect();
        let (ask, allow) = (
            ToolPolicy::Configurable(Policy::Ask),
            ToolPolicy::Configurable(Policy::Allow),
        );
        assert_eq!(
            defaults,
            [
                ask, allow, ask, ask, allow, allow, allow, allow, allow, allow, ask, ask
            ]
        );
        assert!(set.get("nope").is_none());
    }

    /// What the model is shown of every built-in tool, byte for byte as sent (key order
    /// included: serde_json keeps it): `definitions.json` holds the definitions as they were
    /// hand-written before they were derived from the tools' types, so a change of wording,
    /// type, bound or order shows here.
    #[test]
    fn builtin_definitions_are_what_the_model_has_always_been_shown() {
        let set = Tools::builtin().snapshot();
        let defs: Vec<Value> = set
            .definitions()
            .iter()
            .map(|d| {
                json!({
                    "name": d.name,
                    "description": d.description,
                    "read_only": d.read_only,
                    "input_schema": d.input_schema,
                })
            })
            .collect();
        let text = serde_json::to_string_pretty(&defs).unwrap() + "\n";
        assert_eq!(text, include_str!("definitions.json"));
    }
}

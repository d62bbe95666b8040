//! The registry: which tools a daemon offers, changeable while turns read it.
//!
//! [`Tools`] holds the current [`ToolSet`] behind `RwLock<Arc<ToolSet>>`, copy on write:
//! a reader takes the read lock only to clone the `Arc` (never across an `.await`), a
//! writer builds a new set from the current one and swaps it in under the write lock, so
//! two writers (two MCP servers changing their lists) cannot lose each other's change. A
//! turn takes one snapshot per model call: the tools it offers in that call are the ones
//! its calls then run against, whatever is registered meanwhile. The set changes rarely
//! and is read once per model call, so an `arc-swap` dependency would buy nothing.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, PoisonError, RwLock};

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::preview::PreviewAt;
use super::{Tool, ToolContext, ToolDef, ToolOutput, args};
use crate::config::Policy;
use zeroclaw_protocol::events::ApprovalPreview;

/// A registered tool, type-erased so tools of every kind live in one list: a built-in
/// [`Tool`] (erased by [`Tools::builtin`]) or a tool known only at run time, whose
/// definition is data (an MCP server's, `mcp/server.rs`).
pub trait DynTool: Send + Sync {
    /// What the model is shown, built once at registration.
    fn definition(&self) -> &ToolDef;

    /// Checks one call's arguments without running it: against the schema, then the
    /// tool's own [`Tool::check`]; the error result the model reads if they are invalid.
    fn check(&self, args: &Value) -> Result<Checked, ToolOutput>;

    /// Runs one call: refused if the call is already cancelled, then the arguments are
    /// checked and decoded, then the tool runs. Never fails; errors are results.
    fn run<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput>;

    /// Who decides whether a call may run without asking.
    fn policy(&self) -> ToolPolicy;

    /// [`Tool::preview`] of a call whose arguments are valid (`None` if they are not).
    fn preview<'a>(
        &'a self,
        args: &'a Value,
        at: &'a PreviewAt,
    ) -> BoxFuture<'a, Option<ApprovalPreview>>;
}

/// Where a tool's approval policy comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolPolicy {
    /// `[approvals]` names it, or else this default (a built-in tool's [`Tool::APPROVAL`]).
    Configurable(Policy),
    /// Its own, which `[approvals]` does not change (an MCP server's `approve`).
    Own(Policy),
}

/// What is known of a call whose arguments are valid, before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// [`Tool::path`]: the path it acts on, as written (never empty).
    pub path: Option<String>,
    /// [`Tool::escape`]: the call asks to run outside the sandbox, for this reason.
    pub escape: Option<String>,
}

impl<T: Tool> Registered<T> {
    fn decode(&self, args: &Value) -> Result<T::Args, ToolOutput> {
        let name = &self.definition.name;
        let args = args::decode::<T::Args>(&self.definition, args)?;
        let invalid = |msg: &str| ToolOutput::error(format!("invalid arguments for {name}: {msg}"));
        if self.tool.path(&args) == Some("") {
            return Err(invalid("`path` must not be empty"));
        }
        self.tool.check(&args).map_err(|msg| invalid(&msg))?;
        Ok(args)
    }
}

/// A [`Tool`] with its definition, built once.
struct Registered<T> {
    definition: ToolDef,
    tool: T,
}

impl<T: Tool> DynTool for Registered<T> {
    fn definition(&self) -> &ToolDef {
        &self.definition
    }

    fn check(&self, args: &Value) -> Result<Checked, ToolOutput> {
        let args = self.decode(args)?;
        Ok(Checked {
            path: self.tool.path(&args).map(str::to_owned),
            escape: self.tool.escape(&args).map(str::to_owned),
        })
    }

    fn policy(&self) -> ToolPolicy {
        ToolPolicy::Configurable(T::APPROVAL)
    }

    fn preview<'a>(
        &'a self,
        args: &'a Value,
        at: &'a PreviewAt,
    ) -> BoxFuture<'a, Option<ApprovalPreview>> {
        Box::pin(async move {
            match self.decode(args) {
                Ok(args) => self.tool.preview(args, at).await,
                Err(_) => None,
            }
        })
    }

    fn run<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            if let Some(out) = not_started(&self.definition.name, ctx) {
                return out;
            }
            match self.decode(args) {
                Ok(args) => self.tool.run(args, ctx).await,
                Err(out) => out,
            }
        })
    }
}

/// The refusal of a call whose turn was cancelled before it started.
pub fn not_started(name: &str, ctx: &ToolContext) -> Option<ToolOutput> {
    ctx.cancel
        .is_cancelled()
        .then(|| ToolOutput::error(format!("{name}: cancelled before it started")))
}

/// `tool` in the registry's form, its definition built from its type.
pub(super) fn erase<T: Tool>(tool: T) -> Arc<dyn DynTool> {
    Arc::new(Registered {
        definition: super::schema::definition::<T>(),
        tool,
    })
}

/// [`erase`] with another description than the tool's own (one built per turn: `task`'s).
pub(super) fn erase_described<T: Tool>(tool: T, description: String) -> Arc<dyn DynTool> {
    let mut definition = super::schema::definition::<T>();
    definition.description = description;
    Arc::new(Registered { definition, tool })
}

/// One immutable list of tools: their definitions in offering order, and lookup by name.
pub struct ToolSet {
    tools: Vec<Arc<dyn DynTool>>,
    /// The tools' definitions, in the same order, ready to send with every model call.
    definitions: Vec<ToolDef>,
    by_name: HashMap<String, usize>,
}

impl ToolSet {
    fn new(tools: Vec<Arc<dyn DynTool>>) -> Self {
        let definitions: Vec<ToolDef> = tools.iter().map(|t| t.definition().clone()).collect();
        let by_name = definitions
            .iter()
            .enumerate()
            .map(|(i, d)| (d.name.clone(), i))
            .collect();
        Self {
            tools,
            definitions,
            by_name,
        }
    }

    /// What the model is offered, in order.
    pub fn definitions(&self) -> &[ToolDef] {
        &self.definitions
    }

    /// The tool called `name`, if there is one.
    pub fn get(&self, name: &str) -> Option<&dyn DynTool> {
        self.by_name.get(name).map(|&i| &*self.tools[i])
    }

    /// The tools' names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.definitions.iter().map(|d| d.name.as_str()).collect()
    }

    /// These tools, then those of `more` whose names are not taken (a session's own MCP
    /// servers after the daemon's).
    pub fn merged(&self, more: &ToolSet) -> ToolSet {
        let mut tools = self.tools.clone();
        tools.extend(
            more.tools
                .iter()
                .filter(|t| !self.by_name.contains_key(&t.definition().name))
                .cloned(),
        );
        ToolSet::new(tools)
    }

    /// These tools, then `tool` (a turn's `task`). A tool of the same name (an MCP server's) gives way.
    pub fn with(&self, tool: Arc<dyn DynTool>) -> ToolSet {
        let mut tools = self.tools.clone();
        tools.retain(|t| t.definition().name != tool.definition().name);
        tools.push(tool);
        ToolSet::new(tools)
    }

    /// Only the tools `keep` accepts (a subagent's profile).
    pub fn only(&self, keep: impl Fn(&ToolDef) -> bool) -> ToolSet {
        let tools = self
            .tools
            .iter()
            .filter(|t| keep(t.definition()))
            .cloned()
            .collect();
        ToolSet::new(tools)
    }

    /// These tools but the one called `name` (`skill` in a session that has no skills).
    pub fn without(&self, name: &str) -> ToolSet {
        let tools = self
            .tools
            .iter()
            .filter(|t| t.definition().name != name)
            .cloned()
            .collect();
        ToolSet::new(tools)
    }
}

impl fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// [`Tools::register`] refused a tool: its name is taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a tool named `{0}` is already registered")]
pub struct NameTaken(pub String);

/// The tools of one daemon: built once at start, read by every turn, changed at run time.
#[derive(Debug)]
pub struct Tools {
    current: RwLock<Arc<ToolSet>>,
}

impl Tools {
    /// No tools (a session's own MCP servers add theirs).
    pub fn empty() -> Self {
        Self {
            current: RwLock::new(Arc::new(ToolSet::new(Vec::new()))),
        }
    }

    /// The built-in tools.
    pub fn builtin() -> Self {
        Self {
            current: RwLock::new(Arc::new(ToolSet::new(super::builtin()))),
        }
    }

    /// The tools as they are now; later changes do not affect it.
    pub fn snapshot(&self) -> Arc<ToolSet> {
        // A poisoned lock still holds a whole `Arc`: writers only ever swap one in.
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Adds `tool` after the others. A name already taken is refused, so a tool from
    /// elsewhere cannot replace a built-in one.
    #[cfg_attr(not(test), allow(dead_code))] // MCP servers use `replace`
    pub fn register(&self, tool: Arc<dyn DynTool>) -> Result<(), NameTaken> {
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        let name = &tool.definition().name;
        if current.by_name.contains_key(name) {
            return Err(NameTaken(name.clone()));
        }
        let mut tools = current.tools.clone();
        tools.push(tool);
        *current = Arc::new(ToolSet::new(tools));
        Ok(())
    }

    /// Removes the tools called `remove` and adds `add` after the others, as one change: a
    /// snapshot has either all the old ones or all the new ones (an MCP server's refreshed
    /// list). A name already taken by another tool is refused; the refusals are returned.
    pub fn replace(&self, remove: &[String], add: Vec<Arc<dyn DynTool>>) -> Vec<NameTaken> {
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        let mut tools: Vec<Arc<dyn DynTool>> = current
            .tools
            .iter()
            .filter(|t| !remove.contains(&t.definition().name))
            .cloned()
            .collect();
        let mut refused = Vec::new();
        for tool in add {
            let name = &tool.definition().name;
            if tools.iter().any(|t| &t.definition().name == name) {
                refused.push(NameTaken(name.clone()));
            } else {
                tools.push(tool);
            }
        }
        *current = Arc::new(ToolSet::new(tools));
        refused
    }

    /// Removes the tool called `name`; false if there was none. A call already running
    /// finishes (its snapshot keeps the tool alive).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn unregister(&self, name: &str) -> bool {
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        let Some(&index) = current.by_name.get(name) else {
            return false;
        };
        let mut tools = current.tools.clone();
        tools.remove(index);
        *current = Arc::new(ToolSet::new(tools));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::ctx;
    use super::*;
    use serde_json::json;

    /// A tool whose name is chosen at run time, as an MCP server's would be.
    struct Echo(ToolDef);

    fn echo(name: String) -> Arc<dyn DynTool> {
        Arc::new(Echo(ToolDef {
            name,
            description: "Echoes its text.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "times": {"type": "integer", "minimum": 1}
                },
                "required": ["text"],
                "additionalProperties": false
            }),
            read_only: true,
        }))
    }

    impl DynTool for Echo {
        fn definition(&self) -> &ToolDef {
            &self.0
        }

        fn check(&self, args: &Value) -> Result<Checked, ToolOutput> {
            super::super::check_args(&self.0, args)?;
            Ok(Checked {
                path: None,
                escape: None,
            })
        }

        fn policy(&self) -> ToolPolicy {
            ToolPolicy::Own(Policy::Allow)
        }

        fn preview<'a>(
            &'a self,
            _args: &'a Value,
            _at: &'a PreviewAt,
        ) -> BoxFuture<'a, Option<ApprovalPreview>> {
            Box::pin(async { None })
        }

        fn run<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
            Box::pin(async move {
                if let Some(out) = not_started(&self.0.name, ctx) {
                    return out;
                }
                let args = match super::super::check_args(&self.0, args) {
                    Ok(args) => args,
                    Err(out) => return out,
                };
                let times = usize::try_from(args["times"].as_u64().unwrap_or(1)).unwrap_or(1);
                ToolOutput::ok(args["text"].as_str().unwrap_or("").repeat(times))
            })
        }
    }

    fn names(set: &ToolSet) -> Vec<String> {
        set.names().into_iter().map(str::to_owned).collect()
    }

    #[tokio::test]
    async fn a_tool_registered_at_run_time_is_offered_and_runs_with_checked_arguments() {
        let tools = Tools::builtin();
        let before = tools.snapshot();
        tools.register(echo("echo".into())).unwrap();
        let after = tools.snapshot();
        assert_eq!(names(&after).last().map(String::as_str), Some("echo"));
        assert_eq!(after.definitions().len(), before.definitions().len() + 1);
        // The snapshot taken before is unchanged.
        assert!(before.get("echo").is_none());

        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let echo = after.get("echo").unwrap();
        let out = echo.run(&json!({"text": "ab", "times": 2}), &c).await;
        assert_eq!(out, ToolOutput::ok("abab"));
        let out = echo.run(&json!({"text": "ab", "times": 0}), &c).await;
        assert_eq!(
            out,
            ToolOutput::error("invalid arguments for echo: `times` must be at least 1")
        );
    }

    #[test]
    fn a_taken_name_is_refused_and_unregistering_removes_only_that_tool() {
        let tools = Tools::builtin();
        assert_eq!(
            tools.register(echo("bash".into())),
            Err(NameTaken("bash".into()))
        );
        tools.register(echo("one".into())).unwrap();
        tools.register(echo("two".into())).unwrap();
        let held = tools.snapshot();
        assert!(tools.unregister("one"));
        assert!(!tools.unregister("one"));
        let now = tools.snapshot();
        assert!(now.get("one").is_none());
        assert_eq!(
            now.get("two").map(|t| t.definition().name.as_str()),
            Some("two")
        );
        assert_eq!(names(&now)[..2], ["bash", "read_file"]);
        // A snapshot held across the change still has (and can run) the removed tool.
        assert!(held.get("one").is_some());
    }

    #[test]
    fn writers_racing_each_other_lose_no_change() {
        let tools = Tools::builtin();
        let start = std::sync::Barrier::new(2);
        let names: [Vec<String>; 2] = [
            (0..50).map(|i| format!("a{i}")).collect(),
            (0..50).map(|i| format!("b{i}")).collect(),
        ];
        std::thread::scope(|s| {
            for batch in &names {
                let (tools, start) = (&tools, &start);
                s.spawn(move || {
                    start.wait();
                    for name in batch {
                        tools.register(echo(name.clone())).unwrap();
                        // A reader in between always sees a whole set.
                        let set = tools.snapshot();
                        assert_eq!(set.definitions().len(), set.names().len());
                    }
                });
            }
        });
        let set = tools.snapshot();
        for name in names.iter().flatten() {
            assert!(set.get(name).is_some(), "{name} was lost");
        }
    }

    #[tokio::test]
    async fn a_call_already_cancelled_does_not_start() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        c.cancel.cancel();
        let set = Tools::builtin().snapshot();
        let out = set
            .get("list_dir")
            .unwrap()
            .run(&json!({"path": "."}), &c)
            .await;
        assert_eq!(
            out,
            ToolOutput::error("list_dir: cancelled before it started")
        );
    }

    #[test]
    fn a_group_is_replaced_in_one_change_and_a_sessions_tools_come_after_the_daemons() {
        let tools = Tools::builtin();
        let refused = tools.replace(&[], vec![echo("s__a".into()), echo("bash".into())]);
        assert_eq!(refused, [NameTaken("bash".into())]);
        let before = tools.snapshot();
        let refused = tools.replace(
            &["s__a".into()],
            vec![echo("s__b".into()), echo("s__c".into())],
        );
        assert!(refused.is_empty());
        let after = tools.snapshot();
        assert!(before.get("s__a").is_some() && before.get("s__b").is_none());
        assert!(after.get("s__a").is_none());
        assert_eq!(names(&after)[names(&after).len() - 2..], ["s__b", "s__c"]);

        let own = Tools::empty();
        own.register(echo("own__x".into())).unwrap();
        own.register(echo("bash".into())).unwrap();
        let merged = after.merged(&own.snapshot());
        assert_eq!(names(&merged).last().map(String::as_str), Some("own__x"));
        assert_eq!(merged.names().iter().filter(|n| **n == "bash").count(), 1);
    }
}

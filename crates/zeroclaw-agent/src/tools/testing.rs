//! What the tools' unit tests share: a context, and calls through the built-in registry.

use std::path::Path;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{EnvScrub, ToolContext, ToolLimits, ToolOutput, Tools};

/// A context in `dir` with the default limits, no process records, nobody to ask and no
/// sandbox.
pub(super) fn ctx(dir: &Path) -> ToolContext {
    ToolContext {
        cwd: dir.to_path_buf(),
        cancel: CancellationToken::new(),
        limits: ToolLimits::default(),
        process_records: None,
        ask_user: None,
        client_files: None,
        scrub: EnvScrub::default(),
        spill: None,
        sandbox: crate::sandbox::ToolSandbox::unconfined(dir.to_path_buf()),
        skills: Vec::new(),
    }
}

/// Runs the built-in tool `name` as a turn would: through the registry.
pub(super) async fn run(name: &str, args: &Value, ctx: &ToolContext) -> ToolOutput {
    let tools = Tools::builtin().snapshot();
    match tools.get(name) {
        Some(tool) => tool.run(args, ctx).await,
        None => panic!("no built-in tool {name}"),
    }
}

/// The names in `dir`, sorted.
pub(super) fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

//! The cwd of the sessions whose turns the bench measures.

use std::path::Path;

/// An empty directory of its own in the run's directory `dir`. Each turn snapshots its cwd
/// (checkpoints); the run's directory, which holds every scenario's databases and logs,
/// would make that snapshot the bench's cost.
pub fn workspace(dir: &Path) -> String {
    let dir = dir.join("workspace");
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("zeroclaw-bench: cannot create {}: {e}", dir.display());
    }
    dir.display().to_string()
}

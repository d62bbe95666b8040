//! `zeroclaw trust PATH` / `zeroclaw trust --revoke PATH`: the projects whose hooks may run
//! (docs/project.md). The list is a file in the data dir, which the daemon reads at each
//! turn's start: no daemon is needed, and a running one follows from its next turn.

use std::path::Path;
use zeroclaw_daemon::trust::{self, PROJECT_FILE, Project};
use zeroclaw_ipc::Paths;

pub fn run(paths: &Paths, path: &Path, revoke: bool) -> Result<u8, String> {
    let dir =
        std::fs::canonicalize(path).map_err(|e| format!("cannot use {}: {e}", path.display()))?;
    if !dir.is_dir() {
        return Err(format!("{} is not a directory", path.display()));
    }
    // The project PATH belongs to, as a session there finds it.
    let root = Project::find(&paths.config_dir, &dir).root;
    let (entry, changed) = trust::set(&paths.data_dir, &root, !revoke)?;
    let hooks = root.join(PROJECT_FILE);
    match (revoke, changed) {
        (false, true) => println!(
            "trusted {entry}: its hooks ({}) run from each session's next turn",
            hooks.display()
        ),
        (false, false) => println!("{entry} was already trusted"),
        (true, true) => println!("no longer trusted: {entry}; its hooks do not run any more"),
        (true, false) => println!("{entry} was not trusted"),
    }
    Ok(0)
}

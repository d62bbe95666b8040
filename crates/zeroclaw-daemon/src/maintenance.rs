//! The session database's maintenance, for `zeroclaw store`: check it, back it up, recover
//! it. The work is in the store (`store/repair.rs`); here is the rule about the daemon,
//! through the data dir's lock (one daemon per data dir, whatever its endpoint):
//! - `recover` writes the store: it takes the lock exclusively, so it refuses while a daemon
//!   (or another command) holds it, and no daemon starts meanwhile;
//! - `check` only reads: it takes the lock shared, so it refuses beside a daemon, checks run
//!   side by side, and neither a daemon nor `recover` starts meanwhile;
//! - `backup` only reads too, and is also made for a live store (SQLite's online backup): it
//!   holds the lock shared when it can, and beside a daemon it reads the live store and says
//!   so.
//! - `prune` writes the checkpoint store: it takes the lock exclusively.

use std::path::{Path, PathBuf};
use zeroclaw_agent::checkpoints::{Checkpointer, Pruned};
use zeroclaw_agent::store::{self, repair};
use zeroclaw_ipc::{BindError, DataDirLock, Holder, Paths};

pub use repair::{Recovery, Table};
pub use zeroclaw_agent::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum MaintenanceError {
    #[error(transparent)]
    Daemon(#[from] BindError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "there is no data directory at {}, so no database to work on; if the daemon keeps its data elsewhere, pass the same --config-dir or ZEROCLAW_DATA_DIR",
        .0.display()
    )]
    NoDataDir(PathBuf),
    #[error("{0}")]
    Checkpoints(String),
}

/// The database of the data dir in `paths`.
pub fn database(paths: &Paths) -> PathBuf {
    paths.data_dir.join(store::FILE_NAME)
}

/// The data dir's lock for `command`, shared or exclusive. A missing data dir is said as such
/// (the lock file would be missing too), and never created: there is nothing to work on.
fn lock(
    paths: &Paths,
    command: &'static str,
    shared: bool,
) -> Result<DataDirLock, MaintenanceError> {
    if !paths.data_dir.is_dir() {
        return Err(MaintenanceError::NoDataDir(paths.data_dir.clone()));
    }
    let lock = if shared {
        zeroclaw_ipc::lock_shared(paths, command)
    } else {
        zeroclaw_ipc::lock(paths, command)
    };
    Ok(lock?)
}

/// What is wrong with the database (see `repair::check`); empty when it is healthy.
pub fn check(paths: &Paths) -> Result<Vec<String>, MaintenanceError> {
    let _lock = lock(paths, "zeroclaw store check", true)?;
    Ok(repair::check(&database(paths))?)
}

/// Writes a consistent copy of the database to `to`, which must not exist. Returns the
/// daemon whose live store it read, if one was running.
pub fn backup(paths: &Paths, to: &Path) -> Result<Option<Holder>, MaintenanceError> {
    let (_lock, live) = match lock(paths, "zeroclaw store backup", true) {
        Ok(lock) => (Some(lock), None),
        Err(MaintenanceError::Daemon(BindError::DataDirInUse {
            holder: holder @ Holder::Daemon { .. },
            ..
        })) => (None, Some(holder)),
        Err(e) => return Err(e),
    };
    repair::backup(&database(paths), to)?;
    Ok(live)
}

/// Drops the checkpoint snapshots (`<data dir>/checkpoints`) whose checkpoint or rewind the
/// database no longer holds: it writes the checkpoint store, so it takes the lock
/// exclusively, as `recover` does.
pub fn prune(paths: &Paths) -> Result<Pruned, MaintenanceError> {
    let _lock = lock(paths, "zeroclaw store prune", false)?;
    let (checkpoints, rewinds) = store::checkpoint_ids_in(&database(paths))?;
    let engine = Checkpointer::new(&paths.data_dir, Vec::new(), true);
    engine
        .prune_orphans(&checkpoints, &rewinds)
        .map_err(MaintenanceError::Checkpoints)
}

/// Rebuilds the database from what can be read of it, keeping the old file.
pub fn recover(paths: &Paths) -> Result<Recovery, MaintenanceError> {
    let _lock = lock(paths, "zeroclaw store recover", false)?;
    Ok(repair::recover(&database(paths))?)
}

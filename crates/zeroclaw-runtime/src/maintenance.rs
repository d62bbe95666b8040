//! The session database's maintenance, for `zeroclaw store`: check it, back it up, recover
//! it. The work is in the store (`store/repair.rs`); here is the rule about the daemon:
//! checking and recovering take the daemon's lock, so they refuse while one runs and no
//! daemon starts meanwhile; a backup is SQLite's online backup and runs beside one.

use crate::store::{self, repair};
use std::path::{Path, PathBuf};
use zeroclaw_ipc::{BindError, Paths};

pub use crate::store::StoreError;
pub use repair::{Recovery, Table};

#[derive(Debug, thiserror::Error)]
pub enum MaintenanceError {
    #[error(transparent)]
    Daemon(#[from] BindError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The database of the data dir in `paths`.
pub fn database(paths: &Paths) -> PathBuf {
    paths.data_dir.join(store::FILE_NAME)
}

/// What is wrong with the database (see `repair::check`); empty when it is healthy.
pub fn check(paths: &Paths) -> Result<Vec<String>, MaintenanceError> {
    let _lock = zeroclaw_ipc::lock(paths)?;
    Ok(repair::check(&database(paths))?)
}

/// Writes a consistent copy of the database to `to`, which must not exist.
pub fn backup(paths: &Paths, to: &Path) -> Result<(), MaintenanceError> {
    Ok(repair::backup(&database(paths), to)?)
}

/// Rebuilds the database from what can be read of it, keeping the old file.
pub fn recover(paths: &Paths) -> Result<Recovery, MaintenanceError> {
    let _lock = zeroclaw_ipc::lock(paths)?;
    Ok(repair::recover(&database(paths))?)
}

//! The clean-close marker: `zeroclaw.db-closed`, beside the database, says the file is as
//! the daemon's writer left it when it closed cleanly. It records the file's length, its
//! modification and change times, and its device and inode. Opening trusts a file that
//! still matches all of them, with no WAL beside it, and skips `PRAGMA quick_check`, which
//! reads every page: start-up no longer grows with the store.
//!
//! Anything else gets the full check. The writer's open removes the marker before it can
//! write, so a daemon that crashes or is killed leaves none. A write from outside changes
//! the change time, which no program can set back; a file replaced (a recovery, a copy)
//! has another inode. Damage to a file at rest that changes none of these (the disk's own
//! decay) is met by the first statement that reads the damaged page, which reports it
//! with the same way to recover (`StoreError`'s `Damaged`).
//!
//! Only Unix has a change time to trust; elsewhere no marker is written, and every open
//! runs the full check.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The marker's path: the database's, with `-closed` after it.
pub fn path(db: &Path) -> PathBuf {
    with_suffix(db, "-closed")
}

fn with_suffix(db: &Path, suffix: &str) -> PathBuf {
    let mut name = OsString::from(db.as_os_str());
    name.push(suffix);
    PathBuf::from(name)
}

/// What the marker holds for `db` as it is now: `None` where that cannot be told (no
/// file, or not Unix).
#[cfg(unix)]
fn stamp(db: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(db).ok()?;
    Some(format!(
        "zeroclaw store closed cleanly\nlength {}\nmtime {}.{:09}\nctime {}.{:09}\ndev {}\nino {}\n",
        m.len(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
        m.dev(),
        m.ino()
    ))
}

#[cfg(not(unix))]
fn stamp(_db: &Path) -> Option<String> {
    None
}

/// Whether `db` is as a clean close left it: its marker matches the file, and there is no
/// WAL beside it holding commits (an empty one holds none).
pub fn unchanged(db: &Path) -> bool {
    let wal_empty = match std::fs::metadata(with_suffix(db, "-wal")) {
        Ok(wal) => wal.len() == 0,
        Err(e) => e.kind() == io::ErrorKind::NotFound,
    };
    wal_empty
        && stamp(db).is_some_and(|now| std::fs::read_to_string(path(db)).is_ok_and(|m| m == now))
}

/// Removes the marker, before the file is opened for writing.
pub fn forget(db: &Path) -> io::Result<()> {
    match std::fs::remove_file(path(db)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Writes the marker for `db`, once its last connection has closed: only if no WAL was
/// left (the close checkpointed every commit into the file and removed it). Written
/// aside and renamed, so a marker is never half there. Returns whether it was written.
pub fn record(db: &Path) -> io::Result<bool> {
    if with_suffix(db, "-wal").exists() {
        return Ok(false);
    }
    let Some(stamp) = stamp(db) else {
        return Ok(false);
    };
    let temp = with_suffix(db, &format!("-closed.new-{}", std::process::id()));
    // Private like the database beside it.
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(&temp)?.write_all(stamp.as_bytes())?;
    std::fs::rename(&temp, path(db))?;
    Ok(true)
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_marker_holds_while_the_file_is_untouched_and_not_after_any_change() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("z.db");
        std::fs::write(&db, b"0123456789").unwrap();
        assert!(!unchanged(&db), "no marker yet");
        assert!(record(&db).unwrap());
        assert!(unchanged(&db));

        // An empty WAL holds nothing; one with bytes may hold commits.
        std::fs::write(with_suffix(&db, "-wal"), b"").unwrap();
        assert!(unchanged(&db));
        std::fs::write(with_suffix(&db, "-wal"), b"frame").unwrap();
        assert!(!unchanged(&db));
        assert!(!record(&db).unwrap(), "not recorded beside a WAL");
        std::fs::remove_file(with_suffix(&db, "-wal")).unwrap();
        assert!(unchanged(&db));

        // The same length, and the old modification time put back: the change time tells.
        let modified = std::fs::metadata(&db).unwrap().modified().unwrap();
        std::fs::write(&db, b"0123456780").unwrap();
        let file = std::fs::File::options().write(true).open(&db).unwrap();
        file.set_modified(modified).unwrap();
        drop(file);
        assert!(!unchanged(&db));

        // Replaced by another file: another inode.
        assert!(record(&db).unwrap());
        let other = dir.path().join("other.db");
        std::fs::write(&other, b"0123456780").unwrap();
        std::fs::rename(&other, &db).unwrap();
        assert!(!unchanged(&db));

        assert!(record(&db).unwrap());
        forget(&db).unwrap();
        assert!(!unchanged(&db) && !path(&db).exists());
        forget(&db).unwrap();
    }
}

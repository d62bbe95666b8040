//! The projects the user trusts (docs/project.md): a project's hooks are code from a
//! repository someone may just have cloned, so they run only once the user has said so
//! with `zeroclaw trust PATH` (undone with `--revoke`). The list is a JSON file in the data
//! dir, `{"projects": ["/abs/root", …]}`, each a project root as found from PATH (the
//! nearest directory holding `.git`, else PATH), resolved through symbolic links. The
//! daemon reads it at each turn's start (it is small), so a change holds from the next
//! turn on, with no restart.

use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The file, in the data dir.
pub const FILE: &str = "trusted_projects.json";
/// A longer file is not read: nothing is trusted (a hand-edited file gone wrong).
const MAX_BYTES: u64 = 1024 * 1024;

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    #[serde(default)]
    projects: Vec<String>,
}

pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE)
}

/// `dir` resolved through symbolic links, as the list keeps it (as given if it cannot be).
fn key(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// The list; an absent file is an empty one. Blocking.
fn read(data_dir: &Path) -> Result<TrustFile, String> {
    let path = path(data_dir);
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TrustFile::default()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut text = String::new();
    file.take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if text.len() as u64 > MAX_BYTES {
        return Err(format!(
            "{} is over {} KiB",
            path.display(),
            MAX_BYTES / 1024
        ));
    }
    serde_json::from_str(&text).map_err(|e| format!("{} is not valid: {e}", path.display()))
}

/// Whether the project rooted at `root` is trusted; a list that cannot be read trusts
/// nothing, and says why. Blocking.
pub fn is_trusted(data_dir: &Path, root: &Path) -> Result<bool, String> {
    let key = key(root);
    Ok(read(data_dir)?.projects.contains(&key))
}

/// Adds (`trusted`) or removes the project rooted at `root`; returns its entry as kept
/// and whether the list changed. Written to a temporary file then renamed, so a daemon
/// reading it meanwhile sees the old list or the new one. Blocking.
pub fn set(data_dir: &Path, root: &Path, trusted: bool) -> Result<(String, bool), String> {
    let key = key(root);
    let mut list = read(data_dir)?;
    let had = list.projects.contains(&key);
    if had == trusted {
        return Ok((key, false));
    }
    if trusted {
        list.projects.push(key.clone());
    } else {
        list.projects.retain(|p| *p != key);
    }
    std::fs::create_dir_all(data_dir)
        .map_err(|e| format!("cannot create {}: {e}", data_dir.display()))?;
    let text = serde_json::to_string_pretty(&list).map_err(|e| e.to_string())?;
    let mut tmp = tempfile::NamedTempFile::new_in(data_dir)
        .map_err(|e| format!("cannot write in {}: {e}", data_dir.display()))?;
    std::io::Write::write_all(&mut tmp, text.as_bytes())
        .map_err(|e| format!("cannot write in {}: {e}", data_dir.display()))?;
    tmp.persist(path(data_dir))
        .map_err(|e| format!("cannot write {}: {}", path(data_dir).display(), e.error))?;
    Ok((key, true))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn trust_and_revoke_round_trip_through_the_file() {
        let data = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        assert!(!is_trusted(data.path(), project.path()).unwrap());
        assert!(set(data.path(), project.path(), true).unwrap().1);
        assert!(!set(data.path(), project.path(), true).unwrap().1, "twice");
        assert!(is_trusted(data.path(), project.path()).unwrap());
        assert!(set(data.path(), project.path(), false).unwrap().1);
        assert!(!is_trusted(data.path(), project.path()).unwrap());
    }

    #[test]
    fn a_damaged_list_trusts_nothing_and_says_why() {
        let data = tempfile::tempdir().unwrap();
        std::fs::write(path(data.path()), "not json").unwrap();
        let err = is_trusted(data.path(), data.path()).unwrap_err();
        assert!(err.contains("is not valid"), "{err}");
    }
}

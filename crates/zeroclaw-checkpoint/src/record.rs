//! The record in a shadow repository of what it snapshots: the workspace it belongs to,
//! the git work tree and the size cap, written when it is created and read on each open.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::paths;

/// The file in the shadow repository that records the workspace it belongs to.
pub(crate) const RECORD: &str = "zeroclaw-workspace";
const RECORD_VERSION: &str = "1";

/// What a shadow repository snapshots, as recorded when it was created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    /// The workspace, canonical.
    pub workspace: PathBuf,
    /// The git work tree: the workspace or the top level of the user's repository.
    pub work_tree: PathBuf,
    /// The workspace relative to the work tree, git's form (`a/b`), empty when equal.
    pub prefix: Vec<u8>,
    /// The user repository's `info/exclude`, read on each snapshot, never written.
    pub user_exclude: Option<PathBuf>,
    /// The size cap the index was built with; another cap means a rebuilt index.
    pub max_file_bytes: u64,
}

impl Record {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut field = |key: &str, value: &[u8]| {
            out.extend_from_slice(key.as_bytes());
            out.push(0);
            out.extend_from_slice(value);
            out.push(0);
        };
        field("version", RECORD_VERSION.as_bytes());
        field("workspace", &paths::to_bytes(&self.workspace));
        field("work_tree", &paths::to_bytes(&self.work_tree));
        field("prefix", &self.prefix);
        if let Some(exclude) = &self.user_exclude {
            field("user_exclude", &paths::to_bytes(exclude));
        }
        field("max_file_bytes", self.max_file_bytes.to_string().as_bytes());
        out
    }

    pub(crate) fn decode(bytes: &[u8]) -> Option<Self> {
        let mut fields = bytes.split(|&b| b == 0);
        let mut record = Record {
            workspace: PathBuf::new(),
            work_tree: PathBuf::new(),
            prefix: Vec::new(),
            user_exclude: None,
            max_file_bytes: 0,
        };
        let mut version = false;
        while let Some(key) = fields.next() {
            if key.is_empty() {
                break;
            }
            let value = fields.next()?;
            match key {
                b"version" => version = value == RECORD_VERSION.as_bytes(),
                b"workspace" => record.workspace = paths::from_bytes(value),
                b"work_tree" => record.work_tree = paths::from_bytes(value),
                b"prefix" => record.prefix = value.to_vec(),
                b"user_exclude" => record.user_exclude = Some(paths::from_bytes(value)),
                b"max_file_bytes" => {
                    record.max_file_bytes = std::str::from_utf8(value).ok()?.parse().ok()?
                }
                _ => {}
            }
        }
        (version && !record.workspace.as_os_str().is_empty()).then_some(record)
    }

    /// The workspace-relative form of a work-tree path, or `None` outside the workspace.
    pub(crate) fn strip<'a>(&self, path: &'a [u8]) -> Option<&'a [u8]> {
        if self.prefix.is_empty() {
            return Some(path);
        }
        let rest = path.strip_prefix(self.prefix.as_slice())?;
        match rest.first() {
            Some(b'/') => Some(&rest[1..]),
            None => Some(rest),
            Some(_) => None,
        }
    }
}

impl Record {
    /// The record of the repository in `dir`, if it can be read.
    pub(crate) fn read(dir: &Path) -> Option<Self> {
        Self::decode(&std::fs::read(dir.join(RECORD)).ok()?)
    }

    /// Writes it into the repository in `dir`, whole or not at all.
    pub(crate) fn write(&self, dir: &Path) -> Result<(), Error> {
        let path = dir.join(RECORD);
        let tmp = dir.join(format!("{RECORD}.tmp"));
        std::fs::write(&tmp, self.encode()).map_err(|e| Error::io("write", &tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| Error::io("write", &path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_survives_its_encoding() {
        let record = Record {
            workspace: PathBuf::from("/w/s p"),
            work_tree: PathBuf::from("/w"),
            prefix: b"s p".to_vec(),
            user_exclude: Some(PathBuf::from("/w/.git/info/exclude")),
            max_file_bytes: 42,
        };
        assert_eq!(Record::decode(&record.encode()), Some(record.clone()));
        assert_eq!(record.strip(b"s p/a/b"), Some(&b"a/b"[..]));
        assert_eq!(record.strip(b"s px/a"), None);
        assert_eq!(Record::decode(b"garbage"), None);
    }
}

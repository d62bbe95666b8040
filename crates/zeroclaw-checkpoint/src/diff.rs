//! What differs between two snapshots: `git diff-tree -r --raw` between their trees.

use std::path::PathBuf;

use crate::error::Error;
use crate::git::{Context, Git};
use crate::ids::SnapshotId;
use crate::paths;

/// How a path differs from one snapshot to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChangeKind {
    Added,
    /// Content, mode (the executable bit) or type (file or symlink) changed.
    Modified,
    Deleted,
}

impl ChangeKind {
    /// `added`, `modified` or `deleted`: the protocol's words.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Modified => "modified",
            ChangeKind::Deleted => "deleted",
        }
    }
}

/// One path that differs, relative to the workspace.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Change {
    pub path: PathBuf,
    pub change: ChangeKind,
}

/// git's file modes, as far as snapshots hold them.
pub(crate) const MODE_FILE: u32 = 0o100644;
pub(crate) const MODE_EXECUTABLE: u32 = 0o100755;
pub(crate) const MODE_SYMLINK: u32 = 0o120000;

/// A difference with what a restore needs to apply it.
#[derive(Debug, Clone)]
pub(crate) struct RawChange {
    /// Workspace-relative, git's form.
    pub path: Vec<u8>,
    pub kind: ChangeKind,
    /// The mode and object on the `to` side (for `Deleted`, zero and the null id).
    pub new_mode: u32,
    pub new_oid: String,
}

impl RawChange {
    pub(crate) fn public(&self) -> Change {
        Change {
            path: paths::relative(&self.path),
            change: self.kind,
        }
    }
}

/// Every path that differs from `from` to `to`, sorted by path.
pub(crate) fn raw(
    git: &Git,
    ctx: &Context,
    from: &SnapshotId,
    to: &SnapshotId,
) -> Result<Vec<RawChange>, Error> {
    if from == to {
        return Ok(Vec::new());
    }
    let out = git.run(
        ctx,
        [
            "diff-tree",
            "-r",
            "-z",
            "--raw",
            "--no-renames",
            "--no-abbrev",
            "--no-commit-id",
            from.as_str(),
            to.as_str(),
        ],
        None,
    )?;
    parse(&out).ok_or_else(|| Error::Git {
        command: "diff-tree".into(),
        status: "exit status: 0".into(),
        stderr: "its output could not be read".into(),
    })
}

/// `:<old mode> <new mode> <old oid> <new oid> <status>\0<path>\0`, repeated.
fn parse(out: &[u8]) -> Option<Vec<RawChange>> {
    let mut changes = Vec::new();
    let mut fields = out.split(|&b| b == 0);
    while let Some(head) = fields.next() {
        if head.is_empty() {
            break;
        }
        let path = fields.next()?;
        let head = std::str::from_utf8(head.strip_prefix(b":")?).ok()?;
        let mut parts = head.split(' ');
        let _old_mode = parts.next()?;
        let new_mode = u32::from_str_radix(parts.next()?, 8).ok()?;
        let _old_oid = parts.next()?;
        let new_oid = parts.next()?.to_string();
        let kind = match parts.next()?.as_bytes().first()? {
            b'A' => ChangeKind::Added,
            b'D' => ChangeKind::Deleted,
            b'M' | b'T' => ChangeKind::Modified,
            _ => return None,
        };
        changes.push(RawChange {
            path: path.to_vec(),
            kind,
            new_mode,
            new_oid,
        });
    }
    changes.sort_by(|a, b| a.path.cmp(&b.path));
    Some(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_output_is_read_into_changes() {
        let zero = "0".repeat(40);
        let a = "a".repeat(40);
        let out = format!(
            ":000000 100755 {zero} {a} A\0x/new\0:100644 000000 {a} {zero} D\0gone\0:100644 120000 {a} {a} T\0link\0"
        );
        let changes = parse(out.as_bytes()).unwrap();
        let got: Vec<(&[u8], ChangeKind, u32)> = changes
            .iter()
            .map(|c| (c.path.as_slice(), c.kind, c.new_mode))
            .collect();
        assert_eq!(
            got,
            vec![
                (&b"gone"[..], ChangeKind::Deleted, 0),
                (&b"link"[..], ChangeKind::Modified, MODE_SYMLINK),
                (&b"x/new"[..], ChangeKind::Added, MODE_EXECUTABLE),
            ]
        );
        assert!(parse(b":garbage\0p\0").is_none());
    }
}

//! The two names the caller handles: a snapshot's id and the ref that keeps it alive.

use std::fmt;

/// A snapshot: the id of the git tree object that holds the workspace's content, as
/// lowercase hex (40 digits for SHA-1, 64 for SHA-256). Equal ids mean equal content, so
/// two snapshots of an unchanged workspace have the same id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SnapshotId(String);

impl SnapshotId {
    /// The id `value` is, or why it is none (`parse.rs` makes that the crate's error).
    pub(crate) fn check(value: &str) -> Result<Self, &'static str> {
        if value.len() != 40 && value.len() != 64 {
            return Err("expected 40 or 64 hex digits");
        }
        if !value
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            return Err("expected lowercase hex digits");
        }
        Ok(Self(value.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SnapshotId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The name of the ref that keeps a snapshot alive, below `refs/zeroclaw/` in the shadow
/// repository: one to eight `/`-separated parts, each of ASCII letters, digits, `.`, `_` and
/// `-`, starting with a letter or digit, not ending in `.lock`; 200 bytes at most. For
/// example `<session id>/3` or `<session id>/undo/1`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RefName(String);

const REF_NAME_MAX: usize = 200;
const REF_PARTS_MAX: usize = 8;

impl RefName {
    /// The name `value` is, or why it is none (`parse.rs` makes that the crate's error).
    pub(crate) fn check(value: String) -> Result<Self, &'static str> {
        match ref_name_problem(&value) {
            Some(reason) => Err(reason),
            None => Ok(Self(value)),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The full ref in the shadow repository.
    pub(crate) fn full(&self) -> String {
        format!("{}{}", REF_PREFIX, self.0)
    }
}

pub(crate) const REF_PREFIX: &str = "refs/zeroclaw/";

fn ref_name_problem(value: &str) -> Option<&'static str> {
    if value.is_empty() {
        return Some("it is empty");
    }
    if value.len() > REF_NAME_MAX {
        return Some("it is longer than 200 bytes");
    }
    let parts: Vec<&str> = value.split('/').collect();
    if parts.len() > REF_PARTS_MAX {
        return Some("it has more than 8 parts");
    }
    for part in parts {
        let Some(first) = part.bytes().next() else {
            return Some("it has an empty part");
        };
        if !first.is_ascii_alphanumeric() {
            return Some("each part must start with a letter or digit");
        }
        if !part
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        {
            return Some("only ASCII letters, digits, '.', '_', '-' and '/' are allowed");
        }
        if part.contains("..") || part.ends_with(".lock") || part.ends_with('.') {
            return Some("a part may not contain '..' or end in '.' or '.lock'");
        }
    }
    None
}

impl fmt::Display for RefName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_ids_are_full_lowercase_hex() {
        assert!(SnapshotId::parse("4b825dc642cb6eb9a060e54bf8d69288fbee4904").is_ok());
        assert!(SnapshotId::parse(&"a".repeat(64)).is_ok());
        for bad in [
            "",
            "4b825dc",
            "4B825DC642CB6EB9A060E54BF8D69288FBEE4904",
            "4b825dc642cb6eb9a060e54bf8d69288fbee490g",
            "--4b825dc642cb6eb9a060e54bf8d69288fbee49",
        ] {
            assert!(SnapshotId::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn ref_names_are_plain_path_parts() {
        for good in ["a", "0f3c-9a/12", "s/undo/1", "a.b_c-d/x"] {
            assert!(RefName::new(good).is_ok(), "{good:?} was refused");
        }
        let long = "a".repeat(201);
        let deep = ["a"; 9].join("/");
        for bad in [
            "", "/a", "a/", "a//b", "../a", "a/..", ".a", "-a", "a b", "a~1", "a^", "a:b", "a*",
            "a.lock", "a..b", "a.", "é", &long, &deep,
        ] {
            assert!(RefName::new(bad).is_err(), "{bad:?} was accepted");
        }
    }
}

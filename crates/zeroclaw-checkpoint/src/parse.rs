//! The names a caller hands in, read: a snapshot id or a ref name that breaks its rules
//! (`ids.rs`) is `Error::Invalid`, saying which rule.

use std::str::FromStr;

use crate::error::Error;
use crate::ids::{RefName, SnapshotId};

/// The error for `value` (shortened: it may be anything) read as `what`.
fn invalid(what: &'static str, value: &str, reason: &'static str) -> Error {
    Error::Invalid {
        what,
        value: value.chars().take(80).collect(),
        reason,
    }
}

impl SnapshotId {
    pub fn parse(value: &str) -> Result<Self, Error> {
        Self::check(value).map_err(|reason| invalid("snapshot id", value, reason))
    }
}

impl FromStr for SnapshotId {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Self::parse(s)
    }
}

impl RefName {
    pub fn new(value: impl Into<String>) -> Result<Self, Error> {
        let value = value.into();
        let shown: String = value.chars().take(80).collect();
        Self::check(value).map_err(|reason| invalid("checkpoint ref name", &shown, reason))
    }
}

impl FromStr for RefName {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Self::new(s)
    }
}

//! The three sandbox modes, ordered from the strictest to the widest.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What a sandboxed command may write. Reads are the same in every mode but `Full`: the
/// whole filesystem except the hidden paths and the devices (see `docs/sandbox.md`).
///
/// The order is by permissiveness: `ReadOnly < WorkspaceWrite < Full`, so "at most as wide
/// as the daemon's config" is `requested <= configured`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// No write anywhere except the command's private temp dir.
    ReadOnly,
    /// Writes under the working directory, the writable roots and the private temp dir.
    WorkspaceWrite,
    /// No sandbox at all: nothing is applied to the command.
    Full,
}

impl Mode {
    /// Every mode, strictest first.
    pub const ALL: [Mode; 3] = [Mode::ReadOnly, Mode::WorkspaceWrite, Mode::Full];

    /// The name used in config files and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::WorkspaceWrite => "workspace-write",
            Mode::Full => "full",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of the three modes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox mode `{0}`: expected `read-only`, `workspace-write` or `full`")]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| UnknownMode(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn modes_are_named_in_kebab_case_on_the_wire_and_in_text() {
        for mode in Mode::ALL {
            let json = serde_json::to_string(&mode).unwrap();
            assert_eq!(json, format!("\"{mode}\""));
            assert_eq!(serde_json::from_str::<Mode>(&json).unwrap(), mode);
            assert_eq!(mode.as_str().parse::<Mode>().unwrap(), mode);
        }
        let err = "danger".parse::<Mode>().unwrap_err().to_string();
        assert!(
            err.contains("`danger`") && err.contains("workspace-write"),
            "{err}"
        );
    }

    #[test]
    fn a_stricter_mode_compares_lower() {
        assert!(Mode::ReadOnly < Mode::WorkspaceWrite);
        assert!(Mode::WorkspaceWrite < Mode::Full);
    }
}

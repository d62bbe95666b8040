//! Why the sandbox refused something, in words for the model and the user.
//!
//! One type for both sides: the in-process checks of the file tools return it, and
//! [`crate::Prepared::explain`] finds it in a failed command's output, so the same path is
//! refused with the same sentence whichever tool touched it.

use std::fmt;
use std::path::PathBuf;

use crate::Mode;

/// The devices a sandboxed command may open (all of them readable, all but the random
/// ones' entropy pools harmlessly writable). Every other entry under `/dev` is refused.
pub const DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// A refusal by the sandbox. Its `Display` is the explained message, starting with
/// `blocked by the sandbox: `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A write (create, change, remove, rename, link) outside the writable set of `mode`.
    Write { path: PathBuf, mode: Mode },
    /// A path inside the daemon's data dir, config dir or socket: never readable nor writable.
    Hidden { path: PathBuf },
    /// A device other than the harmless ones in [`DEVICES`].
    Device { path: PathBuf },
    /// A process outside the sandbox: signals, tracing, and (for the file tools, which run in
    /// the daemon) `/proc/<pid>` and `/proc/self` files.
    Process { path: Option<PathBuf> },
    /// A network connection, with the network off.
    Network,
}

impl Refusal {
    /// A short stable name, for logs and for a protocol field: `write`, `hidden`, `device`,
    /// `process`, `network`.
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::Write { .. } => "write",
            Refusal::Hidden { .. } => "hidden",
            Refusal::Device { .. } => "device",
            Refusal::Process { .. } => "process",
            Refusal::Network => "network",
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("blocked by the sandbox: ")?;
        match self {
            Refusal::Write {
                path,
                mode: Mode::ReadOnly,
            } => write!(
                f,
                "write in a read-only session: {} (this session's sandbox is read-only: \
                 commands may write only in their private $TMPDIR)",
                path.display()
            ),
            Refusal::Write { path, .. } => write!(
                f,
                "write outside the workspace: {} (this session's sandbox is workspace-write: \
                 writable are the working directory, the writable roots and, for commands, \
                 their private $TMPDIR)",
                path.display()
            ),
            Refusal::Hidden { path } => write!(
                f,
                "{} is one of the daemon's own files (its data dir, config dir or socket), \
                 which sandboxed tools can neither read nor write",
                path.display()
            ),
            Refusal::Device { path } => write!(
                f,
                "{} is a device; sandboxed tools may open only {}",
                path.display(),
                DEVICES.join(", ")
            ),
            Refusal::Process { path: Some(path) } => write!(
                f,
                "{} belongs to a running process, which the sandbox keeps out of reach",
                path.display()
            ),
            Refusal::Process { path: None } => f.write_str(
                "processes outside the sandbox can be neither signalled nor traced from inside it",
            ),
            Refusal::Network => f.write_str("network is off in this session's sandbox"),
        }
    }
}

impl std::error::Error for Refusal {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refusal_says_the_sandbox_blocked_it_and_why() {
        let write = Refusal::Write {
            path: "/etc/x".into(),
            mode: Mode::WorkspaceWrite,
        };
        assert!(
            write
                .to_string()
                .starts_with("blocked by the sandbox: write outside the workspace: /etc/x"),
            "{write}"
        );
        assert_eq!(
            Refusal::Network.to_string(),
            "blocked by the sandbox: network is off in this session's sandbox"
        );
        let read_only = Refusal::Write {
            path: "/w/x".into(),
            mode: Mode::ReadOnly,
        };
        assert!(read_only.to_string().contains("read-only"), "{read_only}");
    }
}

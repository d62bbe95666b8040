//! What this machine offers the sandbox, found once at start-up (by `probe.rs`).

use std::fmt;

/// The kernel features the sandbox found (Linux), or why there is no sandbox here.
///
/// [`Support::probe`] tries the whole setup once in a throw-away child process, so
/// "available" means a sandboxed command really starts here, not only that the system
/// calls exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    state: State,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Unavailable(String),
    Available {
        /// The Landlock ABI in use: the kernel's, capped at the newest one this crate is
        /// tested with (7).
        landlock_abi: u32,
        /// Whether a user+mount namespace hides the daemon's paths; when not, why not.
        user_namespaces: Result<(), String>,
    },
}

/// The reason on every platform but Linux.
pub const NOT_IMPLEMENTED: &str = "the sandbox is not implemented on this platform yet";

impl Support {
    /// No sandbox, for `reason`: only mode `full` can be prepared. For tests of the
    /// "required but unavailable" path, and for an operator who turns it off.
    pub fn unavailable(reason: impl Into<String>) -> Support {
        Support {
            state: State::Unavailable(reason.into()),
        }
    }

    pub(crate) fn available(landlock_abi: u32, user_namespaces: Result<(), String>) -> Support {
        Support {
            state: State::Available {
                landlock_abi,
                user_namespaces,
            },
        }
    }

    /// The same support without user namespaces: the fallback where they are missing (see
    /// docs/sandbox.md), chosen on purpose. The tests run every escape against both.
    pub fn without_user_namespaces(&self) -> Support {
        match &self.state {
            State::Unavailable(_) => self.clone(),
            State::Available { landlock_abi, .. } => Support::available(
                *landlock_abi,
                Err("turned off (Support::without_user_namespaces)".into()),
            ),
        }
    }

    /// Whether commands can be sandboxed here.
    pub fn is_available(&self) -> bool {
        matches!(self.state, State::Available { .. })
    }

    /// Why commands cannot be sandboxed here, if they cannot.
    pub fn unavailable_reason(&self) -> Option<&str> {
        match &self.state {
            State::Unavailable(reason) => Some(reason),
            State::Available { .. } => None,
        }
    }

    /// The Landlock ABI in use, if available.
    pub fn landlock_abi(&self) -> Option<u32> {
        match self.state {
            State::Available { landlock_abi, .. } => Some(landlock_abi),
            State::Unavailable(_) => None,
        }
    }

    /// Whether a user+mount namespace is part of the sandbox.
    pub fn user_namespaces(&self) -> bool {
        matches!(
            self.state,
            State::Available {
                user_namespaces: Ok(()),
                ..
            }
        )
    }

    /// The mechanism in force, for `status` and logs: `landlock(abi 7)+seccomp+userns`,
    /// `landlock(abi 7)+seccomp` (no user namespaces), or `unavailable`.
    pub fn mechanism(&self) -> String {
        match &self.state {
            State::Unavailable(_) => "unavailable".into(),
            State::Available {
                landlock_abi,
                user_namespaces,
            } => format!(
                "landlock(abi {landlock_abi})+seccomp{}",
                if user_namespaces.is_ok() {
                    "+userns"
                } else {
                    ""
                }
            ),
        }
    }

    /// What this machine's sandbox does not do that the full design does, each in one
    /// sentence (empty on a kernel with Landlock ABI 6 or later and user namespaces).
    pub fn gaps(&self) -> Vec<String> {
        let State::Available {
            landlock_abi,
            user_namespaces,
        } = &self.state
        else {
            return Vec::new();
        };
        let mut gaps = Vec::new();
        if *landlock_abi < 6 {
            gaps.push(format!(
                "Landlock ABI {landlock_abi} cannot scope signals or abstract Unix sockets \
                 (ABI 6, Linux 6.12): a sandboxed command can signal the user's other processes"
            ));
        }
        if let Err(why) = user_namespaces {
            gaps.push(format!(
                "no user namespaces ({why}): Unix sockets are off in the sandbox (socketpair \
                 still works), since the daemon's socket cannot be hidden otherwise; the hidden \
                 directories' names can be listed, and nothing new can be created directly in a \
                 writable directory that holds a hidden one"
            ));
        }
        gaps
    }
}

impl fmt::Display for Support {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.state {
            State::Unavailable(reason) => write!(f, "unavailable: {reason}"),
            State::Available { .. } => f.write_str(&self.mechanism()),
        }
    }
}

//! The daemon's secrets kept out of the processes tools start.
//!
//! The daemon reads the provider's API key from the variable `provider.api_key_env` names,
//! so that variable is in its environment, and every child would inherit it: a model could
//! ask `bash` for `printenv`. A started process gets the daemon's environment without that
//! variable and without any variable matching `tools.scrub_env` (default `*_API_KEY`: the
//! keys of other providers a user's shell often holds). Other credentials (`GITHUB_TOKEN`,
//! `SSH_AUTH_SOCK`…) are the user's, for the user's commands, and stay unless listed.
//!
//! A started process could still read the key from its parent: `cat /proc/$PPID/environ`.
//! [`protect_process_files`] closes that on Linux.

use std::ffi::OsString;

/// Which variables a started process does not inherit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvScrub {
    /// Exact names (the provider's key variable).
    names: Vec<String>,
    /// Patterns where `*` stands for any run of characters, matched ignoring ASCII case.
    patterns: Vec<String>,
}

impl EnvScrub {
    pub fn new(key_var: Option<&str>, patterns: &[String]) -> Self {
        Self {
            names: key_var.into_iter().map(str::to_owned).collect(),
            patterns: patterns.to_vec(),
        }
    }

    /// Whether a variable called `name` is kept from started processes.
    pub fn removes(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
            || self
                .patterns
                .iter()
                .any(|p| matches(p.as_bytes(), name.as_bytes()))
    }

    /// The names of the daemon's variables to remove from a started process's environment.
    pub fn removed(&self) -> Vec<OsString> {
        std::env::vars_os()
            .map(|(name, _)| name)
            .filter(|name| name.to_str().is_some_and(|n| self.removes(n)))
            .chain(self.names.iter().map(OsString::from))
            .collect()
    }
}

/// Makes the daemon's `/proc/<pid>/` files that need ptrace access (`environ`, `mem`,
/// `fd/`, `maps`…) unreadable to its other processes of the same user — what a bash
/// command starts — by marking it not dumpable, as ssh-agent does (which also means no
/// core dumps). Done once, before the first process is started; the children themselves
/// are dumpable again after their `exec`. The daemon's own reads of `/proc/self` are
/// guarded by the approval instead (`turn/target.rs`). (Unix only: a Windows process's
/// memory and environment are not files another process of the user can open.)
#[cfg(unix)]
pub fn protect_process_files() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            use rustix::process::{DumpableBehavior, set_dumpable_behavior};
            if let Err(e) = set_dumpable_behavior(DumpableBehavior::NotDumpable) {
                tracing::warn!(error = %e, "could not make the daemon's /proc files private; started processes may read its environment");
            }
        });
    }
}

/// `name` against `pattern` (`*`: any run of characters), ignoring ASCII case.
fn matches(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|skip| matches(rest, &name[skip..])),
        Some((c, rest)) => name
            .split_first()
            .is_some_and(|(n, tail)| n.eq_ignore_ascii_case(c) && matches(rest, tail)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_variable_and_matching_names_are_removed() {
        let scrub = EnvScrub::new(Some("MY_KEY"), &["*_API_KEY".into(), "AWS_*".into()]);
        for name in [
            "MY_KEY",
            "OPENAI_API_KEY",
            "openai_api_key",
            "AWS_SECRET",
            "AWS_",
        ] {
            assert!(scrub.removes(name), "{name}");
        }
        for name in ["MY_KEY2", "PATH", "API_KEY_FILE", "XAWS_X", "HOME"] {
            assert!(!scrub.removes(name), "{name}");
        }
        assert!(!EnvScrub::default().removes("OPENAI_API_KEY"));
        assert!(matches(b"a*b*c", b"aXXbYc"));
        assert!(!matches(b"a*b*c", b"aXXcYb"));
    }
}

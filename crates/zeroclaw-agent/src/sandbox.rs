//! The sandbox as the agent uses it: the `[sandbox]` config, a session's own choice (mode
//! and network), what the daemon found at start-up, and what one turn's commands run under.
//! The mechanism is `zeroclaw-sandbox`'s; this module only decides which policy applies
//! (docs/sandbox.md, "Configuration and sessions").

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;

pub use zeroclaw_sandbox::{Checker, Mode, Policy, Prepared, Refusal, Support, service_sockets};

/// `[sandbox]`: the policy of every session that does not choose a stricter one.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxConfig {
    pub mode: Mode,
    /// Outbound network for sandboxed commands.
    pub network: bool,
    /// More directories writable in `workspace-write`; absolute.
    pub writable_roots: Vec<PathBuf>,
    /// Refuse to run tools unconfined where the sandbox is unavailable (instead of running
    /// them with the user's full rights, as said at start-up and in `status`).
    pub require: bool,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            mode: Mode::WorkspaceWrite,
            network: false,
            writable_roots: Vec::new(),
            require: false,
        }
    }
}

impl SandboxConfig {
    /// What is wrong with the values, named as in the file.
    pub fn validate(&self) -> Result<(), String> {
        for (i, root) in self.writable_roots.iter().enumerate() {
            if !root.is_absolute() {
                return Err(format!(
                    "sandbox.writable_roots[{i}] must be an absolute path, got {:?}",
                    root.display().to_string()
                ));
            }
        }
        Ok(())
    }

    /// The mode and network every session gets unless it chooses.
    pub fn choice(&self) -> Choice {
        Choice {
            mode: self.mode,
            network: self.network,
        }
    }
}

/// A session's sandbox: its mode and whether its commands have the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Choice {
    pub mode: Mode,
    pub network: bool,
}

impl Choice {
    /// Unattended runs' default, whatever `[sandbox]` says: they read text from the
    /// internet, so a prompt injection must not reach beyond the workspace or the network.
    pub const UNATTENDED: Choice = Choice {
        mode: Mode::WorkspaceWrite,
        network: false,
    };

    /// `Ok` if this choice is no wider than `limit`; else why, in words for the caller.
    pub fn within(&self, limit: Choice) -> Result<(), String> {
        if self.mode > limit.mode {
            return Err(format!(
                "sandbox mode `{}` is wider than the daemon's `{}` ([sandbox] mode)",
                self.mode, limit.mode
            ));
        }
        // `full` has no sandbox, so its network needs no separate leave.
        if self.network && !limit.network && self.mode != Mode::Full {
            return Err(
                "the network is off in the daemon's sandbox ([sandbox] network = false)"
                    .to_string(),
            );
        }
        Ok(())
    }

    /// `network` as it is in force: `full` restricts nothing.
    pub fn effective_network(&self) -> bool {
        self.network || self.mode == Mode::Full
    }
}

/// An unattended entry's `sandbox = {mode, network, require}` (`[[webhooks]]`,
/// `[[schedules]]`). Unset keys, or no `sandbox` at all, take the strict default
/// ([`Choice::UNATTENDED`], required) whatever `[sandbox]` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UnattendedSandbox {
    pub mode: Mode,
    pub network: bool,
    pub require: bool,
}

impl Default for UnattendedSandbox {
    fn default() -> Self {
        Self {
            mode: Choice::UNATTENDED.mode,
            network: Choice::UNATTENDED.network,
            require: true,
        }
    }
}

impl UnattendedSandbox {
    pub fn choice(&self) -> Choice {
        Choice {
            mode: self.mode,
            network: self.network,
        }
    }
}

/// What the daemon found at start-up and keeps out of every sandbox: shared by all turns.
#[derive(Debug, Clone)]
pub struct Sandbox {
    pub support: Arc<Support>,
    /// The daemon's data dir, config dir, socket, and the local services' sockets.
    pub hidden: Vec<PathBuf>,
}

impl Sandbox {
    pub fn new(support: Support, hidden: Vec<PathBuf>) -> Self {
        Self {
            support: Arc::new(support),
            hidden,
        }
    }

    /// What one turn's tools run under, in `cwd`.
    pub fn for_turn(
        &self,
        config: &SandboxConfig,
        choice: Choice,
        require: bool,
        cwd: PathBuf,
    ) -> ToolSandbox {
        let mut policy = Policy::new(choice.mode, cwd).network(choice.network);
        if choice.mode == Mode::WorkspaceWrite {
            policy.writable_roots = config.writable_roots.clone();
        }
        policy.hidden = self.hidden.clone();
        ToolSandbox {
            checker: policy.checker(),
            policy,
            support: self.support.clone(),
            require,
        }
    }
}

/// What one turn's tool calls run under: the policy, the machine's support, and whether
/// running unconfined is refused. Its [`Checker`] is made once per turn for the file tools.
#[derive(Debug, Clone)]
pub struct ToolSandbox {
    pub policy: Policy,
    pub checker: Checker,
    pub support: Arc<Support>,
    pub require: bool,
}

impl ToolSandbox {
    /// No sandbox (mode `full`) in `cwd`: for contexts that have no daemon around them.
    pub fn unconfined(cwd: PathBuf) -> Self {
        let policy = Policy::new(Mode::Full, cwd);
        Self {
            checker: policy.checker(),
            policy,
            support: Arc::new(Support::unavailable("no sandbox in this context")),
            require: false,
        }
    }

    /// Why a command may not run at all: the sandbox is required and this machine has none.
    pub fn refusal(&self) -> Option<String> {
        if self.policy.mode == Mode::Full || !self.require {
            return None;
        }
        self.support.unavailable_reason().map(|reason| {
            format!(
                "refused: this session's commands must run in the sandbox (mode `{}`, required by \
                 [sandbox] require = true or by an unattended run), and the sandbox is unavailable \
                 on this machine ({reason}); nothing ran",
                self.policy.mode
            )
        })
    }

    /// Everything one command needs: `Ok(None)` when it runs unconfined (mode `full`, or
    /// the sandbox unavailable and not required: the daemon said so at start-up and in
    /// `status`); `Err` with the text for the model when it must not run.
    pub fn prepare(&self) -> Result<Option<Prepared>, String> {
        if let Some(refusal) = self.refusal() {
            return Err(refusal);
        }
        if self.policy.mode == Mode::Full || !self.support.is_available() {
            return Ok(None);
        }
        self.policy
            .prepare(&self.support)
            .map(Some)
            .map_err(|e| format!("{e}; nothing ran"))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn tool_sandbox(mode: Mode, require: bool, support: Support) -> ToolSandbox {
        let sandbox = Sandbox::new(support, Vec::new());
        let choice = Choice {
            mode,
            network: false,
        };
        sandbox.for_turn(
            &SandboxConfig::default(),
            choice,
            require,
            std::env::temp_dir(),
        )
    }

    /// Runs on every platform, Windows included (where the sandbox is always unavailable).
    #[test]
    fn a_required_sandbox_that_is_unavailable_refuses_and_says_why() {
        let gone = || Support::unavailable("no Landlock here");
        let refused = tool_sandbox(Mode::WorkspaceWrite, true, gone()).prepare();
        let err = refused.err().unwrap();
        assert!(
            err.contains("unavailable") && err.contains("no Landlock here"),
            "{err}"
        );
        assert!(err.contains("nothing ran"), "{err}");
        // Not required: unconfined (the start-up log and `status` said so).
        assert!(matches!(
            tool_sandbox(Mode::WorkspaceWrite, false, gone()).prepare(),
            Ok(None)
        ));
        // `full` needs no sandbox, required or not.
        assert!(matches!(
            tool_sandbox(Mode::Full, true, gone()).prepare(),
            Ok(None)
        ));
    }

    #[cfg(not(target_os = "linux"))]
    #[test]
    fn the_probe_here_is_unavailable_off_linux_and_a_required_sandbox_refuses() {
        let support = Support::probe();
        assert!(!support.is_available());
        assert!(
            tool_sandbox(Mode::ReadOnly, true, support)
                .prepare()
                .is_err()
        );
    }

    #[test]
    fn a_choice_is_within_the_config_only_if_no_wider() {
        let config = Choice {
            mode: Mode::WorkspaceWrite,
            network: false,
        };
        let ask = |mode, network| Choice { mode, network }.within(config);
        assert!(ask(Mode::ReadOnly, false).is_ok());
        assert!(ask(Mode::WorkspaceWrite, false).is_ok());
        assert!(ask(Mode::Full, false).unwrap_err().contains("wider"));
        assert!(ask(Mode::ReadOnly, true).unwrap_err().contains("network"));
    }

    #[test]
    fn writable_roots_must_be_absolute() {
        let config = SandboxConfig {
            writable_roots: vec!["relative/dir".into()],
            ..SandboxConfig::default()
        };
        let err = config.validate().unwrap_err();
        assert!(err.contains("sandbox.writable_roots[0]"), "{err}");
    }
}

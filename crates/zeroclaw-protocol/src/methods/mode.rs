//! `session/set_mode`: a session's permission mode, which decides which tools its turns are
//! offered and which calls run without asking (docs/protocol.md, "Permission modes").

use serde::{Deserialize, Serialize};

method!(
    /// Sets a session's permission mode (persisted); it applies from the next tool call.
    SessionSetMode, "session/set_mode", SetModeParams, SetModeResult
);

/// A session's permission mode. A new session starts in `default`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum PermissionMode {
    /// Look and plan, change nothing: only read-only tools are offered (and run), and the
    /// model ends with `exit_plan`, whose approval switches the session to `default`.
    Plan,
    /// The `[approvals]` policy, as without modes.
    #[default]
    Default,
    /// File edits inside the working directory run without asking; the rest as `default`.
    AcceptEdits,
    /// Every call runs without asking; only where the sandbox confines the tools.
    Auto,
}

impl PermissionMode {
    /// Every mode, in the order clients cycle through them.
    pub const ALL: [PermissionMode; 4] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::Auto,
    ];

    /// The name on the wire and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Plan => "plan",
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "accept-edits",
            PermissionMode::Auto => "auto",
        }
    }

    /// The mode called `name`, if there is one.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == name)
    }

    /// The mode after this one in [`PermissionMode::ALL`], wrapping.
    pub fn next(self) -> Self {
        let at = Self::ALL.iter().position(|m| *m == self).unwrap_or(0);
        Self::ALL[(at + 1) % Self::ALL.len()]
    }
}

impl std::fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `session/set_mode` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetModeParams {
    pub session_id: String,
    pub mode: PermissionMode,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SetModeResult {
    /// The session's mode from now on.
    pub mode: PermissionMode,
    /// The mode it had before.
    pub previous: PermissionMode,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn modes_are_kebab_case_on_the_wire_and_cycle_through_all() {
        for mode in PermissionMode::ALL {
            assert_eq!(serde_json::to_value(mode).unwrap(), json!(mode.as_str()));
            assert_eq!(PermissionMode::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(PermissionMode::AcceptEdits.as_str(), "accept-edits");
        let mut mode = PermissionMode::Default;
        for _ in 0..PermissionMode::ALL.len() {
            mode = mode.next();
        }
        assert_eq!(mode, PermissionMode::Default);
        assert!(SetModeParams::deserialize(json!({"sessionId": "s", "mode": "yolo"})).is_err());
    }
}

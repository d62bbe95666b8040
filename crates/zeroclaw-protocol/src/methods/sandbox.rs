//! The sandbox on the wire: a session's (`session/new`'s `sandbox`, its info's) and the
//! daemon's (`status.sandbox`). What each mode allows is in docs/sandbox.md.

use serde::{Deserialize, Serialize};

/// What a sandboxed command may write; reads are the same in both sandboxed modes.
/// Ordered from the strictest: `readOnly < workspaceWrite < full`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// No write anywhere but the command's private temp dir.
    ReadOnly,
    /// Writes under the session's cwd, `[sandbox] writable_roots` and the temp dir.
    WorkspaceWrite,
    /// No sandbox.
    Full,
}

impl SandboxMode {
    /// `read-only`, `workspace-write`, `full`: as in the config file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::Full => "full",
        }
    }
}

/// `session/new`'s `sandbox`: each member absent takes the daemon's `[sandbox]` value. No
/// wider than the config unless the caller has admin authority (the local socket, or a
/// token of scope `admin`); otherwise `-32003` says what would widen it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<SandboxMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
}

/// A session's sandbox: what its commands and file tools run under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionSandbox {
    pub mode: SandboxMode,
    /// Outbound network (always `true` in `full`).
    pub network: bool,
}

/// `approval_request.escape`: a call that asks to run outside the sandbox, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SandboxEscape {
    /// The model's reason, as it wrote it.
    pub justification: String,
}

/// `status.sandbox`: the daemon's policy and the mechanism that enforces it here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SandboxStatus {
    /// `[sandbox] mode`: every session's unless it chose a stricter one.
    pub mode: SandboxMode,
    /// `[sandbox] network`.
    pub network: bool,
    /// `[sandbox] writable_roots`.
    #[serde(default)]
    pub writable_roots: Vec<String>,
    /// `[sandbox] require`: tools refuse to run unconfined where it is unavailable.
    pub require: bool,
    /// Whether this machine can sandbox commands.
    pub available: bool,
    /// `landlock(abi 7)+seccomp+userns`, `landlock(abi 7)+seccomp`, or `unavailable`.
    pub mechanism: String,
    /// The Landlock ABI in use, when available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock_abi: Option<u32>,
    /// Why it is unavailable, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What this machine's sandbox does not do that the full design does, one sentence
    /// each (an older Landlock ABI, no user namespaces).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<String>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn modes_are_kebab_case_and_a_request_refuses_unknown_members() {
        assert_eq!(
            serde_json::to_value(SandboxMode::WorkspaceWrite).unwrap(),
            json!("workspace-write")
        );
        let r: SandboxRequest = serde_json::from_value(json!({"mode": "read-only"})).unwrap();
        assert_eq!(r.mode, Some(SandboxMode::ReadOnly));
        assert_eq!(r.network, None);
        assert!(serde_json::from_value::<SandboxRequest>(json!({"mod": "full"})).is_err());
        assert!(SandboxMode::ReadOnly < SandboxMode::Full);
    }
}

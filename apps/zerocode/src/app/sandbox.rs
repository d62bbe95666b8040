//! `/sandbox`: what the session's commands and file tools may touch, in words, and what
//! enforces it on the daemon's machine (docs/sandbox.md).

use crate::term::sanitize;
use zeroclaw_client::{SandboxMode, SandboxStatus, SessionSandbox};

/// The lines `/sandbox` prints: the session's policy, then the daemon's.
pub fn describe(session: Option<&SessionSandbox>, daemon: Option<&SandboxStatus>) -> Vec<String> {
    let mut lines = Vec::new();
    match session {
        Some(s) => {
            lines.push(format!("  mode      {}", s.mode.as_str()));
            lines.push(format!("  writes    {}", writes(s.mode)));
            let network = match (s.mode, s.network) {
                (SandboxMode::Full, _) | (_, true) => "on",
                (_, false) => "off",
            };
            lines.push(format!("  network   {network}"));
        }
        None => lines.push("  this daemon does not report a session's sandbox".into()),
    }
    let Some(d) = daemon else {
        return lines;
    };
    let mechanism = if d.available {
        sanitize(&d.mechanism)
    } else {
        format!(
            "unavailable: {}{}",
            sanitize(d.reason.as_deref().unwrap_or("no reason given")),
            if d.require {
                " (required: commands are refused)"
            } else {
                " (commands run UNCONFINED)"
            }
        )
    };
    lines.push(format!("  enforced  {mechanism}"));
    lines.push(format!(
        "  daemon    [sandbox] mode = {}, network = {}{}",
        d.mode.as_str(),
        d.network,
        if d.writable_roots.is_empty() {
            String::new()
        } else {
            format!(
                ", writable_roots = {}",
                sanitize(&d.writable_roots.join(", "))
            )
        }
    ));
    for gap in &d.gaps {
        lines.push(format!("  note      {}", sanitize(gap)));
    }
    lines.push(
        "  hidden    the daemon's data dir, config dir and socket: never readable or writable"
            .into(),
    );
    lines
}

fn writes(mode: SandboxMode) -> &'static str {
    match mode {
        SandboxMode::ReadOnly => "nowhere but each command's private $TMPDIR",
        SandboxMode::WorkspaceWrite => "the session's directory, the writable roots, $TMPDIR",
        SandboxMode::Full => "anywhere you can (no sandbox)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_reads_in_words_and_an_unconfined_daemon_says_so() {
        let session = SessionSandbox {
            mode: SandboxMode::ReadOnly,
            network: false,
        };
        let daemon = SandboxStatus {
            mode: SandboxMode::WorkspaceWrite,
            network: false,
            writable_roots: vec!["/srv/cache".into()],
            require: false,
            available: false,
            mechanism: "unavailable".into(),
            landlock_abi: None,
            reason: Some("no Landlock".into()),
            gaps: Vec::new(),
        };
        let lines = describe(Some(&session), Some(&daemon));
        assert_eq!(lines[0], "  mode      read-only");
        assert!(lines[1].contains("private $TMPDIR"), "{lines:?}");
        assert_eq!(lines[2], "  network   off");
        assert_eq!(
            lines[3],
            "  enforced  unavailable: no Landlock (commands run UNCONFINED)"
        );
        assert!(
            lines[4].contains("writable_roots = /srv/cache"),
            "{lines:?}"
        );
    }
}

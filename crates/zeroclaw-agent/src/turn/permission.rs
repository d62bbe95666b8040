//! Whether a tool call may run, decided from facts gathered beforehand (`approval.rs`): a
//! pure function, so every source of a decision is one row of a table test.

use super::hooks::HookPermission;
use crate::config::Policy;

/// Everything the decision depends on, for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Facts<'a> {
    /// The tool's name, for the refusal.
    pub tool: &'a str,
    /// Its policy for a person: `[approvals]` (or the tool's default), or its own.
    pub policy: Policy,
    /// The policy is the tool's own (an MCP server's `approve`), not `[approvals]`'s.
    pub own_policy: bool,
    /// The session's `allow_always` list names the tool.
    pub always_allowed: bool,
    /// Why the call's target must be approved whatever the policy (the daemon's own files).
    pub protected: Option<&'a str>,
    /// The run is unattended: nobody can be asked.
    pub unattended: Option<UnattendedFacts<'a>>,
    /// The call asks to run outside the sandbox, for this reason (`bash`'s escape).
    pub escape: Option<&'a str>,
    /// A `PreToolUse` hook's `permissionDecision`: `allow` stands for an `allow` policy,
    /// `ask` for an `ask` one (an unattended run cannot ask: refused); neither lifts a
    /// `deny` policy, a protected target's question or the sandbox's.
    pub hook: Option<HookPermission>,
}

/// An unattended run's rules for the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct UnattendedFacts<'a> {
    /// The run's own table's policy for the tool, if it names it.
    pub named: Option<Policy>,
    /// What the model is told when the run's rules refuse the call.
    pub denied: &'a str,
}

/// What happens to the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Permission {
    Allow,
    /// Refused without asking; what the model is told.
    Deny(String),
    /// The user is asked; why, when the policy alone would not ask (a protected target).
    Ask(Option<String>),
    /// The user is asked whether the call may run outside the sandbox, with the model's
    /// justification; only once or not at all (never "always").
    AskEscape(String),
}

/// The decision for one call.
pub(super) fn decide(facts: &Facts<'_>) -> Permission {
    // Leaving the sandbox is a person's decision, every time: no `allow` policy, no
    // `allow_always`, and no unattended table can give it.
    if let Some(justification) = facts.escape {
        if let Some(unattended) = &facts.unattended {
            return Permission::Deny(format!(
                "{}: a call that asks to run outside the sandbox needs a person's approval",
                unattended.denied
            ));
        }
        if facts.policy == Policy::Deny {
            return Permission::Deny(forbidden(facts));
        }
        return Permission::AskEscape(justification.to_owned());
    }
    if let Some(unattended) = &facts.unattended {
        // Nobody can be asked: the run's own table decides; a tool it does not name follows
        // the person's policy with `ask` turned into `deny`. `ask` waits only for a client
        // that happens to be attached, and a protected target is refused unless the table
        // says `ask`.
        let policy = match (unattended.named, facts.policy) {
            (Some(named), _) => named,
            // The user's own `PreToolUse` hook allowed it: that is the approval.
            (None, Policy::Ask) if facts.hook == Some(HookPermission::Allow) => Policy::Allow,
            (None, Policy::Ask) => Policy::Deny,
            (None, fallback) => fallback,
        };
        let policy = match policy {
            Policy::Ask if facts.always_allowed => Policy::Allow,
            policy => policy,
        };
        let policy = match (facts.hook, policy) {
            (_, Policy::Deny) | (Some(HookPermission::Ask), _) => Policy::Deny,
            (Some(HookPermission::Allow), _) => Policy::Allow,
            (None, policy) => policy,
        };
        if policy == Policy::Deny || (facts.protected.is_some() && policy == Policy::Allow) {
            return Permission::Deny(unattended.denied.to_owned());
        }
        if policy == Policy::Allow {
            return Permission::Allow;
        }
    }
    let policy = if facts.always_allowed {
        Policy::Allow
    } else {
        facts.policy
    };
    let policy = match (facts.hook, policy) {
        (_, Policy::Deny) => Policy::Deny,
        (Some(HookPermission::Allow), _) => Policy::Allow,
        (Some(HookPermission::Ask), _) => Policy::Ask,
        (None, policy) => policy,
    };
    match (policy, facts.protected) {
        (Policy::Deny, _) => Permission::Deny(forbidden(facts)),
        (Policy::Allow, None) => Permission::Allow,
        (_, reason) => Permission::Ask(reason.map(str::to_owned)),
    }
}

/// What the model is told of a tool its policy forbids.
fn forbidden(facts: &Facts<'_>) -> String {
    let tool = facts.tool;
    let setting = if facts.own_policy {
        "its MCP server's `approve`".to_owned()
    } else {
        format!("[approvals] {tool}")
    };
    format!(
        "the daemon's policy forbids {tool} ({setting} = \"deny\"); do not try it again, find another way or tell the user"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use Policy::{Allow, Ask, Deny};

    const DENIED: &str = "denied by the unattended policy of webhook w";
    const FORBIDDEN: &str = "the daemon's policy forbids bash ([approvals] bash = \"deny\"); do not try it again, find another way or tell the user";
    const FORBIDDEN_OWN: &str = "the daemon's policy forbids bash (its MCP server's `approve` = \"deny\"); do not try it again, find another way or tell the user";

    /// A person's call of `bash` with `policy`, nothing else said.
    fn person(policy: Policy) -> Facts<'static> {
        Facts {
            tool: "bash",
            policy,
            own_policy: false,
            always_allowed: false,
            protected: None,
            unattended: None,
            escape: None,
            hook: None,
        }
    }

    /// An unattended run's call whose table says `named` (`None`: does not name the tool).
    fn unattended(named: Option<Policy>, policy: Policy) -> Facts<'static> {
        Facts {
            unattended: Some(UnattendedFacts {
                named,
                denied: DENIED,
            }),
            ..person(policy)
        }
    }

    fn deny(text: &str) -> Permission {
        Permission::Deny(text.to_owned())
    }

    #[test]
    fn every_source_of_a_decision() {
        let protected = Some("reads the daemon's configuration file");
        let ask_why = Permission::Ask(protected.map(str::to_owned));
        let rows: Vec<(&str, Facts<'static>, Permission)> = vec![
            ("the policy allows", person(Allow), Permission::Allow),
            ("the policy asks", person(Ask), Permission::Ask(None)),
            ("[approvals] denies", person(Deny), deny(FORBIDDEN)),
            (
                "a hook allows what the policy asks",
                Facts {
                    hook: Some(HookPermission::Allow),
                    ..person(Ask)
                },
                Permission::Allow,
            ),
            (
                "a hook asks what the policy allows",
                Facts {
                    hook: Some(HookPermission::Ask),
                    always_allowed: true,
                    ..person(Allow)
                },
                Permission::Ask(None),
            ),
            (
                "a hook's allow does not lift a deny policy",
                Facts {
                    hook: Some(HookPermission::Allow),
                    ..person(Deny)
                },
                deny(FORBIDDEN),
            ),
            (
                "a hook's allow does not lift a protected target's question",
                Facts {
                    hook: Some(HookPermission::Allow),
                    protected,
                    ..person(Ask)
                },
                ask_why.clone(),
            ),
            (
                "a hook's allow does not lift the sandbox's question",
                Facts {
                    hook: Some(HookPermission::Allow),
                    escape: Some("needs the network"),
                    ..person(Allow)
                },
                Permission::AskEscape("needs the network".into()),
            ),
            (
                "a hook's allow in an unattended run runs what the table does not name",
                Facts {
                    hook: Some(HookPermission::Allow),
                    ..unattended(None, Ask)
                },
                Permission::Allow,
            ),
            (
                "a hook's allow in an unattended run does not lift the table's deny",
                Facts {
                    hook: Some(HookPermission::Allow),
                    ..unattended(Some(Deny), Ask)
                },
                deny(DENIED),
            ),
            (
                "a hook that asks in an unattended run is a refusal",
                Facts {
                    hook: Some(HookPermission::Ask),
                    ..unattended(Some(Allow), Allow)
                },
                deny(DENIED),
            ),
            (
                "the tool's own policy denies",
                Facts {
                    own_policy: true,
                    ..person(Deny)
                },
                deny(FORBIDDEN_OWN),
            ),
            (
                "allow_always instead of asking",
                Facts {
                    always_allowed: true,
                    ..person(Ask)
                },
                Permission::Allow,
            ),
            (
                "allow_always over a deny",
                Facts {
                    always_allowed: true,
                    ..person(Deny)
                },
                Permission::Allow,
            ),
            (
                "a protected target is asked about though allowed",
                Facts {
                    protected,
                    ..person(Allow)
                },
                ask_why.clone(),
            ),
            (
                "a protected target is asked about though always allowed",
                Facts {
                    protected,
                    always_allowed: true,
                    ..person(Ask)
                },
                ask_why.clone(),
            ),
            (
                "a protected target still denied",
                Facts {
                    protected,
                    ..person(Deny)
                },
                deny(FORBIDDEN),
            ),
            (
                "the unattended table allows",
                unattended(Some(Allow), Ask),
                Permission::Allow,
            ),
            (
                "the unattended table denies",
                unattended(Some(Deny), Allow),
                deny(DENIED),
            ),
            (
                "unattended, not named: the person's allow",
                unattended(None, Allow),
                Permission::Allow,
            ),
            (
                "unattended, not named: the person's ask becomes deny",
                unattended(None, Ask),
                deny(DENIED),
            ),
            (
                "unattended ask: an attached client may answer",
                unattended(Some(Ask), Ask),
                Permission::Ask(None),
            ),
            (
                "unattended ask, then the person's deny",
                unattended(Some(Ask), Deny),
                deny(FORBIDDEN),
            ),
            (
                "unattended ask with allow_always",
                Facts {
                    always_allowed: true,
                    ..unattended(Some(Ask), Deny)
                },
                Permission::Allow,
            ),
            (
                "unattended allow of a protected target",
                Facts {
                    protected,
                    ..unattended(Some(Allow), Allow)
                },
                deny(DENIED),
            ),
            (
                "unattended ask of a protected target",
                Facts {
                    protected,
                    ..unattended(Some(Ask), Allow)
                },
                ask_why,
            ),
            (
                "an escape is asked about though the policy allows",
                Facts {
                    escape: Some("needs the GPU"),
                    ..person(Allow)
                },
                Permission::AskEscape("needs the GPU".into()),
            ),
            (
                "an escape is asked about though always allowed",
                Facts {
                    escape: Some("needs the GPU"),
                    always_allowed: true,
                    ..person(Ask)
                },
                Permission::AskEscape("needs the GPU".into()),
            ),
            (
                "an escape of a denied tool stays denied",
                Facts {
                    escape: Some("needs the GPU"),
                    ..person(Deny)
                },
                deny(FORBIDDEN),
            ),
            (
                "an escape in an unattended run is refused, even allowed",
                Facts {
                    escape: Some("needs the GPU"),
                    ..unattended(Some(Allow), Allow)
                },
                deny(&format!(
                    "{DENIED}: a call that asks to run outside the sandbox needs a person's approval"
                )),
            ),
        ];
        for (source, facts, want) in rows {
            assert_eq!(decide(&facts), want, "{source}");
        }
    }
}

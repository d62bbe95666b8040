//! Approvals: the facts of a call gathered and decided (`permission.rs`); a call whose
//! decision is to ask waits for the user's answer, which any attached client may give with
//! `session/approve`.

use super::hooks::HookPermission;
use super::permission::{Facts, Permission, UnattendedFacts, decide};
use super::step::Turn;
use super::target::Target;
use crate::provider::ToolCall;
use crate::tools::ToolPolicy;
use std::time::Duration;
use zeroclaw_protocol::events::{ApprovalPreview, ApprovalTarget, ResolvedBy};
use zeroclaw_protocol::{Decision, SandboxEscape, Update};

impl Turn<'_> {
    /// Whether `call` may run: by the session's `allow_always` list, the policy, the
    /// unattended run's rules, or the user's answer to an `approval_request`; the refusal
    /// the model is told otherwise. `target` is the call's path, resolved, if it has one;
    /// `preview` what it would do, awaited only when the user is asked.
    pub(super) async fn permission(
        &self,
        call: &ToolCall,
        tool: &dyn crate::tools::DynTool,
        target: Option<&Target>,
        escape: Option<&str>,
        hook: Option<HookPermission>,
        preview: impl Future<Output = Option<ApprovalPreview>>,
    ) -> Result<(), String> {
        let name = call.name.as_str();
        let policy = tool.policy();
        let (policy, own_policy) = match policy {
            ToolPolicy::Configurable(default) => {
                (self.env.config.approvals.policy(name, default), false)
            }
            ToolPolicy::Own(policy) => (policy, true),
        };
        let policy = self.mode_policy(policy, tool, target);
        let denied = self.origin.unattended.as_ref().map(|u| u.denied());
        let facts = Facts {
            tool: name,
            policy,
            own_policy,
            always_allowed: self.session.is_always_allowed(name),
            protected: target.and_then(|t| t.protected.as_deref()),
            unattended: self.origin.unattended.as_ref().zip(denied.as_deref()).map(
                |(unattended, denied)| UnattendedFacts {
                    named: unattended.approve.get(name).copied(),
                    denied,
                },
            ),
            escape,
            hook,
        };
        match decide(&facts) {
            Permission::Allow => Ok(()),
            Permission::Deny(refusal) => Err(refusal),
            Permission::Ask(reason) => self.ask(call, target, reason, None, preview).await,
            Permission::AskEscape(justification) => {
                let escape = SandboxEscape { justification };
                self.ask(call, target, None, Some(escape), preview).await
            }
        }
    }

    /// Sends an `approval_request` for `call` and waits for the answer (the turn's
    /// cancellation and the approval timeout end the wait: a refusal).
    pub(super) async fn ask(
        &self,
        call: &ToolCall,
        target: Option<&Target>,
        reason: Option<String>,
        escape: Option<SandboxEscape>,
        preview: impl Future<Output = Option<ApprovalPreview>>,
    ) -> Result<(), String> {
        let name = call.name.as_str();
        let preview = preview.await.map(Box::new);
        // Leaving the sandbox is allowed once at a time: "always" is not offered, and an
        // `allow_always` sent anyway counts as once (`decide` never consults the list).
        // An `exit_plan` question is about this one plan (`exit_plan.rs`): once too.
        let escaping = escape.is_some() || name == super::exit_plan::EXIT_PLAN;
        let options = if escaping {
            vec![Decision::AllowOnce, Decision::Reject]
        } else {
            Decision::ALL.to_vec()
        };
        let request_id = uuid::Uuid::new_v4().to_string();
        let request = Update::ApprovalRequest {
            request_id: request_id.clone(),
            tool_call_id: call.id.clone(),
            name: name.to_owned(),
            raw_input: call.raw_input(),
            options,
            target: target.map(|t| ApprovalTarget {
                path: t.path.display().to_string(),
                outside_cwd: t.outside_cwd,
            }),
            reason,
            preview,
            escape,
        };
        // Registered and sent as one step, so a connection joining now gets it once.
        let answer = self.session.send_registered(
            self.id(),
            request,
            |frame| self.active.add_approval(&request_id, frame.cloned()),
            |forwarded| self.active.set_forwarded(&request_id, forwarded),
        );
        let timeout = Duration::from_secs(self.env.config.approvals.timeout_secs);
        // Cancel first: an answer that arrives after the turn was told to stop does not run
        // the call.
        let decision = tokio::select! {
            biased;
            () = self.active.cancel.cancelled() => {
                self.active.remove_approval(&request_id);
                self.resolved(&request_id, Decision::Reject, ResolvedBy::Cancelled);
                return Err("the turn was cancelled before this call was approved; it did not run".into());
            }
            decision = answer => decision.ok(),
            () = tokio::time::sleep(timeout) => {
                self.active.remove_approval(&request_id);
                self.resolved(&request_id, Decision::Reject, ResolvedBy::Timeout);
                return Err(format!(
                    "nobody answered the approval request within {} s, so this {name} call was refused",
                    timeout.as_secs()
                ));
            }
        };
        match decision {
            Some(decision) => self.resolved(&request_id, decision, ResolvedBy::Client),
            None => self.resolved(&request_id, Decision::Reject, ResolvedBy::Cancelled),
        }
        match decision {
            Some(Decision::AllowOnce) => Ok(()),
            Some(Decision::AllowAlways) if escaping => Ok(()),
            Some(Decision::AllowAlways) => {
                let list = self.session.allow_always(name);
                if let Err(e) = self
                    .env
                    .store
                    .set_always_allow(&self.session.id, list)
                    .await
                {
                    tracing::warn!(error = %e, "could not store an allow_always decision; it holds until the daemon stops");
                }
                Ok(())
            }
            Some(Decision::Reject) => Err(format!(
                "the user rejected this {name} call; it did not run. Do not retry it unchanged; ask the user or try another approach"
            )),
            None => Err("the approval request was dropped; the call did not run".into()),
        }
    }

    /// Tells every attached client that approval request `request_id` is settled, so each
    /// removes its prompt at once; sent before the call runs or is refused, so before its
    /// `tool_result`.
    fn resolved(&self, request_id: &str, decision: Decision, by: ResolvedBy) {
        self.session.broadcast(
            self.id(),
            Update::ApprovalResolved {
                request_id: request_id.to_owned(),
                decision,
                by,
            },
        );
    }
}

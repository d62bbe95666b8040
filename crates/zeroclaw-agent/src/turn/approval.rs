//! Approvals: a tool call whose policy is `ask` waits for the user's decision, which any
//! attached client may give with `session/approve`. So does a call that reaches the
//! daemon's own files (`target.rs`), whatever its policy short of `deny`.

use super::step::Turn;
use super::target::Target;
use crate::provider::ToolCall;
use std::time::Duration;
use zeroclaw_protocol::events::{ApprovalPreview, ApprovalTarget};
use zeroclaw_protocol::{Decision, Update};

impl Turn<'_> {
    /// Whether `call` may run: by the session's `allow_always` list, the daemon's policy, or
    /// the user's answer to an `approval_request`; the refusal the model is told otherwise.
    /// `target` is the call's path, resolved, if it has one; `preview` what it would do,
    /// awaited only when the user is asked.
    pub(super) async fn permission(
        &self,
        call: &ToolCall,
        target: Option<&Target>,
        own: Option<crate::config::Policy>,
        preview: impl Future<Output = Option<ApprovalPreview>>,
    ) -> Result<(), String> {
        use crate::config::Policy;
        let name = call.name.as_str();
        let fallback = own.unwrap_or_else(|| self.env.config.approvals.policy(name));
        if let Some(unattended) = &self.origin.unattended {
            // Nobody can be asked: the run's own table decides, `ask` waits only for a
            // client that happens to be attached, and a protected target is refused
            // unless the table says `ask`.
            let policy = match unattended.policy(name, fallback) {
                Policy::Ask if self.session.is_always_allowed(name) => Policy::Allow,
                policy => policy,
            };
            let protected = target.is_some_and(|t| t.protected.is_some());
            if policy == Policy::Deny || (protected && policy == Policy::Allow) {
                return Err(unattended.denied());
            }
            if policy == Policy::Allow {
                return Ok(());
            }
        }
        let policy = if self.session.is_always_allowed(name) {
            Policy::Allow
        } else {
            fallback
        };
        if policy == Policy::Deny {
            let setting = match own {
                Some(_) => "its MCP server's `approve`".to_owned(),
                None => format!("[approvals] {name}"),
            };
            return Err(format!(
                "the daemon's policy forbids {name} ({setting} = \"deny\"); do not try it again, find another way or tell the user"
            ));
        }
        let reason = target.and_then(|t| t.protected.clone());
        if reason.is_none() && policy == Policy::Allow {
            return Ok(());
        }
        let preview = preview.await.map(Box::new);
        let request_id = uuid::Uuid::new_v4().to_string();
        let request = Update::ApprovalRequest {
            request_id: request_id.clone(),
            tool_call_id: call.id.clone(),
            name: name.to_owned(),
            raw_input: call.raw_input(),
            options: Decision::ALL.to_vec(),
            target: target.map(|t| ApprovalTarget {
                path: t.path.display().to_string(),
                outside_cwd: t.outside_cwd,
            }),
            reason,
            preview,
        };
        // Registered and sent as one step, so a connection joining now gets it once.
        let answer = self.session.send_registered(self.id(), request, |frame| {
            self.active.add_approval(&request_id, frame.cloned())
        });
        let timeout = Duration::from_secs(self.env.config.approvals.timeout_secs);
        // Cancel first: an answer that arrives after the turn was told to stop does not run
        // the call.
        let decision = tokio::select! {
            biased;
            () = self.active.cancel.cancelled() => {
                self.active.remove_approval(&request_id);
                return Err("the turn was cancelled before this call was approved; it did not run".into());
            }
            decision = answer => decision.ok(),
            () = tokio::time::sleep(timeout) => {
                self.active.remove_approval(&request_id);
                return Err(format!(
                    "nobody answered the approval request within {} s, so this {name} call was refused",
                    timeout.as_secs()
                ));
            }
        };
        match decision {
            Some(Decision::AllowOnce) => Ok(()),
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
}

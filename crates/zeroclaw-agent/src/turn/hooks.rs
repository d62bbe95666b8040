//! The hooks in a session's life (docs/project.md): which event fires where, what each
//! hook is given on stdin, and its run recorded as a `hook` message and a `hook_result`
//! event. What a run decides is `project/hooks.rs`'s `judge`; what the agent does with it
//! is at each event's seam:
//!
//! | event | where | exit 2 / `block` |
//! |---|---|---|
//! | `SessionStart` | `session/new`, `session/load` of a session not in memory ([`session_start`]) | shown only |
//! | `UserPromptSubmit` | the turn's start (`step.rs`, `before_turn`) | the prompt rejected: no model call |
//! | `PreToolUse` | a tool call, before its approval (`step.rs`, `call_tool`) | the call refused, the reason its result |
//! | `PostToolUse` | after a call that ran | the reason added to its result |
//! | `Stop` | the model ends its turn (`step.rs`, `steps`) | one more step, the reason sent as the user's |
//! | `PreCompact` | before a compaction writes its summary (`compact.rs`) | shown only |
//!
//! Hooks of one event run one after the other, in the order configured (the user's first),
//! and the first that blocks or denies ends the event's run.

use super::Env;
use crate::project::hooks::{self, Hook, HookEvent, RunIn, Verdict};
use crate::project::{self, UserSide};
use crate::session::Session;
use crate::store::{MessageKind, NewMessage, StoreError};
use serde_json::{Map, Value, json};
use std::path::Path;
use zeroclaw_protocol::Update;
use zeroclaw_protocol::events::HookResult;

impl Env<'_> {
    /// Where a session's project context comes from on the user's side.
    pub fn user_side(&self) -> UserSide {
        UserSide {
            config_dir: self.dirs.config_dir().to_path_buf(),
            data_dir: self.dirs.data_dir.clone(),
            hooks: self.config.hooks.clone(),
        }
    }

    /// The project of `session`, read now.
    pub async fn project(&self, session: &Session) -> project::Loaded {
        project::load_async(
            self.user_side(),
            session.cwd.clone().into(),
            self.project_files.clone(),
        )
        .await
    }
}

/// The tool call a hook is about.
#[derive(Clone, Copy)]
pub(super) struct CallRef<'a> {
    pub id: &'a str,
    pub name: &'a str,
}

/// One event's hooks to run, and where their runs are recorded.
pub(super) struct Fire<'a> {
    pub env: Env<'a>,
    pub session: &'a Session,
    /// The turn the runs belong to; `None` outside a turn.
    pub turn_id: Option<&'a str>,
    pub step: i64,
    pub project_root: &'a Path,
    pub event: HookEvent,
    pub call: Option<CallRef<'a>>,
}

impl Fire<'_> {
    /// Runs `hooks` with the event's own members `fields` added to the common ones, records
    /// each run, and returns each verdict with its hook; stops after the first that blocks
    /// or denies.
    pub async fn run(
        &self,
        hooks: Vec<Hook>,
        fields: Value,
    ) -> Result<Vec<(Hook, Verdict)>, StoreError> {
        if hooks.is_empty() {
            return Ok(Vec::new());
        }
        let input = self.input(fields);
        // As for `bash`: the daemon's secrets kept out of what the hook can read.
        #[cfg(unix)]
        crate::tools::scrub::protect_process_files();
        let removed = crate::state::scrub(self.env.config).removed();
        let cwd = std::path::PathBuf::from(&self.session.cwd);
        let at = RunIn {
            cwd: &cwd,
            project_root: self.project_root,
            removed: &removed,
        };
        let mut verdicts = Vec::new();
        for hook in hooks {
            let ran = hooks::run(&hook, &input, &at).await;
            let verdict = hooks::judge(self.event, &ran);
            self.record(&hook, &ran, &verdict).await?;
            let last = matches!(verdict, Verdict::Block(_) | Verdict::Deny(_));
            verdicts.push((hook, verdict));
            if last {
                break;
            }
        }
        Ok(verdicts)
    }

    /// The JSON on a hook's stdin: `session_id`, `cwd`, `hook_event_name`, then `fields`.
    fn input(&self, fields: Value) -> Value {
        let mut input = Map::new();
        input.insert("session_id".into(), json!(self.session.id));
        input.insert("cwd".into(), json!(self.session.cwd));
        input.insert("hook_event_name".into(), json!(self.event.name()));
        if let Value::Object(fields) = fields {
            input.extend(fields);
        }
        Value::Object(input)
    }

    /// Stores the run as a `hook` message, then sends its `hook_result`.
    async fn record(
        &self,
        hook: &Hook,
        ran: &hooks::Ran,
        verdict: &Verdict,
    ) -> Result<(), StoreError> {
        let (message, context) = match verdict {
            Verdict::Continue { context } => (None, context.clone()),
            Verdict::Block(m) | Verdict::Deny(m) | Verdict::Error(m) => (Some(m.clone()), None),
            Verdict::Allow | Verdict::Ask => (None, None),
        };
        let result = HookResult {
            event: self.event.name().to_owned(),
            command: hook.config.command.clone(),
            source: hook.source.name().to_owned(),
            exit_code: ran.exit_code,
            duration_ms: u64::try_from(ran.duration.as_millis()).unwrap_or(u64::MAX),
            tool_call_id: self.call.map(|c| c.id.to_owned()),
            tool_name: self.call.map(|c| c.name.to_owned()),
            outcome: verdict.outcome().to_owned(),
            timed_out: ran.timed_out,
            message,
            context,
        };
        if let Verdict::Error(_) = verdict {
            // Not its stderr, which is the hook's to say (it is in the event and the
            // history): the log gets no text a script printed.
            tracing::warn!(
                session = %self.session.id,
                event = self.event.name(),
                exit_code = ?ran.exit_code,
                timed_out = ran.timed_out,
                "a hook failed"
            );
        }
        let message = NewMessage {
            turn_id: self.turn_id.map(str::to_owned),
            step: self.step,
            text: result.message.clone(),
            tool_call_id: result.tool_call_id.clone(),
            tool_name: result.tool_name.clone(),
            data: Some(serde_json::to_value(&result).unwrap_or(Value::Null)),
            is_error: matches!(verdict, Verdict::Error(_)),
            ..NewMessage::default()
        };
        let row = self
            .env
            .store
            .append(&self.session.id, MessageKind::Hook, message)
            .await?;
        let update = Update::HookResult(Box::new(result));
        match self.turn_id {
            Some(turn_id) => self.session.send_stored(turn_id, row, update),
            None => self.session.send_stored_outside_turns(row, update),
        }
        Ok(())
    }
}

/// Runs the session's `SessionStart` hooks (`source`: `startup` for `session/new`,
/// `resume` for a session loaded back into memory). Their stdout goes into the system
/// prompt of the session's turns (`history::session_context`). Never fails: a storage
/// error is logged.
pub async fn session_start(env: Env<'_>, session: &Session, source: &str) {
    let loaded = env.project(session).await;
    let hooks = loaded.hooks.matching(HookEvent::SessionStart, Some(source));
    let fire = Fire {
        env,
        session,
        turn_id: None,
        step: 0,
        project_root: &loaded.project.root,
        event: HookEvent::SessionStart,
        call: None,
    };
    if let Err(e) = fire.run(hooks, json!({ "source": source })).await {
        tracing::error!(error = %e, session = %session.id, "could not store a SessionStart hook's run");
    }
}

/// What a `PreToolUse` hook said of a call's approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HookPermission {
    /// Run without asking (the sandbox, a protected target and a `deny` policy still hold).
    Allow,
    /// Ask the user whatever the policy says.
    Ask,
}

/// Of one `PreToolUse` event's verdicts: the refusal, if one refused; else `ask` if any
/// said so, else `allow` if any did.
pub(super) fn pre_tool_outcome(
    verdicts: &[(Hook, Verdict)],
) -> Result<Option<HookPermission>, String> {
    let mut permission = None;
    for (hook, verdict) in verdicts {
        match verdict {
            Verdict::Block(why) | Verdict::Deny(why) => {
                return Err(format!(
                    "the PreToolUse hook `{}` blocked this call; it did not run: {why}",
                    hook.config.command
                ));
            }
            Verdict::Ask => permission = Some(HookPermission::Ask),
            Verdict::Allow if permission.is_none() => permission = Some(HookPermission::Allow),
            _ => {}
        }
    }
    Ok(permission)
}

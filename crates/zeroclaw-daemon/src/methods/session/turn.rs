//! A session's turns: `session/prompt` (starts one and answers when it ends),
//! `session/cancel`, `session/approve` (a pending approval request's decision),
//! `session/steer` (a message added to the running turn).

use super::{attached, cut};
use crate::methods::errors::{start_error, turn_error};
use crate::methods::{Ctx, Handle, Reply};
use serde_json::json;
use zeroclaw_agent::prompt::Prompt;
use zeroclaw_agent::provider::images;
use zeroclaw_agent::session::{Session, SteerRefused};
use zeroclaw_agent::turn::{self, Origin};
use zeroclaw_protocol::codes;
use zeroclaw_protocol::methods::{self as m, *};
use zeroclaw_rpc::RpcError;

impl Handle for m::SessionPrompt {
    fn handle(ctx: Ctx, p: PromptParams) -> Reply<PromptResult> {
        // The checks and the start run inline, in frame order: a second prompt right behind
        // the first is answered -32002 deterministically.
        if p.prompt.trim().is_empty() && p.content.is_empty() {
            return Reply::Now(Err(RpcError::invalid_params("`prompt` is empty")));
        }
        let conn = &ctx.0;
        let daemon = conn.daemon.clone();
        if daemon.shutdown.is_cancelled() {
            return Reply::Now(Err(RpcError::internal("the daemon is shutting down")));
        }
        let session = match attached(&ctx, &p.session_id) {
            Ok(session) => session,
            Err(refused) => return refused.reply(),
        };
        let prompt = match Prompt::from_content(p.prompt, p.content) {
            Ok(prompt) => prompt,
            Err(problem) => return Reply::Now(Err(RpcError::invalid_params(problem))),
        };
        if !prompt.images.is_empty() {
            let model = session.model();
            if !images::takes_images(&daemon.agent.config.provider, &model) {
                return Reply::Now(Err(RpcError::invalid_params(format!(
                    "the model {model:?} does not take images; send the prompt without them, \
                     switch to a model that does (session/set_model), or set \
                     `[provider] images = true` if this one does"
                ))));
            }
        }
        let origin = Origin {
            peer: Some(conn.link.clone()),
            elicitation: conn.hello.get().is_some_and(|h| h.elicitation),
            unattended: None,
            fs: conn.hello.get().map(|h| h.fs).unwrap_or_default(),
        };
        let answer = match turn::start(&daemon.agent, session, origin, prompt) {
            Ok(answer) => answer,
            Err(e) => return Reply::Now(Err(start_error(e))),
        };
        Reply::later(async move {
            match answer.await {
                Ok(outcome) => outcome
                    .map(|result| fit_text(result, daemon.config.daemon.max_frame_bytes / 4))
                    .map_err(|e| turn_error(&e, &daemon.agent.provider)),
                Err(_) => Err(RpcError::internal(
                    "the turn ended without a result; see the daemon log",
                )),
            }
        })
    }
}

/// Cuts the answer's `text` to `max` bytes, saying so: the whole text is in the turn's
/// events and its history, and a result must fit in one frame.
fn fit_text(mut result: PromptResult, max: usize) -> PromptResult {
    if let Some(text) = cut(&result.text, max) {
        result.text = text;
        result.text_truncated = true;
    }
    result
}

impl Handle for m::SessionCancel {
    fn handle(ctx: Ctx, p: SessionIdParams) -> Reply<CancelResult> {
        let session = match attached(&ctx, &p.session_id) {
            Ok(session) => session,
            Err(refused) => return refused.reply(),
        };
        let cancelled = match session.active_turn() {
            Some(turn) => {
                turn.cancel.cancel();
                true
            }
            None => false,
        };
        Reply::Now(Ok(CancelResult { cancelled }))
    }
}

impl Handle for m::SessionApprove {
    fn handle(ctx: Ctx, p: ApproveParams) -> Reply<Empty> {
        match attached(&ctx, &p.session_id) {
            Ok(session) => approve(&session, p).into(),
            Err(refused) => refused.reply(),
        }
    }
}

fn approve(session: &Session, p: ApproveParams) -> Result<Empty, RpcError> {
    let decided = session
        .active_turn()
        .is_some_and(|turn| turn.decide(&p.request_id, p.decision));
    if !decided {
        return Err(RpcError::invalid_params(format!(
            "no approval request {:?} is pending in session {:?}; it may have been answered, timed out or cancelled",
            p.request_id, p.session_id
        ))
        .with_data(json!({ "requestId": p.request_id })));
    }
    Ok(Empty {})
}

impl Handle for m::SessionSteer {
    fn handle(ctx: Ctx, p: SteerParams) -> Reply<SteerResult> {
        // Checked inline, in frame order: a steer right behind a prompt finds its turn.
        match attached(&ctx, &p.session_id) {
            Ok(session) => steer(&session, p).into(),
            Err(refused) => refused.reply(),
        }
    }
}

/// Queues `p.text` for the running turn's next step (`zeroclaw_agent::session::steer`).
fn steer(session: &Session, p: SteerParams) -> Result<SteerResult, RpcError> {
    if p.text.trim().is_empty() {
        return Err(RpcError::invalid_params("`text` is empty"));
    }
    if p.text.len() > MAX_STEER_BYTES {
        return Err(RpcError::invalid_params(format!(
            "`text` is {} bytes; a steer message holds at most {MAX_STEER_BYTES}",
            p.text.len()
        ))
        .with_data(json!({ "limit": MAX_STEER_BYTES })));
    }
    let no_turn = || {
        RpcError::new(
            codes::NO_TURN_RUNNING,
            format!(
                "no turn is running in session {:?}; send the message with session/prompt",
                p.session_id
            ),
        )
    };
    let Some(turn) = session.active_turn() else {
        return Err(no_turn());
    };
    match turn.steer(p.text) {
        Ok(()) => Ok(SteerResult { turn_id: turn.id.clone() }),
        Err(SteerRefused::Ended) => Err(no_turn().with_data(json!({ "turnId": turn.id }))),
        Err(SteerRefused::Full) => Err(RpcError::invalid_params(format!(
            "{MAX_PENDING_STEERS} steer messages already wait for turn {}'s next step; wait for it to take them",
            turn.id
        ))
        .with_data(json!({ "limit": MAX_PENDING_STEERS, "turnId": turn.id }))),
    }
}

//! `session/compact`: folds a session's older messages into a summary on demand.

use super::attached;
use crate::methods::errors::{provider_error, start_error, storage};
use crate::methods::{Ctx, Handle, Reply};
use std::sync::Arc;
use zeroclaw_agent::provider::window::context_window;
use zeroclaw_agent::session::{ActiveTurn, Session};
use zeroclaw_agent::turn::{CompactError, CompactMode, Compaction, Env, StartError};
use zeroclaw_protocol::UsageTotals;
use zeroclaw_protocol::codes;
use zeroclaw_protocol::methods::{self as m, CompactResult, SessionIdParams};
use zeroclaw_rpc::RpcError;

impl Handle for m::SessionCompact {
    fn handle(ctx: Ctx, p: SessionIdParams) -> Reply<CompactResult> {
        let session = match attached(&ctx, &p.session_id) {
            Ok(session) => session,
            Err(refused) => return refused.reply(),
        };
        Reply::later(compact(ctx, session))
    }
}

/// Holds the session's turn slot while it compacts, so no prompt starts meanwhile (and
/// `session/cancel` stops it); released however the compaction ends.
struct Slot {
    session: Arc<Session>,
    turn: Arc<ActiveTurn>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.session.clear_turn(&self.turn.id);
        self.turn.finished.cancel();
    }
}

async fn compact(ctx: Ctx, session: Arc<Session>) -> Result<CompactResult, RpcError> {
    let daemon = &ctx.0.daemon;
    let turn = ActiveTurn::new(format!("compact-{}", uuid::Uuid::new_v4()));
    session.try_start(turn.clone()).map_err(|running| {
        start_error(StartError::Busy {
            session_id: session.id.clone(),
            running,
        })
    })?;
    let slot = Slot {
        session: session.clone(),
        turn,
    };
    let model = session.model();
    let compaction = Compaction {
        env: Env::of(&daemon.agent),
        session: &session,
        model: &model,
        turn_id: None,
        cancel: &slot.turn.cancel,
        window: context_window(daemon.config.agent.provider.context_window, &model),
        provider_log: None,
    };
    let mut spent = Vec::new();
    let outcome = compaction.run(CompactMode::Forced, &mut spent).await;
    drop(slot);
    // No turn holds these calls: the answer says what they used.
    let usage = spent.iter().fold(None, |sum: Option<UsageTotals>, call| {
        let mut sum = sum.unwrap_or_default();
        sum.add(call);
        Some(sum)
    });
    match outcome {
        Ok(None) => Ok(CompactResult {
            messages_folded: 0,
            summary: None,
            usage,
        }),
        Ok(Some(done)) => Ok(CompactResult {
            messages_folded: done.folded,
            summary: Some(done.summary),
            usage,
        }),
        Err(CompactError::Cancelled) => Err(RpcError::new(
            codes::SESSION_BUSY,
            "the compaction was cancelled (session/cancel); nothing was changed",
        )),
        Err(CompactError::Provider(e)) => {
            Err(provider_error(&e, &daemon.agent.provider, &model, None))
        }
        Err(CompactError::Storage(e)) => Err(storage(e)),
    }
}

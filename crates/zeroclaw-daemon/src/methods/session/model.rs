//! `session/set_model`: the model of a session's next turns.
//!
//! The caller must be attached (so the session is in memory while it changes). The model is
//! stored first, then set on the live session: a turn takes the session's model when it
//! starts, so a running turn (or compaction) ends with the model it began with and the next
//! one uses the new model.

use super::{MAX_MODEL_BYTES, attached, bounded, not_found};
use crate::methods::errors::storage;
use crate::methods::{Ctx, Handle, Reply};
use zeroclaw_protocol::methods::{self as m, SetModelParams, SetModelResult};
use zeroclaw_rpc::RpcError;

impl Handle for m::SessionSetModel {
    fn handle(ctx: Ctx, p: SetModelParams) -> Reply<SetModelResult> {
        if let Err(e) = check(&p.model) {
            return Reply::Now(Err(e));
        }
        let session = match attached(&ctx, &p.session_id) {
            Ok(session) => session,
            Err(refused) => return refused.reply(),
        };
        Reply::later(async move {
            let _one_at_a_time = session.model_change.lock().await;
            let stored = ctx
                .0
                .daemon
                .agent
                .sessions
                .store
                .set_session_model(&session.id, &p.model)
                .await
                .map_err(storage)?;
            if !stored {
                // Deleted meanwhile (`session/delete` needs no attachment).
                return Err(not_found(&session.id));
            }
            let previous = session.set_model(p.model.clone());
            tracing::info!(session = %session.id, model = %p.model, %previous, "session model set");
            Ok(SetModelResult {
                model: p.model,
                previous,
            })
        })
    }
}

/// As `session/new` bounds its `model`; blank is refused here (there it means "the
/// configured one"), since a blank model cannot be what the caller wants set.
fn check(model: &str) -> Result<(), RpcError> {
    bounded("model", Some(model), MAX_MODEL_BYTES)?;
    if model.trim().is_empty() {
        return Err(RpcError::invalid_params(
            "`model` is blank; name a model (`status` shows the configured one)",
        ));
    }
    if model.chars().any(char::is_control) {
        return Err(RpcError::invalid_params(
            "`model` contains a control character (a newline, tab, …)",
        ));
    }
    Ok(())
}

//! `session/usage`: a session's token usage and cost so far, summed from the store (a
//! running turn's calls so far included, as each is stored when it ends), so the totals
//! survive restarts. Any connection may ask, attached or not, as it may read the history.

use super::not_found;
use crate::methods::errors::storage;
use crate::methods::{Ctx, Handle, Reply};
use zeroclaw_agent::provider::window;
use zeroclaw_protocol::methods::{self as m, SessionIdParams, SessionUsageResult};

impl Handle for m::SessionUsage {
    fn handle(ctx: Ctx, p: SessionIdParams) -> Reply<SessionUsageResult> {
        Reply::later(async move {
            let daemon = &ctx.0.daemon;
            let store = &daemon.agent.sessions.store;
            let Some(row) = store.session(&p.session_id).await.map_err(storage)? else {
                return Err(not_found(&p.session_id));
            };
            let usage = store.session_usage(&row.id).await.map_err(storage)?;
            let provider = &daemon.agent.config.provider;
            let configured = provider.context_window;
            Ok(SessionUsageResult {
                session_id: row.id,
                totals: usage.totals,
                currency: provider.pricing.map(|p| p.currency.to_string()),
                turns: usage.turns,
                context_used: usage.context_used,
                context_size: window::context_window(configured, &row.model),
            })
        })
    }
}

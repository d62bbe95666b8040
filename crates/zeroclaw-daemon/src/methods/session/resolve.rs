//! `session/resolve`: an id prefix, as clients show ids, to the one session it names. Every
//! client command that takes an id resolves it here first, so a prefix copied from a list
//! works wherever an id does, and the rule (how short, what an ambiguous one answers) is
//! the daemon's alone.

use super::not_found;
use crate::methods::errors::storage;
use crate::methods::{Ctx, Handle, Reply};
use serde_json::json;
use zeroclaw_protocol::methods::{self as m, MIN_ID_PREFIX, ResolveParams, ResolveResult};
use zeroclaw_rpc::RpcError;

/// The candidates an ambiguous prefix's error lists; more are counted, not listed.
const MAX_CANDIDATES: usize = 10;

impl Handle for m::SessionResolve {
    fn handle(ctx: Ctx, p: ResolveParams) -> Reply<ResolveResult> {
        Reply::later(async move {
            let prefix = p.prefix.trim();
            if prefix.chars().count() < MIN_ID_PREFIX {
                return Err(RpcError::invalid_params(format!(
                    "`prefix` {prefix:?} is shorter than {MIN_ID_PREFIX} characters; give more of the id"
                ))
                .with_data(json!({ "prefix": prefix })));
            }
            let mut ids = ctx
                .0
                .daemon
                .agent
                .sessions
                .store
                .session_ids_with_prefix(prefix, MAX_CANDIDATES + 1)
                .await
                .map_err(storage)?;
            match ids.len() {
                0 => Err(not_found(prefix)),
                1 => Ok(ResolveResult {
                    session_id: ids.remove(0),
                }),
                n => {
                    let more = n > MAX_CANDIDATES;
                    ids.truncate(MAX_CANDIDATES);
                    let listed = ids.join(", ");
                    let tail = if more { ", …" } else { "" };
                    Err(RpcError::invalid_params(format!(
                        "{prefix:?} starts more than one session id ({listed}{tail}); give more of it"
                    ))
                    .with_data(json!({ "prefix": prefix, "candidates": ids, "more": more })))
                }
            }
        })
    }
}

//! `token/create`, `token/list`, `token/revoke`, `dashboard/link`: the gateway's
//! credentials, minted and ended over the local socket only (the method table says so).

use super::{Ctx, Handle, Reply};
use crate::auth::TokenError;
use serde_json::json;
use zeroclaw_protocol::{
    DashboardLinkResult, GatewayStatus, NoParams, TokenCreateParams, TokenCreated, TokenListResult,
    TokenRevokeParams, TokenRevokeResult, codes, methods as m,
};
use zeroclaw_rpc::RpcError;

fn token_error(e: TokenError) -> RpcError {
    match e {
        TokenError::Invalid(message) => RpcError::invalid_params(message),
        TokenError::Exists(name) => RpcError::new(
            codes::INVALID_PARAMS,
            format!("a token named {name:?} exists; revoke it first or choose another name"),
        )
        .with_data(json!({ "name": name })),
        TokenError::Store(e) => super::errors::storage(e),
    }
}

impl Handle for m::TokenCreate {
    fn handle(ctx: Ctx, p: TokenCreateParams) -> Reply<TokenCreated> {
        Reply::later(async move {
            ctx.0
                .daemon
                .tokens
                .create(&p.name, p.scope.unwrap_or_default(), p.expires_in)
                .await
                .map_err(token_error)
        })
    }
}

impl Handle for m::TokenList {
    fn handle(ctx: Ctx, _: NoParams) -> Reply<TokenListResult> {
        Reply::Now(Ok(TokenListResult {
            tokens: ctx.0.daemon.tokens.list(),
        }))
    }
}

impl Handle for m::TokenRevoke {
    fn handle(ctx: Ctx, p: TokenRevokeParams) -> Reply<TokenRevokeResult> {
        Reply::later(async move {
            let revoked = ctx
                .0
                .daemon
                .tokens
                .revoke(&p.name)
                .await
                .map_err(token_error)?;
            Ok(TokenRevokeResult { revoked })
        })
    }
}

impl Handle for m::DashboardLink {
    fn handle(ctx: Ctx, _: NoParams) -> Reply<DashboardLinkResult> {
        let daemon = &ctx.0.daemon;
        let url = match daemon.gateway.get().cloned().flatten() {
            Some(GatewayStatus::Up { url, .. }) => url,
            Some(GatewayStatus::Down { error }) => {
                return Reply::Now(Err(RpcError::new(
                    codes::NOT_ALLOWED,
                    format!(
                        "the gateway is not serving ({error}), so there is nothing to log in to"
                    ),
                )));
            }
            None => {
                return Reply::Now(Err(RpcError::new(
                    codes::NOT_ALLOWED,
                    "the gateway is off (--no-gateway, --ephemeral or gateway.enabled = false)",
                )));
            }
        };
        Reply::Now(
            daemon
                .tokens
                .new_code()
                .map(|(code, expires)| DashboardLinkResult {
                    url: format!("{url}/login#code={code}"),
                    expires_at: humantime::format_rfc3339_seconds(expires).to_string(),
                })
                .map_err(token_error),
        )
    }
}

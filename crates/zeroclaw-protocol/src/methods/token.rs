//! The gateway's credentials, over the local socket only: `token/create`, `token/list`,
//! `token/revoke` and `dashboard/link`; with the scopes a token may have.

use super::NoParams;
use serde::{Deserialize, Serialize};

method!(
    /// Mints a gateway token (socket only); the secret is in the answer, once.
    TokenCreate, "token/create", TokenCreateParams, TokenCreated
);
method!(
    /// The gateway tokens, without their secrets (socket only).
    TokenList, "token/list", NoParams, TokenListResult
);
method!(
    /// Revokes a gateway token by name, ending its connections (socket only).
    TokenRevoke, "token/revoke", TokenRevokeParams, TokenRevokeResult
);
method!(
    /// A one-time dashboard login link (socket only).
    DashboardLink, "dashboard/link", NoParams, DashboardLinkResult
);

/// The longest token name, in bytes.
pub const TOKEN_NAME_MAX: usize = 64;

/// The rule for a token's name, in the words help and errors use.
pub const TOKEN_NAME_RULE: &str = "1 to 64 letters, digits, '-', '_', '.', ':' or '+'";

/// Whether `name` may name a token: the one rule `token/create` and `token/revoke` (and the
/// CLI's help and docs/gateway.md) follow. Dashboard sessions' names (`dashboard-…`) pass it.
pub fn check_token_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= TOKEN_NAME_MAX
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '+'));
    if ok {
        Ok(())
    } else {
        Err(format!("a token name is {TOKEN_NAME_RULE}; got {name:?}"))
    }
}

/// What a gateway token may do. Each scope includes the ones before it.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// `status`, the session list, a session's messages and live events.
    Read,
    /// `read`, plus creating, prompting, cancelling, approving, answering, deleting.
    #[default]
    Operate,
    /// `operate`, plus `shutdown`.
    Admin,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Read, Scope::Operate, Scope::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Operate => "operate",
            Scope::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Scope::ALL.into_iter().find(|scope| scope.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokenCreateParams {
    /// Unique among the tokens; letters, digits, `-`, `_`, `.`; at most 64 characters.
    pub name: String,
    /// `operate` if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Seconds until it expires; it never does if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TokenCreated {
    pub name: String,
    /// The secret: shown once, stored only as its SHA-256.
    pub token: String,
    pub scope: Scope,
    /// RFC 3339; `null` for a token that never expires.
    pub expires_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TokenListResult {
    pub tokens: Vec<TokenInfo>,
}

/// One token or dashboard session, as `token/list` shows it: never its secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TokenInfo {
    pub name: String,
    /// `token` (minted by `token/create`) or `dashboard` (a browser's dashboard session).
    #[serde(default)]
    pub kind: TokenKind,
    pub scope: Scope,
    pub created_at: String,
    pub last_used_at: Option<String>,
    /// A token's expiry (`null`: never); a dashboard session's is when it ends if unused
    /// from now on: the earlier of its idle and absolute limits.
    pub expires_at: Option<String>,
}

/// What a `token/list` entry is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum TokenKind {
    /// A bearer token, minted over the socket.
    #[default]
    Token,
    /// A dashboard session: a browser's cookie and proof, never a bearer token.
    Dashboard,
}

impl TokenKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenKind::Token => "token",
            TokenKind::Dashboard => "dashboard",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TokenRevokeParams {
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenRevokeResult {
    pub revoked: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DashboardLinkResult {
    /// `http(s)://host:port/login#code=…`: the code is in the fragment, never sent in a
    /// request line.
    pub url: String,
    pub expires_at: String,
}

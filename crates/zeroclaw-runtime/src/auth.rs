//! The gateway's tokens and login codes, in memory (checked on every gateway request) and
//! in the store (only each secret's SHA-256).
//!
//! A secret is `zc_` and 43 base62 characters from the OS's randomness (256 bits). It is
//! shown once, by `token/create`, and never logged or stored. A presented secret is hashed
//! and compared with every live token's hash in constant time. Revoking a token cancels
//! its `ended` token: the gateway's connections and streams acting for it end.
//!
//! Login codes (`dashboard/link`) live in memory only: valid five minutes, usable once.
//! At most [`MAX_CODES`] wait at once; overflow rule: the oldest is dropped.

use crate::store::{Store, StoreError, TokenRow};
use sha2::{Digest, Sha256};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use subtle::ConstantTimeEq;
use tokio_util::sync::CancellationToken;
use zeroclaw_gateway::Principal;
use zeroclaw_protocol::{Scope, TokenCreated, TokenInfo};

pub const PREFIX: &str = "zc_";
const SECRET_CHARS: usize = 43;
const LOGIN_CODE_TTL: Duration = Duration::from_secs(300);
pub const MAX_CODES: usize = 16;
/// A token's `last_used_at` is written at most this often.
const TOUCH_EVERY_MS: i64 = 60_000;
const NAME_MAX: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("{0}")]
    Invalid(String),
    #[error("a token named {0:?} exists; revoke it first or choose another name")]
    Exists(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug)]
struct Live {
    row: TokenRow,
    scope: Scope,
    name: Arc<str>,
    ended: CancellationToken,
    /// When `last_used_at` was last written.
    written_use: i64,
}

impl Live {
    fn new(row: TokenRow) -> Option<Self> {
        let scope = Scope::parse(&row.scope)?;
        Some(Self {
            name: row.name.as_str().into(),
            written_use: row.last_used_at.unwrap_or(0),
            row,
            scope,
            ended: CancellationToken::new(),
        })
    }

    fn principal(&self) -> Principal {
        Principal {
            name: self.name.clone(),
            scope: self.scope,
            ended: self.ended.clone(),
            expires_at: self.row.expires_at.map(system_time),
        }
    }
}

#[derive(Debug)]
struct Code {
    sha256: [u8; 32],
    expires: SystemTime,
}

#[derive(Debug)]
pub struct Tokens {
    store: Store,
    live: Mutex<Vec<Live>>,
    codes: Mutex<Vec<Code>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn system_time(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

fn rfc3339(ms: i64) -> String {
    humantime::format_rfc3339_seconds(system_time(ms)).to_string()
}

fn sha256(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// `zc_` and 43 base62 characters from the OS's randomness.
pub fn new_secret() -> Result<String, TokenError> {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut secret = String::with_capacity(PREFIX.len() + SECRET_CHARS);
    secret.push_str(PREFIX);
    let mut count = 0;
    while count < SECRET_CHARS {
        let mut bytes = [0u8; 64];
        getrandom::fill(&mut bytes)
            .map_err(|e| TokenError::Invalid(format!("the OS gave no randomness: {e}")))?;
        // Rejection sampling: 248 = 4 × 62, so every character is equally likely.
        for b in bytes.into_iter().filter(|b| *b < 248) {
            if count == SECRET_CHARS {
                break;
            }
            secret.push(char::from(ALPHABET[usize::from(b % 62)]));
            count += 1;
        }
    }
    Ok(secret)
}

fn valid_name(name: &str) -> Result<(), TokenError> {
    let ok = !name.is_empty()
        && name.len() <= NAME_MAX
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '+'));
    if ok {
        Ok(())
    } else {
        Err(TokenError::Invalid(format!(
            "a token name is 1 to {NAME_MAX} letters, digits, '-', '_', '.', ':' or '+'; got {name:?}"
        )))
    }
}

impl Tokens {
    /// The stored tokens, loaded once at start-up.
    pub async fn load(store: Store) -> Result<Self, StoreError> {
        let rows = store.tokens().await?;
        Ok(Self::new(store, rows))
    }

    /// Over `rows` (the store's tokens).
    pub fn new(store: Store, rows: Vec<TokenRow>) -> Self {
        let live = rows
            .into_iter()
            .filter_map(|row| {
                let name = row.name.clone();
                let live = Live::new(row);
                if live.is_none() {
                    tracing::warn!(token = %name, "ignoring a stored token with an unknown scope");
                }
                live
            })
            .collect();
        Self {
            store,
            live: Mutex::new(live),
            codes: Mutex::new(Vec::new()),
        }
    }

    /// The live token whose secret this is. Every hash is compared, in constant time.
    pub fn authenticate(&self, secret: &str) -> Option<Principal> {
        let presented = sha256(secret);
        let now = now_ms();
        let mut live = lock(&self.live);
        let mut found = None;
        for (i, token) in live.iter().enumerate() {
            if bool::from(token.row.sha256.ct_eq(&presented)) {
                found = Some(i);
            }
        }
        let token = &mut live[found?];
        if token.row.expires_at.is_some_and(|at| at <= now) {
            return None;
        }
        token.row.last_used_at = Some(now);
        if now - token.written_use >= TOUCH_EVERY_MS {
            token.written_use = now;
            let (store, name) = (self.store.clone(), token.row.name.clone());
            tokio::spawn(async move {
                if let Err(e) = store.touch_token(&name, now).await {
                    tracing::warn!(error = %e, "could not record a token's use");
                }
            });
        }
        Some(token.principal())
    }

    pub async fn create(
        &self,
        name: &str,
        scope: Scope,
        expires_in: Option<u64>,
    ) -> Result<TokenCreated, TokenError> {
        valid_name(name)?;
        let secret = new_secret()?;
        let now = now_ms();
        let expires_at = match expires_in {
            Some(0) => {
                return Err(TokenError::Invalid(
                    "expiresIn must be at least 1 second".into(),
                ));
            }
            Some(secs) => Some(
                now.saturating_add(i64::try_from(secs.saturating_mul(1000)).unwrap_or(i64::MAX)),
            ),
            None => None,
        };
        let row = TokenRow {
            name: name.to_owned(),
            sha256: sha256(&secret),
            scope: scope.as_str().to_owned(),
            created_at: now,
            last_used_at: None,
            expires_at,
        };
        if !self.store.insert_token(row.clone()).await? {
            return Err(TokenError::Exists(name.to_owned()));
        }
        if let Some(live) = Live::new(row) {
            lock(&self.live).push(live);
        }
        tracing::info!(token = %name, scope = scope.as_str(), "token created");
        Ok(TokenCreated {
            name: name.to_owned(),
            token: secret,
            scope,
            expires_at: expires_at.map(rfc3339),
        })
    }

    pub fn list(&self) -> Vec<TokenInfo> {
        lock(&self.live)
            .iter()
            .map(|t| TokenInfo {
                name: t.row.name.clone(),
                scope: t.scope,
                created_at: rfc3339(t.row.created_at),
                last_used_at: t.row.last_used_at.map(rfc3339),
                expires_at: t.row.expires_at.map(rfc3339),
            })
            .collect()
    }

    /// Revokes `name`: refused from now on, and its connections end.
    pub async fn revoke(&self, name: &str) -> Result<bool, TokenError> {
        let removed = {
            let mut live = lock(&self.live);
            let at = live.iter().position(|t| t.row.name == name);
            at.map(|i| live.remove(i))
        };
        if let Some(token) = &removed {
            token.ended.cancel();
        }
        let deleted = self.store.delete_token(name).await?;
        if removed.is_some() || deleted {
            tracing::info!(token = %name, "token revoked");
        }
        Ok(removed.is_some() || deleted)
    }

    /// A new one-time login code, and when it expires.
    pub fn new_code(&self) -> Result<(String, SystemTime), TokenError> {
        let code = new_secret()?;
        let code = code[PREFIX.len()..].to_owned();
        let expires = SystemTime::now() + LOGIN_CODE_TTL;
        let mut codes = lock(&self.codes);
        let now = SystemTime::now();
        codes.retain(|c| c.expires > now);
        if codes.len() >= MAX_CODES {
            codes.remove(0);
        }
        codes.push(Code {
            sha256: sha256(&code),
            expires,
        });
        Ok((code, expires))
    }

    /// Spends a login code: a new `dashboard-<time>` token of scope `operate`.
    pub async fn exchange(&self, code: &str) -> Option<String> {
        let presented = sha256(code);
        let spent = {
            let mut codes = lock(&self.codes);
            let now = SystemTime::now();
            codes.retain(|c| c.expires > now);
            let mut found = None;
            for (i, c) in codes.iter().enumerate() {
                if bool::from(c.sha256.ct_eq(&presented)) {
                    found = Some(i);
                }
            }
            found.map(|i| codes.remove(i)).is_some()
        };
        if !spent {
            return None;
        }
        let name = format!(
            "dashboard-{}",
            humantime::format_rfc3339_millis(SystemTime::now())
        );
        match self.create(&name, Scope::Operate, None).await {
            Ok(created) => Some(created.token),
            Err(e) => {
                tracing::warn!(error = %e, "could not create the dashboard's token");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    async fn tokens() -> Tokens {
        Tokens::load(Store::open_in_memory().unwrap().store)
            .await
            .unwrap()
    }

    #[test]
    fn a_secret_is_the_prefix_and_43_base62_characters() {
        let a = new_secret().unwrap();
        assert_eq!(a.len(), 46);
        assert!(a.starts_with("zc_"));
        assert!(a[3..].chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(a, new_secret().unwrap());
    }

    #[tokio::test]
    async fn a_token_authenticates_until_it_is_revoked_and_its_connections_are_told() {
        let tokens = tokens().await;
        let created = tokens.create("ci", Scope::Read, None).await.unwrap();
        let principal = tokens.authenticate(&created.token).unwrap();
        assert_eq!((&*principal.name, principal.scope), ("ci", Scope::Read));
        assert!(tokens.authenticate("zc_wrong").is_none());
        assert!(matches!(
            tokens.create("ci", Scope::Admin, None).await,
            Err(TokenError::Exists(_))
        ));
        assert!(tokens.revoke("ci").await.unwrap());
        assert!(principal.ended.is_cancelled());
        assert!(tokens.authenticate(&created.token).is_none());
        assert!(!tokens.revoke("ci").await.unwrap());
    }

    #[tokio::test]
    async fn a_login_code_works_once() {
        let tokens = tokens().await;
        let (code, _) = tokens.new_code().unwrap();
        let secret = tokens.exchange(&code).await.unwrap();
        assert_eq!(tokens.authenticate(&secret).unwrap().scope, Scope::Operate);
        assert!(tokens.exchange(&code).await.is_none());
        assert!(tokens.list()[0].name.starts_with("dashboard-"));
    }
}

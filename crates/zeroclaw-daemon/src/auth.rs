//! The gateway's credentials, in memory (checked on every gateway request) and in the store
//! (only each secret's SHA-256): bearer tokens, dashboard sessions and login codes.
//!
//! A token is `zc_` and 43 base62 characters from the OS's randomness (256 bits). It is
//! shown once, by `token/create`, and never logged or stored. A presented secret is hashed
//! and compared with every live token's hash in constant time. Revoking a token cancels
//! its `ended` token: the gateway's connections and streams acting for it end.
//!
//! A dashboard session is what a login code buys: a cookie (`zcd_` and 43 base62
//! characters) and a proof (43 base62 characters), both needed on every request, neither
//! ever a bearer token (docs/gateway.md says why). It has scope `operate`, is listed and
//! revoked by name with the tokens (`dashboard-<8 base62>`), and ends by itself: after
//! `gateway.dashboard_idle_timeout_secs` without use (a request, WebSocket or stream acting
//! for it keeps it in use while it is open), and `gateway.dashboard_max_age_secs` after it
//! began, whatever the use. Bounded: a new login from a browser that still holds a cookie
//! ends that cookie's session, and at most [`MAX_DASHBOARD_SESSIONS`] exist; overflow rule:
//! the least recently used (one not in use first) is ended.
//!
//! Login codes (`dashboard/link`) live in memory only: valid five minutes, usable once.
//! At most [`MAX_CODES`] wait at once; overflow rule: the oldest is dropped.

use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use subtle::ConstantTimeEq;
use tokio_util::sync::CancellationToken;
use zeroclaw_agent::store::{Store, StoreError, TokenRow};
use zeroclaw_gateway::{DashboardLogin, Hold, Principal};
use zeroclaw_protocol::{Scope, TokenCreated, TokenInfo, TokenKind};

pub const PREFIX: &str = "zc_";
/// How a dashboard session's cookie starts.
pub const SESSION_PREFIX: &str = "zcd_";
const SECRET_CHARS: usize = 43;
const LOGIN_CODE_TTL: Duration = Duration::from_secs(300);
pub const MAX_CODES: usize = 16;
pub const MAX_DASHBOARD_SESSIONS: usize = 32;
/// A credential's `last_used_at` is written at most this often.
const TOUCH_EVERY_MS: i64 = 60_000;

/// How long a dashboard session lasts: `gateway.dashboard_idle_timeout_secs` without use,
/// `gateway.dashboard_max_age_secs` at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    pub idle: Duration,
    pub max_age: Duration,
}

impl SessionLimits {
    pub fn of(config: &zeroclaw_gateway::GatewayConfig) -> Self {
        Self {
            idle: Duration::from_secs(config.dashboard_idle_timeout_secs),
            max_age: Duration::from_secs(config.dashboard_max_age_secs),
        }
    }

    fn idle_ms(self) -> i64 {
        i64::try_from(self.idle.as_millis()).unwrap_or(i64::MAX)
    }

    fn max_age_ms(self) -> i64 {
        i64::try_from(self.max_age.as_millis()).unwrap_or(i64::MAX)
    }
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self::of(&zeroclaw_gateway::GatewayConfig::default())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("{0}")]
    Invalid(String),
    #[error("a token named {0:?} exists; revoke it first or choose another name")]
    Exists(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A credential's use, shared by its entry and the holds of the requests and connections
/// acting for it.
#[derive(Debug, Default)]
struct Activity {
    /// Requests and connections acting for it now.
    open: AtomicUsize,
    /// When it was last authenticated, or the last request or connection acting for it
    /// ended (ms): a dashboard session's idle limit counts from here.
    last: AtomicI64,
    /// When `last_used_at` was last written to the store.
    written: AtomicI64,
}

impl Activity {
    /// Writes `at` as the credential's last use, at most once a minute.
    fn record(&self, store: &Store, name: &str, at: i64) {
        let written = self.written.load(Ordering::Relaxed);
        if at - written < TOUCH_EVERY_MS
            || self
                .written
                .compare_exchange(written, at, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (store, name) = (store.clone(), name.to_owned());
        runtime.spawn(async move {
            if let Err(e) = store.touch_token(&name, at).await {
                tracing::warn!(error = %e, "could not record a credential's use");
            }
        });
    }
}

/// The guard in a dashboard session's [`Principal::hold`]: the session is in use from its
/// authentication until the last clone of that principal is dropped.
struct InUse {
    activity: Arc<Activity>,
    store: Store,
    name: String,
}

impl InUse {
    fn new(activity: Arc<Activity>, store: Store, name: String) -> Self {
        activity.open.fetch_add(1, Ordering::AcqRel);
        Self {
            activity,
            store,
            name,
        }
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        let now = now_ms();
        self.activity.last.fetch_max(now, Ordering::AcqRel);
        self.activity.open.fetch_sub(1, Ordering::AcqRel);
        self.activity.record(&self.store, &self.name, now);
    }
}

#[derive(Debug)]
struct Live {
    row: TokenRow,
    kind: TokenKind,
    scope: Scope,
    name: Arc<str>,
    ended: CancellationToken,
    activity: Arc<Activity>,
}

impl Live {
    fn new(row: TokenRow) -> Option<Self> {
        let scope = Scope::parse(&row.scope)?;
        let kind = match (row.kind.as_str(), row.proof_sha256) {
            ("token", _) => TokenKind::Token,
            ("dashboard", Some(_)) => TokenKind::Dashboard,
            _ => return None,
        };
        let used = row.last_used_at.unwrap_or(row.created_at);
        let activity = Activity {
            open: AtomicUsize::new(0),
            last: AtomicI64::new(used),
            written: AtomicI64::new(used),
        };
        Some(Self {
            name: row.name.as_str().into(),
            kind,
            row,
            scope,
            ended: CancellationToken::new(),
            activity: Arc::new(activity),
        })
    }

    /// When a dashboard session's absolute limit ends it.
    fn absolute_end(&self, limits: SessionLimits) -> i64 {
        self.row.created_at.saturating_add(limits.max_age_ms())
    }

    /// When it ends if nothing uses it from now on: a token's expiry; for a dashboard
    /// session, the earlier of its limits (the idle one runs only while it is not in use).
    fn ends_at(&self, limits: SessionLimits, now: i64) -> Option<i64> {
        match self.kind {
            TokenKind::Token => self.row.expires_at,
            TokenKind::Dashboard => {
                let idle_from = if self.activity.open.load(Ordering::Acquire) > 0 {
                    now
                } else {
                    self.activity.last.load(Ordering::Acquire)
                };
                let idle_end = idle_from.saturating_add(limits.idle_ms());
                Some(idle_end.min(self.absolute_end(limits)))
            }
        }
    }

    fn expired(&self, limits: SessionLimits, now: i64) -> bool {
        self.ends_at(limits, now).is_some_and(|at| at <= now)
    }

    fn principal(&self, limits: SessionLimits, store: &Store) -> Principal {
        let (expires_at, hold) = match self.kind {
            TokenKind::Token => (self.row.expires_at.map(system_time), None),
            TokenKind::Dashboard => {
                let guard = InUse::new(self.activity.clone(), store.clone(), self.row.name.clone());
                (
                    Some(system_time(self.absolute_end(limits))),
                    Some(Hold(Arc::new(guard))),
                )
            }
        };
        Principal {
            name: self.name.clone(),
            scope: self.scope,
            ended: self.ended.clone(),
            expires_at,
            hold,
        }
    }

    /// Marks a use now.
    fn used(&mut self, store: &Store, now: i64) {
        self.row.last_used_at = Some(now);
        self.activity.last.fetch_max(now, Ordering::AcqRel);
        self.activity.record(store, &self.row.name, now);
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
    limits: SessionLimits,
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

/// `count` base62 characters from the OS's randomness.
fn random_base62(count: usize) -> Result<String, TokenError> {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut out = String::with_capacity(count);
    while out.len() < count {
        let mut bytes = [0u8; 64];
        getrandom::fill(&mut bytes)
            .map_err(|e| TokenError::Invalid(format!("the OS gave no randomness: {e}")))?;
        // Rejection sampling: 248 = 4 × 62, so every character is equally likely.
        for b in bytes
            .into_iter()
            .filter(|b| *b < 248)
            .take(count - out.len())
        {
            out.push(char::from(ALPHABET[usize::from(b % 62)]));
        }
    }
    Ok(out)
}

/// `zc_` and 43 base62 characters from the OS's randomness.
pub fn new_secret() -> Result<String, TokenError> {
    Ok(format!("{PREFIX}{}", random_base62(SECRET_CHARS)?))
}

/// The protocol's one rule for token names ([`zeroclaw_protocol::check_token_name`]).
fn valid_name(name: &str) -> Result<(), TokenError> {
    zeroclaw_protocol::check_token_name(name).map_err(TokenError::Invalid)
}

impl Tokens {
    /// The stored tokens and dashboard sessions, loaded once at start-up; the sessions that
    /// expired meanwhile are deleted.
    pub async fn load(store: Store, limits: SessionLimits) -> Result<Self, StoreError> {
        let rows = store.tokens().await?;
        let tokens = Self::new(store, rows, limits);
        let expired = tokens.take_expired(now_ms());
        for session in &expired {
            tokens.store.delete_token(&session.row.name).await?;
        }
        Ok(tokens)
    }

    /// Over `rows` (the store's tokens and sessions).
    pub fn new(store: Store, rows: Vec<TokenRow>, limits: SessionLimits) -> Self {
        let live = rows
            .into_iter()
            .filter_map(|row| {
                let name = row.name.clone();
                let live = Live::new(row);
                if live.is_none() {
                    tracing::warn!(token = %name, "ignoring a stored token with an unknown scope or kind");
                }
                live
            })
            .collect();
        Self {
            store,
            limits,
            live: Mutex::new(live),
            codes: Mutex::new(Vec::new()),
        }
    }

    /// Removes the dashboard sessions past their limits (their connections are told).
    fn take_expired(&self, now: i64) -> Vec<Live> {
        let mut live = lock(&self.live);
        let mut expired = Vec::new();
        let mut i = 0;
        while i < live.len() {
            if live[i].kind == TokenKind::Dashboard && live[i].expired(self.limits, now) {
                expired.push(live.remove(i));
            } else {
                i += 1;
            }
        }
        drop(live);
        for session in &expired {
            session.ended.cancel();
            tracing::info!(token = %session.row.name, "dashboard session expired");
        }
        expired
    }

    /// Deletes ended entries from the store, off the caller's path.
    fn forget(&self, ended: Vec<Live>) {
        if ended.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let store = self.store.clone();
        runtime.spawn(async move {
            for entry in ended {
                if let Err(e) = store.delete_token(&entry.row.name).await {
                    tracing::warn!(error = %e, "could not delete an ended dashboard session");
                }
            }
        });
    }

    /// The live token whose secret this is. Every hash is compared, in constant time. Only
    /// tokens: a dashboard session's cookie is never a bearer token.
    pub fn authenticate(&self, secret: &str) -> Option<Principal> {
        let presented = sha256(secret);
        let now = now_ms();
        let mut live = lock(&self.live);
        let mut found = None;
        for (i, token) in live.iter().enumerate() {
            if bool::from(token.row.sha256.ct_eq(&presented)) && token.kind == TokenKind::Token {
                found = Some(i);
            }
        }
        let token = &mut live[found?];
        if token.expired(self.limits, now) {
            return None;
        }
        token.used(&self.store, now);
        Some(token.principal(self.limits, &self.store))
    }

    /// The live dashboard session whose cookie and proof these are (each compared with
    /// every session's in constant time); an expired one is ended and refused.
    pub fn authenticate_dashboard(&self, cookie: &str, proof: &str) -> Option<Principal> {
        let (cookie, proof) = (sha256(cookie), sha256(proof));
        let now = now_ms();
        let mut live = lock(&self.live);
        let mut found = None;
        for (i, session) in live.iter().enumerate() {
            let stored_proof = session.row.proof_sha256.unwrap_or([0; 32]);
            let both = session.row.sha256.ct_eq(&cookie) & stored_proof.ct_eq(&proof);
            if bool::from(both) && session.kind == TokenKind::Dashboard {
                found = Some(i);
            }
        }
        let at = found?;
        if live[at].expired(self.limits, now) {
            let session = live.remove(at);
            drop(live);
            session.ended.cancel();
            tracing::info!(token = %session.row.name, "dashboard session expired");
            self.forget(vec![session]);
            return None;
        }
        let session = &mut live[at];
        session.used(&self.store, now);
        Some(session.principal(self.limits, &self.store))
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
            kind: TokenKind::Token.as_str().to_owned(),
            proof_sha256: None,
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

    /// Every token and dashboard session (the expired sessions are ended first).
    pub fn list(&self) -> Vec<TokenInfo> {
        let now = now_ms();
        let expired = self.take_expired(now);
        self.forget(expired);
        lock(&self.live)
            .iter()
            .map(|t| TokenInfo {
                name: t.row.name.clone(),
                kind: t.kind,
                scope: t.scope,
                created_at: rfc3339(t.row.created_at),
                last_used_at: t.row.last_used_at.map(rfc3339),
                expires_at: t.ends_at(self.limits, now).map(rfc3339),
            })
            .collect()
    }

    /// Revokes `name` (a token or a dashboard session): refused from now on, and its
    /// connections end.
    pub async fn revoke(&self, name: &str) -> Result<bool, TokenError> {
        // The rule `create` holds names to: a name it would refuse names no token.
        valid_name(name)?;
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
        let code = random_base62(SECRET_CHARS)?;
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

    /// Spends a login code: a new dashboard session of scope `operate`. `replacing` is the
    /// cookie the browser still holds: its session ends (the new cookie overwrites it).
    pub async fn exchange(&self, code: &str, replacing: Option<&str>) -> Option<DashboardLogin> {
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
        match self.start_session(replacing).await {
            Ok(login) => Some(login),
            Err(e) => {
                tracing::warn!(error = %e, "could not start a dashboard session");
                None
            }
        }
    }

    async fn start_session(&self, replacing: Option<&str>) -> Result<DashboardLogin, TokenError> {
        let now = now_ms();
        let mut ended = self.take_expired(now);
        {
            let mut live = lock(&self.live);
            if let Some(cookie) = replacing {
                let old = sha256(cookie);
                if let Some(at) = live.iter().position(|t| {
                    t.kind == TokenKind::Dashboard && bool::from(t.row.sha256.ct_eq(&old))
                }) {
                    let session = live.remove(at);
                    tracing::info!(token = %session.row.name, "dashboard session replaced by a new login from its browser");
                    ended.push(session);
                }
            }
            let sessions = |live: &Vec<Live>| {
                live.iter()
                    .filter(|t| t.kind == TokenKind::Dashboard)
                    .count()
            };
            while sessions(&live) >= MAX_DASHBOARD_SESSIONS {
                let lru = live
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| t.kind == TokenKind::Dashboard)
                    .min_by_key(|(_, t)| {
                        (
                            t.activity.open.load(Ordering::Acquire) > 0,
                            t.activity.last.load(Ordering::Acquire),
                        )
                    })
                    .map(|(i, _)| i);
                let Some(at) = lru else { break };
                let session = live.remove(at);
                tracing::info!(token = %session.row.name, limit = MAX_DASHBOARD_SESSIONS, "too many dashboard sessions; ending the least recently used");
                ended.push(session);
            }
        }
        for session in &ended {
            session.ended.cancel();
            self.store.delete_token(&session.row.name).await?;
        }
        let cookie = format!("{SESSION_PREFIX}{}", random_base62(SECRET_CHARS)?);
        let proof = random_base62(SECRET_CHARS)?;
        // A name in use (a token named so by hand) is drawn again.
        for _ in 0..4 {
            let name = format!("dashboard-{}", random_base62(8)?);
            let row = TokenRow {
                name: name.clone(),
                sha256: sha256(&cookie),
                scope: Scope::Operate.as_str().to_owned(),
                created_at: now,
                last_used_at: None,
                expires_at: None,
                kind: TokenKind::Dashboard.as_str().to_owned(),
                proof_sha256: Some(sha256(&proof)),
            };
            if !self.store.insert_token(row.clone()).await? {
                continue;
            }
            if let Some(live) = Live::new(row) {
                lock(&self.live).push(live);
            }
            tracing::info!(token = %name, "dashboard session started");
            return Ok(DashboardLogin {
                cookie,
                proof,
                max_age: self.limits.max_age,
            });
        }
        Err(TokenError::Invalid(
            "no free dashboard session name was found".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    async fn tokens_with(limits: SessionLimits) -> Tokens {
        Tokens::load(Store::open_in_memory().unwrap().store, limits)
            .await
            .unwrap()
    }

    async fn tokens() -> Tokens {
        tokens_with(SessionLimits::default()).await
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
    async fn a_login_code_works_once_for_a_session_that_needs_its_cookie_and_its_proof() {
        let tokens = tokens().await;
        let (code, _) = tokens.new_code().unwrap();
        let login = tokens.exchange(&code, None).await.unwrap();
        assert!(login.cookie.starts_with(SESSION_PREFIX));
        let principal = tokens
            .authenticate_dashboard(&login.cookie, &login.proof)
            .unwrap();
        assert_eq!(principal.scope, Scope::Operate);
        assert!(principal.hold.is_some());
        assert!(tokens.exchange(&code, None).await.is_none());
        // Neither half alone, nor the cookie as a bearer token.
        assert!(tokens.authenticate(&login.cookie).is_none());
        assert!(
            tokens
                .authenticate_dashboard(&login.cookie, "wrong")
                .is_none()
        );
        assert!(
            tokens
                .authenticate_dashboard("zcd_wrong", &login.proof)
                .is_none()
        );
        let listed = tokens.list();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].name.starts_with("dashboard-"));
        assert_eq!(listed[0].kind, TokenKind::Dashboard);
        assert!(listed[0].expires_at.is_some());
    }

    #[tokio::test]
    async fn a_new_login_from_the_same_browser_ends_its_old_session_and_sessions_are_capped() {
        let tokens = tokens().await;
        let login = |replacing: Option<String>| {
            let tokens = &tokens;
            async move {
                let (code, _) = tokens.new_code().unwrap();
                tokens.exchange(&code, replacing.as_deref()).await.unwrap()
            }
        };
        let first = login(None).await;
        let held = tokens
            .authenticate_dashboard(&first.cookie, &first.proof)
            .unwrap();
        let second = login(Some(first.cookie.clone())).await;
        assert!(
            held.ended.is_cancelled(),
            "the old session's connections end"
        );
        assert!(
            tokens
                .authenticate_dashboard(&first.cookie, &first.proof)
                .is_none()
        );
        assert!(
            tokens
                .authenticate_dashboard(&second.cookie, &second.proof)
                .is_some()
        );
        assert_eq!(tokens.list().len(), 1);
        // Browsers that lost their cookie: never more than the cap.
        for _ in 0..MAX_DASHBOARD_SESSIONS + 5 {
            login(None).await;
        }
        assert_eq!(tokens.list().len(), MAX_DASHBOARD_SESSIONS);
    }

    #[tokio::test]
    async fn a_session_idles_out_only_while_nothing_holds_it_and_never_outlives_its_max_age() {
        let tokens = tokens().await;
        let (code, _) = tokens.new_code().unwrap();
        let login = tokens.exchange(&code, None).await.unwrap();
        let limits = SessionLimits {
            idle: Duration::from_secs(60),
            max_age: Duration::from_secs(3600),
        };
        let held = tokens
            .authenticate_dashboard(&login.cookie, &login.proof)
            .unwrap();
        let live = lock(&tokens.live);
        let session = &live[0];
        let now = now_ms();
        let later = now + 120_000;
        // Held (a WebSocket open): not idle, however long.
        assert!(!session.expired(limits, later));
        drop(held);
        assert!(session.expired(limits, later), "idle once released");
        assert!(!session.expired(limits, now + 1_000));
        assert!(session.expired(limits, session.row.created_at + 3_600_000));
    }
}

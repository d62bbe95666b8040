//! The gateway's tokens and dashboard sessions: a name, the SHA-256 of the secret (never the
//! secret; a dashboard session's cookie), a scope, when it was made, last used and expires
//! (Unix milliseconds), its kind, and a dashboard session's SHA-256 of its proof.

use super::db::Db;
use super::{Result, Store, StoreError};
use rusqlite::params;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    pub name: String,
    pub sha256: [u8; 32],
    pub scope: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    pub expires_at: Option<i64>,
    /// `token` or `dashboard`.
    pub kind: String,
    /// A dashboard session's proof, hashed; `None` for a token.
    pub proof_sha256: Option<[u8; 32]>,
}

fn hash32(bytes: &[u8]) -> [u8; 32] {
    let mut hash = [0u8; 32];
    if bytes.len() == 32 {
        hash.copy_from_slice(bytes);
    }
    hash
}

impl Db {
    fn tokens(&self) -> Result<Vec<TokenRow>> {
        let mut statement = self
            .conn()
            .prepare(
                "SELECT name, sha256, scope, created_at, last_used_at, expires_at, kind, proof_sha256 FROM tokens ORDER BY created_at, name",
            )
            .map_err(StoreError::ctx("read the tokens"))?;
        let rows = statement
            .query_map([], |row| {
                let hash: Vec<u8> = row.get(1)?;
                let proof: Option<Vec<u8>> = row.get(7)?;
                Ok(TokenRow {
                    name: row.get(0)?,
                    sha256: hash32(&hash),
                    scope: row.get(2)?,
                    created_at: row.get(3)?,
                    last_used_at: row.get(4)?,
                    expires_at: row.get(5)?,
                    kind: row.get(6)?,
                    proof_sha256: proof.map(|p| hash32(&p)),
                })
            })
            .map_err(StoreError::ctx("read the tokens"))?;
        rows.collect::<std::result::Result<_, _>>()
            .map_err(StoreError::ctx("read the tokens"))
    }

    /// `false` if a token of that name exists.
    fn insert_token(&self, row: &TokenRow) -> Result<bool> {
        let inserted = self
            .conn()
            .execute(
                "INSERT OR IGNORE INTO tokens (name, sha256, scope, created_at, last_used_at, expires_at, kind, proof_sha256) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    row.name,
                    row.sha256.as_slice(),
                    row.scope,
                    row.created_at,
                    row.last_used_at,
                    row.expires_at,
                    row.kind,
                    row.proof_sha256.as_ref().map(|p| p.as_slice())
                ],
            )
            .map_err(StoreError::ctx("store a token"))?;
        Ok(inserted == 1)
    }

    fn delete_token(&self, name: &str) -> Result<bool> {
        let deleted = self
            .conn()
            .execute("DELETE FROM tokens WHERE name = ?1", params![name])
            .map_err(StoreError::ctx("revoke a token"))?;
        Ok(deleted == 1)
    }

    fn touch_token(&self, name: &str, at: i64) -> Result<()> {
        self.conn()
            .execute(
                "UPDATE tokens SET last_used_at = ?2 WHERE name = ?1",
                params![name, at],
            )
            .map_err(StoreError::ctx("record a token's use"))?;
        Ok(())
    }
}

impl Store {
    pub async fn tokens(&self) -> Result<Vec<TokenRow>> {
        self.writer.run(|db| db.tokens()).await
    }

    pub async fn insert_token(&self, row: TokenRow) -> Result<bool> {
        self.writer.run(move |db| db.insert_token(&row)).await
    }

    pub async fn delete_token(&self, name: &str) -> Result<bool> {
        let name = name.to_owned();
        self.writer.run(move |db| db.delete_token(&name)).await
    }

    pub async fn touch_token(&self, name: &str, at: i64) -> Result<()> {
        let name = name.to_owned();
        self.writer.run(move |db| db.touch_token(&name, at)).await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn a_token_is_stored_by_its_hash_and_its_name_is_unique() {
        let store = Store::open_in_memory().unwrap().store;
        let row = TokenRow {
            name: "ci".into(),
            sha256: [7; 32],
            scope: "read".into(),
            created_at: 1,
            last_used_at: None,
            expires_at: Some(5),
            kind: "dashboard".into(),
            proof_sha256: Some([9; 32]),
        };
        assert!(store.insert_token(row.clone()).await.unwrap());
        assert!(!store.insert_token(row.clone()).await.unwrap());
        store.touch_token("ci", 3).await.unwrap();
        let rows = store.tokens().await.unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].last_used_at, Some(3));
        assert_eq!(rows[0].sha256, [7; 32]);
        assert_eq!(rows[0].proof_sha256, Some([9; 32]));
        assert_eq!(rows[0].kind, "dashboard");
        assert!(store.delete_token("ci").await.unwrap());
        assert!(store.tokens().await.unwrap().is_empty());
    }
}

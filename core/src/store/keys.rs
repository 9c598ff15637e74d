//! API keys: random, shown once, stored as a SHA-256 hash with a display
//! prefix. Playground keys are short-lived, tightly limited and audited.

use super::{new_id, now_ms, opt_i64, Store, StoreError, StoreResult};
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::any::AnyRow;
use sqlx::Row;

/// Every key starts with this.
pub const KEY_PREFIX: &str = "wd_";
/// Length of a whole key: the prefix plus 43 base64url characters (32 bytes).
pub const KEY_LEN: usize = 3 + 43;
/// Characters of the key kept for display.
const DISPLAY_PREFIX_LEN: usize = 10;

/// Playground key lifetime.
pub const PLAYGROUND_TTL_MS: i64 = 60 * 60 * 1000;
/// Playground key request budget per minute.
pub const PLAYGROUND_RATE_PER_MINUTE: i64 = 20;
/// Playground key concurrent requests.
pub const PLAYGROUND_CONCURRENCY: i64 = 2;
/// Playground key total credits.
pub const PLAYGROUND_CREDITS: i64 = 50;

/// Standard keys or dashboard playground keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyKind {
    Standard,
    Playground,
}

impl KeyKind {
    fn as_str(self) -> &'static str {
        match self {
            KeyKind::Standard => "standard",
            KeyKind::Playground => "playground",
        }
    }
}

/// A key as stored (never the secret itself).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKey {
    pub id: String,
    pub org_id: String,
    pub name: String,
    /// The first characters of the key, for recognising it.
    pub prefix: String,
    pub kind: KeyKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub revoked_at: Option<i64>,
    /// Total credits this key may spend (playground keys), none = the org's balance.
    pub budget: Option<i64>,
    pub spent: i64,
    /// Requests per minute for this key alone, none = only the org's limit.
    pub rate_limit_per_minute: Option<i64>,
    /// Concurrent requests for this key alone, none = only the org's limit.
    pub concurrency_limit: Option<i64>,
    /// The person who created it (dashboard), none for the admin API and CLI.
    pub created_by: Option<String>,
    /// When it last authenticated a request (to the minute).
    pub last_used_at: Option<i64>,
}

impl ApiKey {
    /// Usable now: not revoked and not expired.
    pub fn is_active(&self, now: i64) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|e| e > now)
    }
}

/// A key just created: the only time the secret is seen.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewKey {
    #[serde(flatten)]
    pub key: ApiKey,
    /// The full secret. Shown once; only its SHA-256 is stored.
    pub secret: String,
}

/// SHA-256 of a key, lowercase hex.
pub fn hash_key(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// True when `s` has the shape of a key (cheap check before any lookup).
pub fn looks_like_key(s: &str) -> bool {
    s.len() == KEY_LEN
        && s.starts_with(KEY_PREFIX)
        && s[KEY_PREFIX.len()..]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A fresh random key.
pub fn generate_key() -> String {
    use base64::Engine;
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!(
        "{KEY_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

const KEY_COLUMNS: &str = "id, org_id, name, prefix, kind, person, created_at, expires_at, revoked_at, budget, spent, rate_limit_per_minute, concurrency_limit, created_by, last_used_at";

fn key_from_row(row: &AnyRow) -> StoreResult<ApiKey> {
    let kind: String = row.try_get("kind")?;
    Ok(ApiKey {
        id: row.try_get("id")?,
        org_id: row.try_get("org_id")?,
        name: row.try_get("name")?,
        prefix: row.try_get("prefix")?,
        kind: if kind == "playground" {
            KeyKind::Playground
        } else {
            KeyKind::Standard
        },
        person: row.try_get("person")?,
        created_at: row.try_get("created_at")?,
        expires_at: opt_i64(row, "expires_at")?,
        revoked_at: opt_i64(row, "revoked_at")?,
        budget: opt_i64(row, "budget")?,
        spent: row.try_get("spent")?,
        rate_limit_per_minute: opt_i64(row, "rate_limit_per_minute")?,
        concurrency_limit: opt_i64(row, "concurrency_limit")?,
        created_by: row.try_get("created_by")?,
        last_used_at: opt_i64(row, "last_used_at")?,
    })
}

/// What a key insert needs besides the org and name.
struct KeySpec<'a> {
    now: i64,
    kind: KeyKind,
    person: Option<&'a str>,
    expires_at: Option<i64>,
    budget: Option<i64>,
    rate: Option<i64>,
    concurrency: Option<i64>,
}

impl Store {
    async fn insert_key(
        &self,
        org_id: &str,
        name: &str,
        secret: &str,
        spec: KeySpec<'_>,
    ) -> StoreResult<NewKey> {
        let mut tx = self.begin_write().await?;
        let id = self
            .insert_key_in(&mut tx, org_id, name, secret, spec)
            .await?;
        tx.commit().await?;
        let key = self.get_key(&id).await?;
        Ok(NewKey {
            key,
            secret: secret.to_string(),
        })
    }

    async fn insert_key_in(
        &self,
        tx: &mut sqlx::Transaction<'static, sqlx::Any>,
        org_id: &str,
        name: &str,
        secret: &str,
        spec: KeySpec<'_>,
    ) -> StoreResult<String> {
        let id = new_id("key");
        let now = spec.now;
        sqlx::query(
            "INSERT INTO api_keys (id, org_id, name, prefix, hash, kind, person, created_at, expires_at, budget, spent, rate_limit_per_minute, concurrency_limit, created_by) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, $11, $12, $13)",
        )
        .bind(&id)
        .bind(org_id)
        .bind(name)
        .bind(&secret[..DISPLAY_PREFIX_LEN.min(secret.len())])
        .bind(hash_key(secret))
        .bind(spec.kind.as_str())
        .bind(spec.person)
        .bind(now)
        .bind(spec.expires_at)
        .bind(spec.budget)
        .bind(spec.rate)
        .bind(spec.concurrency)
        .bind(super::orgs::current_actor())
        .execute(&mut **tx)
        .await?;
        Ok(id)
    }

    /// Creates a standard key for an organization.
    pub async fn create_key(&self, org_id: &str, name: &str) -> StoreResult<NewKey> {
        self.create_key_with_secret(org_id, name, &generate_key())
            .await
    }

    /// Creates a standard key whose secret the caller chose (bootstrap).
    pub async fn create_key_with_secret(
        &self,
        org_id: &str,
        name: &str,
        secret: &str,
    ) -> StoreResult<NewKey> {
        if name.trim().is_empty() {
            return Err(StoreError::Invalid("key name must not be empty".into()));
        }
        if !looks_like_key(secret) {
            return Err(StoreError::Invalid(format!(
                "a key is {KEY_PREFIX} followed by 43 characters of A-Z a-z 0-9 - _ (generate one with `webdata keys generate`)"
            )));
        }
        self.get_org(org_id).await?;
        let spec = KeySpec {
            now: now_ms(),
            kind: KeyKind::Standard,
            person: None,
            expires_at: None,
            budget: None,
            rate: None,
            concurrency: None,
        };
        let created = self.insert_key(org_id, name.trim(), secret, spec).await?;
        self.audit(org_id, Some(&created.key.id), "key.created", name)
            .await?;
        Ok(created)
    }

    /// Mints a playground key for `person`: one hour, 20 requests a minute,
    /// 2 concurrent, 50 credits. A person's previous playground key is revoked.
    pub async fn create_playground_key(&self, org_id: &str, person: &str) -> StoreResult<NewKey> {
        if person.trim().is_empty() {
            return Err(StoreError::Invalid("person must not be empty".into()));
        }
        self.get_org(org_id).await?;
        let now = now_ms();
        // One transaction, the organization's row locked: two mints at once
        // still leave exactly one live key for the person.
        let mut tx = self.begin_write().await?;
        sqlx::query(&format!(
            "SELECT id FROM organizations WHERE id = $1{}",
            self.lock_suffix()
        ))
        .bind(org_id)
        .fetch_optional(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE api_keys SET revoked_at = $1 WHERE org_id = $2 AND kind = 'playground' AND person = $3 AND revoked_at IS NULL",
        )
        .bind(now)
        .bind(org_id)
        .bind(person.trim())
        .execute(&mut *tx)
        .await?;
        let spec = KeySpec {
            now,
            kind: KeyKind::Playground,
            person: Some(person.trim()),
            expires_at: Some(now + PLAYGROUND_TTL_MS),
            budget: Some(PLAYGROUND_CREDITS),
            rate: Some(PLAYGROUND_RATE_PER_MINUTE),
            concurrency: Some(PLAYGROUND_CONCURRENCY),
        };
        let secret = generate_key();
        let id = self
            .insert_key_in(&mut tx, org_id, "playground", &secret, spec)
            .await?;
        tx.commit().await?;
        let created = NewKey {
            key: self.get_key(&id).await?,
            secret,
        };
        self.audit(
            org_id,
            Some(&created.key.id),
            "playground_key.created",
            person.trim(),
        )
        .await?;
        Ok(created)
    }

    /// One key by id.
    pub async fn get_key(&self, id: &str) -> StoreResult<ApiKey> {
        let row = sqlx::query(&format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.pool())
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("key {id}")))?;
        key_from_row(&row)
    }

    /// Finds the key whose hash matches `secret`, active or not.
    pub async fn find_key_by_secret(&self, secret: &str) -> StoreResult<Option<ApiKey>> {
        let row = sqlx::query(&format!(
            "SELECT {KEY_COLUMNS} FROM api_keys WHERE hash = $1"
        ))
        .bind(hash_key(secret))
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(key_from_row).transpose()
    }

    /// The organization's keys. Playground keys are hidden unless asked for.
    pub async fn list_keys(
        &self,
        org_id: &str,
        include_playground: bool,
    ) -> StoreResult<Vec<ApiKey>> {
        let sql = if include_playground {
            format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE org_id = $1 ORDER BY created_at, id")
        } else {
            format!("SELECT {KEY_COLUMNS} FROM api_keys WHERE org_id = $1 AND kind = 'standard' ORDER BY created_at, id")
        };
        let rows = sqlx::query(&sql)
            .bind(org_id)
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(key_from_row).collect()
    }

    /// Revokes a key. Revoking twice is harmless.
    pub async fn revoke_key(&self, id: &str) -> StoreResult<ApiKey> {
        let key = self.get_key(id).await?;
        sqlx::query("UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
            .bind(now_ms())
            .bind(id)
            .execute(self.pool())
            .await?;
        self.audit(&key.org_id, Some(id), "key.revoked", &key.name)
            .await?;
        self.get_key(id).await
    }

    /// Issues a replacement with the same name and revokes the old key.
    pub async fn rotate_key(&self, id: &str) -> StoreResult<NewKey> {
        let old = self.get_key(id).await?;
        if old.kind == KeyKind::Playground {
            return Err(StoreError::Invalid(
                "playground keys are not rotated; mint a new one".into(),
            ));
        }
        if old.revoked_at.is_some() {
            return Err(StoreError::Invalid(format!("key {id} is already revoked")));
        }
        let spec = KeySpec {
            now: now_ms(),
            kind: KeyKind::Standard,
            person: None,
            expires_at: old.expires_at,
            budget: old.budget,
            rate: old.rate_limit_per_minute,
            concurrency: old.concurrency_limit,
        };
        let created = self
            .insert_key(&old.org_id, &old.name, &generate_key(), spec)
            .await?;
        sqlx::query("UPDATE api_keys SET revoked_at = $1, replaced_by = $2 WHERE id = $3 AND revoked_at IS NULL")
            .bind(now_ms())
            .bind(&created.key.id)
            .bind(id)
            .execute(self.pool())
            .await?;
        self.audit(
            &old.org_id,
            Some(id),
            "key.rotated",
            &format!("replaced by {}", created.key.id),
        )
        .await?;
        Ok(created)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_have_the_documented_shape() {
        let k = generate_key();
        assert!(looks_like_key(&k), "{k}");
        assert_ne!(generate_key(), k);
        assert!(!looks_like_key("wd_short"));
        assert!(!looks_like_key(&k.replace("wd_", "xx_")));
        assert_eq!(hash_key("abc").len(), 64);
    }
}

//! Blobs (screenshots) with an expiry, and the service's own settings
//! (such as the key that signs blob URLs), shared by every replica.

use super::{new_id, now_ms, Store, StoreResult};
use sqlx::Row;

/// A stored blob.
#[derive(Debug, Clone, PartialEq)]
pub struct Blob {
    pub content_type: String,
    pub data: Vec<u8>,
    pub expires_at: i64,
}

impl Store {
    /// Stores bytes for `ttl_ms`; returns the blob id.
    pub async fn put_blob(
        &self,
        org_id: &str,
        content_type: &str,
        data: &[u8],
        ttl_ms: i64,
    ) -> StoreResult<(String, i64)> {
        let id = new_id("blob");
        let now = now_ms();
        let expires = now + ttl_ms;
        sqlx::query("INSERT INTO blobs (id, org_id, content_type, data, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)")
            .bind(&id)
            .bind(org_id)
            .bind(content_type)
            .bind(data.to_vec())
            .bind(now)
            .bind(expires)
            .execute(self.pool())
            .await?;
        Ok((id, expires))
    }

    /// Stores bytes under a caller-chosen id (content-addressed copies);
    /// storing the same id again keeps the bytes and moves the expiry to
    /// the later of the two. Returns the expiry in force.
    pub async fn put_blob_at(
        &self,
        id: &str,
        org_id: &str,
        content_type: &str,
        data: &[u8],
        expires_at: i64,
    ) -> StoreResult<i64> {
        sqlx::query(
            "INSERT INTO blobs (id, org_id, content_type, data, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at WHERE blobs.expires_at < excluded.expires_at",
        )
        .bind(id)
        .bind(org_id)
        .bind(content_type)
        .bind(data.to_vec())
        .bind(now_ms())
        .bind(expires_at)
        .execute(self.pool())
        .await?;
        Ok(
            sqlx::query_scalar("SELECT expires_at FROM blobs WHERE id = $1")
                .bind(id)
                .fetch_one(self.pool())
                .await?,
        )
    }

    /// A blob that has not expired.
    pub async fn get_blob(&self, id: &str) -> StoreResult<Option<Blob>> {
        let row = sqlx::query(
            "SELECT content_type, data, expires_at FROM blobs WHERE id = $1 AND expires_at > $2",
        )
        .bind(id)
        .bind(now_ms())
        .fetch_optional(self.pool())
        .await?;
        row.map(|r| {
            Ok(Blob {
                content_type: r.try_get("content_type")?,
                data: r.try_get("data")?,
                expires_at: r.try_get("expires_at")?,
            })
        })
        .transpose()
    }

    /// Deletes expired blobs.
    pub async fn sweep_blobs(&self) -> StoreResult<u64> {
        Ok(sqlx::query("DELETE FROM blobs WHERE expires_at <= $1")
            .bind(now_ms())
            .execute(self.pool())
            .await?
            .rows_affected())
    }

    /// A setting, created with `make()` the first time (the same value on
    /// every replica: the first writer wins).
    pub async fn setting_or_init(
        &self,
        name: &str,
        make: impl FnOnce() -> String,
    ) -> StoreResult<String> {
        sqlx::query(
            "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        )
        .bind(name)
        .bind(make())
        .execute(self.pool())
        .await?;
        Ok(
            sqlx::query_scalar("SELECT value FROM settings WHERE name = $1")
                .bind(name)
                .fetch_one(self.pool())
                .await?,
        )
    }
}

//! The brand cache: one stored lookup per host. Every call takes `now_ms`
//! from the caller, so the ageing rules are tested with a chosen clock.

use super::{Store, StoreResult};
use sqlx::Row;

/// A cached brand lookup.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedBrand {
    /// The stored lookup as JSON (the API's own shape).
    pub brand: String,
    /// When the site was read (unix ms).
    pub fetched_at: i64,
}

impl CachedBrand {
    /// Age at `now_ms`.
    pub fn age_ms(&self, now_ms: i64) -> i64 {
        (now_ms - self.fetched_at).max(0)
    }
}

impl Store {
    /// The cached lookup for `host`, whatever its age.
    pub async fn brand_cache_get(&self, host: &str) -> StoreResult<Option<CachedBrand>> {
        let row = sqlx::query("SELECT brand, fetched_at FROM brand_cache WHERE host = $1")
            .bind(host)
            .fetch_optional(self.pool())
            .await?;
        row.map(|r| {
            Ok(CachedBrand {
                brand: r.try_get("brand")?,
                fetched_at: r.try_get("fetched_at")?,
            })
        })
        .transpose()
    }

    /// Stores (or replaces) the lookup for `host`, read at `fetched_at`.
    /// An older lookup never replaces a newer one (a slow background
    /// refresh racing a forced one).
    pub async fn brand_cache_put(
        &self,
        host: &str,
        brand: &str,
        fetched_at: i64,
    ) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO brand_cache (host, brand, fetched_at) VALUES ($1, $2, $3) \
             ON CONFLICT (host) DO UPDATE SET brand = excluded.brand, fetched_at = excluded.fetched_at \
             WHERE brand_cache.fetched_at <= excluded.fetched_at",
        )
        .bind(host)
        .bind(brand)
        .bind(fetched_at)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Deletes lookups read before `before_ms`.
    pub async fn brand_cache_sweep(&self, before_ms: i64) -> StoreResult<u64> {
        Ok(sqlx::query("DELETE FROM brand_cache WHERE fetched_at < $1")
            .bind(before_ms)
            .execute(self.pool())
            .await?
            .rows_affected())
    }
}

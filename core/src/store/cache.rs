//! The scrape cache: documents keyed by URL and output-changing options.

use super::{now_ms, Store, StoreResult};
use sqlx::Row;

/// A cached scrape.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedScrape {
    /// The Document as JSON.
    pub document: String,
    pub billable: bool,
    pub created_at: i64,
}

impl Store {
    /// The cached entry for `key` if it is younger than `max_age_ms`.
    pub async fn cache_get(&self, key: &str, max_age_ms: i64) -> StoreResult<Option<CachedScrape>> {
        if max_age_ms <= 0 {
            return Ok(None);
        }
        let row = sqlx::query(
            "SELECT document, billable, created_at FROM scrape_cache WHERE cache_key = $1 AND created_at > $2",
        )
        .bind(key)
        .bind(now_ms() - max_age_ms)
        .fetch_optional(self.pool())
        .await?;
        row.map(|r| {
            Ok(CachedScrape {
                document: r.try_get("document")?,
                billable: r.try_get::<i64, _>("billable")? != 0,
                created_at: r.try_get("created_at")?,
            })
        })
        .transpose()
    }

    /// Stores (or replaces) the entry for `key`.
    pub async fn cache_put(
        &self,
        key: &str,
        url: &str,
        document: &str,
        billable: bool,
    ) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO scrape_cache (cache_key, url, document, billable, created_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (cache_key) DO UPDATE SET url = excluded.url, document = excluded.document, \
             billable = excluded.billable, created_at = excluded.created_at",
        )
        .bind(key)
        .bind(url)
        .bind(document)
        .bind(billable as i64)
        .bind(now_ms())
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Deletes entries older than `older_than_ms`.
    pub async fn cache_sweep(&self, older_than_ms: i64) -> StoreResult<u64> {
        Ok(
            sqlx::query("DELETE FROM scrape_cache WHERE created_at < $1")
                .bind(now_ms() - older_than_ms)
                .execute(self.pool())
                .await?
                .rows_affected(),
        )
    }
}

//! A pool's backlog: the work the operator scales workers and browsers by.

use crate::store::{Store, StoreResult};
use sqlx::Row;

/// Work waiting in a pool: what the operator scales workers and browsers by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolBacklog {
    /// Admitted crawls not started yet (each needs a worker to seed it).
    pub queued_crawls: i64,
    /// Queued and leased URLs of the pool's running crawls.
    pub urls: i64,
    /// The part of `urls` whose crawls need a browser.
    pub render_urls: i64,
    /// Running crawls.
    pub running_crawls: i64,
}

impl Store {
    /// The work waiting in `pool`.
    pub async fn pool_backlog(&self, pool: &str) -> StoreResult<PoolBacklog> {
        let crawls = sqlx::query(
            "SELECT \
               CAST(COALESCE(SUM(CASE WHEN status = 'queued' AND admitted = 1 THEN 1 ELSE 0 END), 0) AS BIGINT) AS queued, \
               CAST(COALESCE(SUM(CASE WHEN status = 'running' THEN 1 ELSE 0 END), 0) AS BIGINT) AS running \
             FROM crawls WHERE pool = $1 AND status IN ('queued', 'running')",
        )
        .bind(pool)
        .fetch_one(self.pool())
        .await?;
        let urls = sqlx::query(
            "SELECT CAST(COUNT(*) AS BIGINT) AS urls, \
               CAST(COALESCE(SUM(CASE WHEN c.renders = 1 THEN 1 ELSE 0 END), 0) AS BIGINT) AS render_urls \
             FROM frontier f JOIN crawls c ON c.id = f.crawl_id \
             WHERE c.pool = $1 AND c.status = 'running' AND f.state IN ('queued', 'leased')",
        )
        .bind(pool)
        .fetch_one(self.pool())
        .await?;
        Ok(PoolBacklog {
            queued_crawls: crawls.try_get("queued")?,
            running_crawls: crawls.try_get("running")?,
            urls: urls.try_get("urls")?,
            render_urls: urls.try_get("render_urls")?,
        })
    }
}

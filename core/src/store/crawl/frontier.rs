//! The frontier: adding URLs, failing, releasing and seeding holds.

use super::row::{CrawlRow, Tx};
use super::state::UrlState;
use crate::store::{now_ms, Store, StoreError, StoreResult};
use sqlx::Row;

/// A URL to add to a crawl's frontier.
#[derive(Debug, Clone, PartialEq)]
pub struct NewUrl {
    /// The de-duplication key (normalised URL).
    pub key: String,
    pub url: String,
    pub depth: i64,
    /// `start`, `sitemap` or `link`.
    pub source: String,
}

/// A URL leased to a worker until `lease_until`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lease {
    pub crawl_id: String,
    pub key: String,
    pub url: String,
    pub depth: i64,
    pub attempts: i64,
    pub worker: String,
}

impl Store {
    /// Adds URLs to the frontier, ignoring ones already there and stopping
    /// at the crawl's page limit. Returns how many were added.
    pub async fn enqueue_urls(&self, crawl_id: &str, urls: &[NewUrl]) -> StoreResult<usize> {
        if urls.is_empty() {
            return Ok(0);
        }
        let mut tx = self.begin_write().await?;
        let Some(mut crawl) = self.lock_crawl(&mut tx, crawl_id).await? else {
            return Err(StoreError::NotFound(format!("crawl {crawl_id}")));
        };
        if crawl.is_finished() {
            return Ok(0);
        }
        let added = Self::enqueue_in_tx(&mut tx, &mut crawl, urls).await?;
        if added > 0 {
            sqlx::query("UPDATE crawls SET total = $1, updated_at = $2 WHERE id = $3")
                .bind(crawl.total)
                .bind(now_ms())
                .bind(crawl_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(added)
    }

    /// Adds the URLs `crawl` does not have yet, up to its page limit, and
    /// counts them in `crawl.total` (the caller writes the row).
    pub(super) async fn enqueue_in_tx(
        tx: &mut Tx,
        crawl: &mut CrawlRow,
        urls: &[NewUrl],
    ) -> StoreResult<usize> {
        let crawl_id = crawl.id.clone();
        let crawl_id = crawl_id.as_str();
        let mut room = (crawl.max_pages - crawl.total).max(0) as usize;
        let now = now_ms();
        // Batched: the URLs already in the frontier are read with one query
        // per 300 and the new ones inserted with one statement per 300 (a
        // page links to dozens of URLs, most of them already known).
        let mut seen = std::collections::HashSet::new();
        let unique: Vec<&NewUrl> = urls
            .iter()
            .filter(|u| seen.insert(u.key.as_str()))
            .collect();
        let mut fresh: Vec<&NewUrl> = Vec::new();
        // With room for every URL, the insert alone tells which were new
        // (conflicts are not counted): no read first.
        let ample = room >= unique.len();
        if ample {
            fresh = unique.clone();
        }
        for part in crate::store::shaped_chunks(&unique, 64) {
            if room == 0 || ample {
                break;
            }
            let marks = (0..part.len())
                .map(|i| format!("${}", i + 2))
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "SELECT url_key FROM frontier WHERE crawl_id = $1 AND url_key IN ({marks})"
            );
            let mut q = sqlx::query(&sql).bind(crawl_id);
            for u in part {
                q = q.bind(&u.key);
            }
            let known: std::collections::HashSet<String> = q
                .fetch_all(&mut **tx)
                .await?
                .iter()
                .map(|r| r.try_get::<String, _>("url_key"))
                .collect::<Result<_, _>>()?;
            for u in part {
                if room > 0 && !known.contains(&u.key) {
                    fresh.push(u);
                    room -= 1;
                }
            }
        }
        let mut added = 0usize;
        for part in crate::store::shaped_chunks(&fresh, 32) {
            let values = (0..part.len())
                .map(|i| {
                    let b = 3 + i * 4;
                    format!(
                        "($1, ${b}, ${}, ${}, ${}, 'queued', $2)",
                        b + 1,
                        b + 2,
                        b + 3
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "INSERT INTO frontier (crawl_id, url_key, url, depth, source, state, created_at) \
                 VALUES {values} ON CONFLICT (crawl_id, url_key) DO NOTHING"
            );
            let mut q = sqlx::query(&sql).bind(crawl_id).bind(now);
            for u in part {
                q = q.bind(&u.key).bind(&u.url).bind(u.depth).bind(&u.source);
            }
            added += q.execute(&mut **tx).await?.rows_affected() as usize;
        }
        crawl.total += added as i64;
        Ok(added)
    }

    /// A URL that failed with an error `code` (the API's error codes) and
    /// message: queued again after `retry_after_ms` when `retryable` and
    /// under `max_attempts`, else counted as failed.
    #[allow(clippy::too_many_arguments)]
    pub async fn fail_url(
        &self,
        lease: &Lease,
        code: &str,
        error: &str,
        retryable: bool,
        retry_after_ms: i64,
        max_attempts: i64,
    ) -> StoreResult<bool> {
        let mut tx = self.begin_write().await?;
        let now = now_ms();
        let attempts = lease.attempts + 1;
        let retry = retryable && attempts < max_attempts;
        let state = if retry {
            UrlState::Queued
        } else {
            UrlState::Failed
        };
        let changed = sqlx::query(
            "UPDATE frontier SET state = $1, attempts = $2, not_before = $3, lease_until = NULL, error = $4, error_code = $8 \
             WHERE crawl_id = $5 AND url_key = $6 AND state = 'leased' AND worker = $7",
        )
        .bind(state.as_str())
        .bind(attempts)
        .bind(now + retry_after_ms)
        .bind(error)
        .bind(&lease.crawl_id)
        .bind(&lease.key)
        .bind(&lease.worker)
        .bind(code)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed == 1 && !retry {
            sqlx::query("UPDATE crawls SET failed = failed + 1, updated_at = $1 WHERE id = $2")
                .bind(now)
                .bind(&lease.crawl_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(retry)
    }

    /// Gives a lease back untouched (worker shutting down).
    pub async fn release_lease(&self, lease: &Lease) -> StoreResult<()> {
        sqlx::query(
            "UPDATE frontier SET state = 'queued', lease_until = NULL, worker = NULL WHERE crawl_id = $1 AND url_key = $2 AND state = 'leased' AND worker = $3",
        )
        .bind(&lease.crawl_id)
        .bind(&lease.key)
        .bind(&lease.worker)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Puts a crawl's start URL in its frontier leased to `worker` (inside
    /// the caller's transaction; see [`Store::start_crawl_holding`]). If the
    /// seeding worker dies, the lease expires and the start URL is crawled
    /// by someone else. `None` when the crawl already has the URL.
    pub(super) async fn hold_in_tx(
        tx: &mut Tx,
        crawl_id: &str,
        url: &NewUrl,
        worker: &str,
        lease_ms: i64,
    ) -> StoreResult<Option<Lease>> {
        let now = now_ms();
        let added = sqlx::query(
            "INSERT INTO frontier (crawl_id, url_key, url, depth, source, state, lease_until, worker, created_at) \
             VALUES ($1, $2, $3, $4, $5, 'leased', $6, $7, $8) ON CONFLICT (crawl_id, url_key) DO NOTHING",
        )
        .bind(crawl_id)
        .bind(&url.key)
        .bind(&url.url)
        .bind(url.depth)
        .bind(&url.source)
        .bind(now + lease_ms)
        .bind(worker)
        .bind(now)
        .execute(&mut **tx)
        .await?
        .rows_affected();
        if added == 0 {
            return Ok(None);
        }
        sqlx::query("UPDATE crawls SET total = total + 1, updated_at = $1 WHERE id = $2")
            .bind(now)
            .bind(crawl_id)
            .execute(&mut **tx)
            .await?;
        Ok(Some(Lease {
            crawl_id: crawl_id.to_string(),
            key: url.key.clone(),
            url: url.url.clone(),
            depth: url.depth,
            attempts: 0,
            worker: worker.to_string(),
        }))
    }

    /// Ends a seeding hold: the start URL is queued for crawling (`keep`) or
    /// removed from the frontier and the count (`sitemap: only`).
    pub async fn end_seeding(&self, hold: &Lease, keep: bool) -> StoreResult<()> {
        if keep {
            return self.release_lease(hold).await;
        }
        let mut tx = self.begin_write().await?;
        let removed = sqlx::query(
            "DELETE FROM frontier WHERE crawl_id = $1 AND url_key = $2 AND state = 'leased' AND worker = $3",
        )
        .bind(&hold.crawl_id)
        .bind(&hold.key)
        .bind(&hold.worker)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if removed > 0 {
            sqlx::query("UPDATE crawls SET total = total - 1, updated_at = $1 WHERE id = $2")
                .bind(now_ms())
                .bind(&hold.crawl_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Seeds a crawl that resumes `from` (`resumeFrom`): the URLs `from`
    /// scraped or gave up on are carried over as known (`carried`: never
    /// fetched again, not counted), and the ones it left queued, leased or
    /// dropped are queued here, up to this crawl's page limit. Idempotent:
    /// runners that race to seed the same crawl add nothing twice. Returns
    /// how many URLs were queued.
    pub async fn carry_frontier(&self, crawl_id: &str, from: &str) -> StoreResult<usize> {
        let mut tx = self.begin_write().await?;
        let Some(mut crawl) = self.lock_crawl(&mut tx, crawl_id).await? else {
            return Err(StoreError::NotFound(format!("crawl {crawl_id}")));
        };
        if crawl.is_finished() {
            return Ok(0);
        }
        let now = now_ms();
        sqlx::query(
            "INSERT INTO frontier (crawl_id, url_key, url, depth, source, state, created_at) \
             SELECT $1, url_key, url, depth, source, 'carried', $3 FROM frontier \
             WHERE crawl_id = $2 AND state IN ('done', 'failed', 'carried') \
             ON CONFLICT (crawl_id, url_key) DO NOTHING",
        )
        .bind(crawl_id)
        .bind(from)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        let left: Vec<NewUrl> = sqlx::query(
            "SELECT url_key, url, depth, source FROM frontier \
             WHERE crawl_id = $1 AND state IN ('queued', 'leased', 'dropped') \
             ORDER BY depth, created_at, url_key",
        )
        .bind(from)
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|r| {
            Ok(NewUrl {
                key: r.try_get("url_key")?,
                url: r.try_get("url")?,
                depth: r.try_get("depth")?,
                source: r.try_get("source")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()?;
        let added = Self::enqueue_in_tx(&mut tx, &mut crawl, &left).await?;
        sqlx::query("UPDATE crawls SET total = $1, updated_at = $2 WHERE id = $3")
            .bind(crawl.total)
            .bind(now)
            .bind(crawl_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(added)
    }

    /// Whether `lease` is still this worker's: false once its crawl ended
    /// (a cancel drops leased URLs) or the lease expired and moved on. A
    /// page checks it right before its request starts.
    pub async fn lease_held(&self, lease: &Lease) -> StoreResult<bool> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM frontier WHERE crawl_id = $1 AND url_key = $2 \
             AND state = 'leased' AND worker = $3",
        )
        .bind(&lease.crawl_id)
        .bind(&lease.key)
        .bind(&lease.worker)
        .fetch_one(self.pool())
        .await?;
        Ok(n > 0)
    }

    /// URLs of a crawl still queued or leased.
    /// How a crawl's URL was found (`link`, `sitemap`, `start`, `memory`, …).
    pub async fn frontier_source(&self, crawl_id: &str, key: &str) -> StoreResult<Option<String>> {
        Ok(
            sqlx::query_scalar("SELECT source FROM frontier WHERE crawl_id = $1 AND url_key = $2")
                .bind(crawl_id)
                .bind(key)
                .fetch_optional(self.pool())
                .await?,
        )
    }

    pub async fn frontier_pending(&self, crawl_id: &str) -> StoreResult<i64> {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM frontier WHERE crawl_id = $1 AND state IN ('queued', 'leased')",
        )
        .bind(crawl_id)
        .fetch_one(self.pool())
        .await?)
    }
}

/// A URL of a crawl that failed for good.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FailedUrl {
    pub url: String,
    /// The API error code (`fetch_failed`, `timeout`, `blocked_url`, …).
    pub code: String,
    pub error: String,
    pub attempts: i64,
}

impl Store {
    /// The URLs of a crawl that failed for good, in the order they were found.
    pub async fn failed_urls(&self, crawl_id: &str, limit: i64) -> StoreResult<Vec<FailedUrl>> {
        use sqlx::Row;
        let rows = sqlx::query(
            "SELECT url, error_code, error, attempts FROM frontier WHERE crawl_id = $1 AND state = 'failed' ORDER BY created_at, url_key LIMIT $2",
        )
        .bind(crawl_id)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(FailedUrl {
                    url: r.try_get("url")?,
                    code: r
                        .try_get::<Option<String>, _>("error_code")?
                        .unwrap_or_else(|| "fetch_failed".into()),
                    error: r.try_get::<Option<String>, _>("error")?.unwrap_or_default(),
                    attempts: r.try_get("attempts")?,
                })
            })
            .collect()
    }

    /// Records that robots.txt kept `url` out of a crawl (once per URL).
    pub async fn note_robots_blocked(&self, crawl_id: &str, url: &str) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO crawl_robots_blocked (crawl_id, url, at) VALUES ($1, $2, $3) ON CONFLICT (crawl_id, url) DO NOTHING",
        )
        .bind(crawl_id)
        .bind(url)
        .bind(now_ms())
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The URLs robots.txt kept out of a crawl, in the order they were met.
    pub async fn robots_blocked(&self, crawl_id: &str, limit: i64) -> StoreResult<Vec<String>> {
        Ok(sqlx::query_scalar(
            "SELECT url FROM crawl_robots_blocked WHERE crawl_id = $1 ORDER BY at, url LIMIT $2",
        )
        .bind(crawl_id)
        .bind(limit)
        .fetch_all(self.pool())
        .await?)
    }
}

//! A crawl's life: created, admitted, started, errored, finished.

use super::row::{CrawlRow, Placement};
use super::state::CrawlStatus;
use crate::store::{new_id, now_ms, Store, StoreError, StoreResult};

impl Store {
    /// Creates a queued crawl and its ledger entry.
    pub async fn create_crawl(
        &self,
        id: &str,
        org_id: &str,
        key_id: Option<&str>,
        url: &str,
        request_json: &str,
        max_pages: i64,
    ) -> StoreResult<CrawlRow> {
        self.create_crawl_in(
            id,
            org_id,
            key_id,
            url,
            request_json,
            max_pages,
            &Placement::default(),
        )
        .await
    }

    /// Creates a queued crawl placed in a pool, and its ledger entry.
    #[allow(clippy::too_many_arguments)]
    pub async fn create_crawl_in(
        &self,
        id: &str,
        org_id: &str,
        key_id: Option<&str>,
        url: &str,
        request_json: &str,
        max_pages: i64,
        placement: &Placement,
    ) -> StoreResult<CrawlRow> {
        self.insert_crawl(
            id,
            org_id,
            key_id,
            url,
            request_json,
            max_pages,
            placement,
            None,
        )
        .await
    }

    /// Creates a queued batch scrape over `urls` (seeded by the workers),
    /// placed in a pool, and its ledger entry.
    #[allow(clippy::too_many_arguments)]
    pub async fn create_batch_in(
        &self,
        id: &str,
        org_id: &str,
        key_id: Option<&str>,
        urls: &[String],
        request_json: &str,
        placement: &Placement,
    ) -> StoreResult<CrawlRow> {
        let seeds = serde_json::to_string(urls).map_err(|e| StoreError::Invalid(e.to_string()))?;
        self.insert_crawl(
            id,
            org_id,
            key_id,
            urls.first().map(String::as_str).unwrap_or(""),
            request_json,
            urls.len() as i64,
            placement,
            Some(&seeds),
        )
        .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn insert_crawl(
        &self,
        id: &str,
        org_id: &str,
        key_id: Option<&str>,
        url: &str,
        request_json: &str,
        max_pages: i64,
        placement: &Placement,
        seed_urls: Option<&str>,
    ) -> StoreResult<CrawlRow> {
        let now = now_ms();
        let kind = if seed_urls.is_some() {
            "batch"
        } else {
            "crawl"
        };
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO crawls (id, org_id, key_id, status, url, request, max_pages, created_at, updated_at, pool, admitted, renders, launcher, kind, seed_urls) \
             VALUES ($1, $2, $3, 'queued', $4, $5, $6, $7, $7, $8, $9, $10, $11, $12, $13)",
        )
        .bind(id)
        .bind(org_id)
        .bind(key_id)
        .bind(url)
        .bind(request_json)
        .bind(max_pages)
        .bind(now)
        .bind(&placement.pool)
        .bind(placement.admitted as i64)
        .bind(placement.renders as i64)
        .bind(&placement.launcher)
        .bind(kind)
        .bind(seed_urls)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO credit_ledger (id, org_id, key_id, operation, reserved, settled, state, created_at) \
             VALUES ($1, $2, $3, $5, 0, 0, 'settled', $4)",
        )
        .bind(id)
        .bind(org_id)
        .bind(key_id)
        .bind(now)
        .bind(if seed_urls.is_some() { "batch_scrape" } else { "crawl" })
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.get_crawl(id)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("crawl {id}")))
    }

    /// Lets workers start a crawl that waited for the operator; false when
    /// it was already admitted or is gone.
    pub async fn admit_crawl(&self, id: &str) -> StoreResult<bool> {
        let mut tx = self.begin_write().await?;
        let n = sqlx::query(
            "UPDATE crawls SET admitted = 1, updated_at = $1 WHERE id = $2 AND admitted = 0",
        )
        .bind(now_ms())
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(n > 0)
    }

    /// queued → running, with the `started` event (its data the crawl's
    /// status JSON). False when the crawl was not queued (already started,
    /// cancelled or failed).
    pub async fn start_crawl(&self, id: &str) -> StoreResult<bool> {
        Ok(self.start_crawl_holding(id, None).await?.is_some())
    }

    /// [`Store::start_crawl`] that also puts `hold.0` (the start URL, or a
    /// batch's first URL) in the frontier leased to worker `hold.1` for
    /// `hold.2` ms, in the same transaction: the crawl is never running with
    /// an empty frontier, so another runner cannot see it drained and
    /// finish it empty while this one reads robots.txt and sitemaps.
    /// `None` when the crawl was not queued; else the hold taken (`None`
    /// inside when the URL was already there).
    pub async fn start_crawl_holding(
        &self,
        id: &str,
        hold: Option<(&super::NewUrl, &str, i64)>,
    ) -> StoreResult<Option<Option<super::Lease>>> {
        let mut tx = self.begin_write().await?;
        let now = now_ms();
        let moved = sqlx::query(
            "UPDATE crawls SET status = 'running', started_at = $1, updated_at = $1 WHERE id = $2 AND status = 'queued'",
        )
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if moved == 0 {
            return Ok(None);
        }
        let lease = match hold {
            Some((url, worker, lease_ms)) => {
                Self::hold_in_tx(&mut tx, id, url, worker, lease_ms).await?
            }
            None => None,
        };
        self.event_in_tx(&mut tx, id, "started").await?;
        tx.commit().await?;
        Ok(Some(lease))
    }

    /// Ends a crawl that is not finished yet: `completed`, `failed` or
    /// `cancelled`, with an optional error and the event of that name (its
    /// data the crawl's status JSON). Queued URLs are dropped at no cost.
    /// Returns false when it had already ended.
    pub async fn finish_crawl(
        &self,
        id: &str,
        final_status: CrawlStatus,
        error: Option<(&str, &str)>,
    ) -> StoreResult<bool> {
        let mut tx = self.begin_write().await?;
        let Some(crawl) = self.lock_crawl(&mut tx, id).await? else {
            return Err(StoreError::NotFound(format!("crawl {id}")));
        };
        if crawl.is_finished() {
            return Ok(false);
        }
        let now = now_ms();
        sqlx::query(
            "UPDATE crawls SET status = $1, finished_at = $2, updated_at = $2, \
             error_code = COALESCE($3, error_code), error_message = COALESCE($4, error_message) WHERE id = $5",
        )
        .bind(final_status.as_str())
        .bind(now)
        .bind(error.map(|e| e.0))
        .bind(error.map(|e| e.1))
        .bind(id)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE frontier SET state = 'dropped', lease_until = NULL WHERE crawl_id = $1 AND state IN ('queued', 'leased')",
        )
        .bind(id)
        .execute(&mut *tx)
        .await?;
        self.event_in_tx(&mut tx, id, final_status.as_str()).await?;
        tx.commit().await?;
        // No page comes after the end: its block counts are folded once, in
        // a transaction of its own (the crawl is reported finished without
        // waiting for it; a reader adds up rows still unfolded anyway).
        if let Err(e) = self.fold_blocks(id).await {
            tracing::warn!(crawl = id, error = %e, "folding the crawl's block counts failed");
        }
        Ok(true)
    }

    /// Records an error on a running crawl without ending it (it ends when
    /// its frontier drains), e.g. `spend_cap_reached` before the stop.
    pub async fn set_crawl_error(&self, id: &str, code: &str, message: &str) -> StoreResult<()> {
        sqlx::query(
            "UPDATE crawls SET error_code = $1, error_message = $2, updated_at = $3 WHERE id = $4",
        )
        .bind(code)
        .bind(message)
        .bind(now_ms())
        .bind(id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// A fresh crawl id.
    pub fn new_crawl_id() -> String {
        new_id("crawl")
    }

    /// A fresh batch scrape id.
    pub fn new_batch_id() -> String {
        new_id("batch")
    }
}
